#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"
#include "algos/simulator.hpp"

namespace lanes::algos {
namespace {

int ceil_log2(int p) {
  int r = 0;
  while ((1 << r) < p) ++r;
  return r;
}

bool rooted(Collective c) {
  return c == Collective::bcast || c == Collective::scatter || c == Collective::gather ||
         c == Collective::reduce;
}

// Reductions are simulated over 64-bit words: vectors of the same sizes in words, blocks
// (reduce_scatter_block, p of them per rank like alltoall's) rounded up to whole words.
std::size_t sized(const Algorithm& algo, std::size_t bytes) {
  if (algo.coll == Collective::reduce_scatter_block) return 8 * ((bytes + 7) / 8);
  return is_reduction(algo.coll) ? 8 * bytes : bytes;
}

// Nodes of sizes 3,1,4,1,5,9,2,6,... cut to p ranks.
Layout irregular(int p, int lanes) {
  static const int kSizes[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
  std::vector<int> sizes;
  int placed = 0;
  for (int i = 0; placed < p; ++i) {
    const int n = std::min(kSizes[i % 11], p - placed);
    sizes.push_back(n);
    placed += n;
  }
  return Layout::from_node_sizes(sizes, lanes);
}

// The per-collective test files sweep their algorithms in depth (every layout, k = 1..6); this
// generic sweep applies the same checks to every registered algorithm, so it stays lighter.
std::vector<Layout> layouts_for(int p) {
  std::vector<Layout> out;
  for (int lanes : {1, 3}) {
    for (int n : {1, 3, p}) out.push_back(Layout::blocks(p, n, lanes));
  }
  out.push_back(irregular(p, 2));
  return out;
}

// Every root up to 32 ranks, then the first, second, middle and last.
std::vector<int> roots_for(const Algorithm& algo, int p) {
  if (!rooted(algo.coll)) return {0};
  if (p <= 32) {
    std::vector<int> all(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) all[static_cast<std::size_t>(r)] = r;
    return all;
  }
  return {0, 1, p / 2, p - 1};
}

std::string what(const Algorithm& algo, const Layout& layout, int root, std::size_t bytes) {
  return std::string(to_string(algo.coll)) + " " + std::string(algo.name) + " on " +
         layout.describe() + ", root " + std::to_string(root) + ", " + std::to_string(bytes) +
         " bytes";
}

// Volume every correct schedule of these collectives moves at least, with one message per pair.
void check_totals(const Algorithm& algo, const Layout& layout, std::size_t bytes,
                  const SimResult& res) {
  const auto p = static_cast<std::size_t>(layout.size);
  if (algo.coll == Collective::barrier) return;  // tokens only: no data volume to bound
  if (bytes == 0) {
    EXPECT_EQ(res.bytes_moved, 0u);
    return;
  }
  if (algo.coll == Collective::alltoall || algo.coll == Collective::allgather) {
    EXPECT_GE(res.bytes_moved, p * (p - 1) * bytes);
  } else if (algo.coll != Collective::gather) {
    EXPECT_GE(res.bytes_moved, (p - 1) * bytes);
  }
  if (layout.num_nodes() == 1) {
    EXPECT_EQ(res.offnode_bytes, 0u);
  }
  if (layout.num_nodes() == layout.size) {
    EXPECT_EQ(res.offnode_bytes, res.bytes_moved);
  }
}

std::vector<const Algorithm*> every_algorithm() {
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : all_algorithms()) out.push_back(&a);
  return out;
}

class EveryAlgorithm : public ::testing::TestWithParam<const Algorithm*> {};

TEST_P(EveryAlgorithm, CorrectUpTo64Ranks) {  // p = 1..64
  const Algorithm& algo = *GetParam();
  int runs = 0;
  for (int p = 1; p <= 64; ++p) {
    for (const Layout& layout : layouts_for(p)) {
      if (algo.applicable != nullptr && !algo.applicable(layout)) continue;
      for (int root : roots_for(algo, p)) {
        for (std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{1027}}) {
          // reduce_scatter_block: the block size changes no step (see LargeSamples).
          if (algo.coll == Collective::reduce_scatter_block && n > 7) continue;
          const std::size_t bytes = sized(algo, n);
          const SimResult res = simulate(algo, layout, root, bytes);
          ++runs;
          if (!res.ok) {
            ADD_FAILURE() << what(algo, layout, root, bytes) << ": " << res.error;
            return;
          }
          check_totals(algo, layout, bytes, res);
        }
      }
    }
  }
  EXPECT_GT(runs, 0);
}

TEST_P(EveryAlgorithm, LargeSamples) {
  const Algorithm& algo = *GetParam();
  struct Sample {
    Layout layout;
    std::size_t bytes;
  };
  // Alltoall-like algorithms have p * (p - 1) messages: fewer samples at p = 1024.
  const std::vector<Sample> samples = {
      {Layout::blocks(256, 16, 2), 1},  {Layout::blocks(256, 16, 2), 7},
      {Layout::blocks(256, 1, 1), 7},   {irregular(256, 3), 1027},
      {Layout::blocks(1024, 16, 2), 7}, {irregular(1024, 3), 1},
  };
  for (const Sample& sample : samples) {
    const Layout& layout = sample.layout;
    if (algo.applicable != nullptr && !algo.applicable(layout)) continue;
    // A reduce-scatter rank's p - 1 steps reuse two scratch slots, and the race check compares
    // every pair of accesses to a slot: p^3 pairs in all; its samples beyond 64 ranks are in
    // unit/reduction_algorithms.
    if (algo.coll == Collective::reduce_scatter_block) continue;
    const int p = layout.size;
    for (int root : {0, 1, p / 3, p - 1}) {
      if (!rooted(algo.coll) && root != 0) continue;
      const std::size_t bytes = sized(algo, sample.bytes);
      const SimResult res = simulate(algo, layout, root, bytes);
      ASSERT_TRUE(res.ok) << what(algo, layout, root, bytes) << ": " << res.error;
      check_totals(algo, layout, bytes, res);
    }
  }
}

std::string algorithm_test_name(const ::testing::TestParamInfo<const Algorithm*>& p) {
  std::string name = std::string(to_string(p.param->coll)) + "_" + std::string(p.param->name);
  for (char& ch : name) {
    if (ch == '-') ch = '_';  // "scatter-ring" -> "scatter_ring": gtest names are identifiers
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryAlgorithm, ::testing::ValuesIn(every_algorithm()),
                         algorithm_test_name);

TEST(Registry, HoldsTheCatalogue) {
  const std::vector<std::pair<Collective, std::vector<std::string>>> catalogue = {
      {Collective::bcast,
       {"binomial", "kported", "scatter-allgather", "scatter-ring", "scatter-ring-bwsave",
        "hierarchical", "full-lane", "k-lane", "pipeline"}},
      {Collective::scatter, {"linear", "binomial", "kported", "full-lane", "k-lane"}},
      {Collective::gather, {"linear", "binomial"}},
      {Collective::alltoall, {"pairwise", "kported", "bruck", "full-lane", "k-lane", "windowed"}},
      {Collective::allgather, {"linear", "ring", "recursive-doubling", "bruck", "node-aware"}},
      {Collective::reduce,
       {"binomial", "full-lane", "linear", "chain", "binary", "in-order-binary", "rabenseifner",
        "hierarchical-linear", "hierarchical-chain", "hierarchical-binary", "hierarchical-binomial",
        "hierarchical-in-order-binary", "hierarchical-rabenseifner"}},
      {Collective::allreduce,
       {"recursive-doubling", "ring", "full-lane", "rabenseifner", "reduce-bcast", "hierarchical"}},
      {Collective::barrier, {"dissemination"}},
      {Collective::reduce_scatter_block, {"ring", "pairwise", "recursive-halving"}},
  };
  // Every algorithm of the catalogue is there; more may join (one line in algorithms.def).
  for (const auto& [coll, names] : catalogue) {
    for (const auto& name : names) {
      const Algorithm* a = find_algorithm(coll, name);
      ASSERT_NE(a, nullptr) << to_string(coll) << " " << name;
      EXPECT_EQ(a->coll, coll);
    }
  }
  // Every entry is complete, and its name is unique within its collective.
  for (const Algorithm& a : all_algorithms()) {
    EXPECT_NE(a.build, nullptr) << a.name;
    EXPECT_NE(a.cost, nullptr) << a.name;
    EXPECT_FALSE(a.summary.empty()) << a.name;
    EXPECT_EQ(find_algorithm(a.coll, a.name), &a) << to_string(a.coll) << " " << a.name;
  }
  EXPECT_EQ(find_algorithm(Collective::bcast, "binomial")->build, &build_bcast_binomial);
  EXPECT_EQ(find_algorithm(Collective::alltoall, "binomial"), nullptr);
  EXPECT_EQ(find_algorithm(Collective::bcast, "nonesuch"), nullptr);
  EXPECT_NE(algorithm_names(Collective::alltoall).find("pairwise"), std::string::npos);
}

TEST(Names, CollectivesAndBuffers) {
  EXPECT_STREQ(to_string(Collective::bcast), "bcast");
  EXPECT_STREQ(to_string(Collective::scatter), "scatter");
  EXPECT_STREQ(to_string(Collective::alltoall), "alltoall");
  EXPECT_STREQ(to_string(Collective::allgather), "allgather");
  EXPECT_STREQ(to_string(Collective::gather), "gather");
  EXPECT_STREQ(to_string(Collective::reduce), "reduce");
  EXPECT_STREQ(to_string(Collective::allreduce), "allreduce");
  EXPECT_STREQ(to_string(Collective::barrier), "barrier");
  EXPECT_STREQ(to_string(Buffer::send), "send");
  EXPECT_STREQ(to_string(Buffer::recv), "recv");
  EXPECT_STREQ(to_string(Buffer::scratch), "scratch");
}

TEST(BcastBinomial, RoundsAreCeilLog2) {
  const Algorithm& algo = *find_algorithm(Collective::bcast, "binomial");
  for (int p : {1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 100, 256, 1000, 1024}) {
    const Layout layout = Layout::blocks(p, 4, 2);
    for (int root : {0, p / 2, p - 1}) {
      const SimResult res = simulate(algo, layout, root, 8);
      ASSERT_TRUE(res.ok) << res.error;
      EXPECT_EQ(res.max_rounds, ceil_log2(p)) << "p " << p;
      EXPECT_EQ(res.messages, static_cast<std::size_t>(p - 1));
      EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(p - 1) * 8);
    }
  }
}

TEST(BcastBinomial, TreeShape) {
  const Layout layout = Layout::blocks(8, 4, 2);
  // Root 2: relative rank 1 is rank 3 and receives from the root in the last round.
  const Schedule root = build_bcast_binomial(layout, {Collective::bcast, 2, 2, 16});
  ASSERT_EQ(root.ops.size(), 3u);
  EXPECT_EQ(root.ops[0].peer, 6);  // vr 4: largest subtree first
  EXPECT_EQ(root.ops[0].round, 0);
  EXPECT_EQ(root.ops[1].peer, 4);
  EXPECT_EQ(root.ops[2].peer, 3);
  EXPECT_EQ(root.ops[2].round, 2);
  // The root is its node's only rank off the node in round 0: both lanes.
  EXPECT_EQ(root.ops[0].lanes, LaneSet::first(2));
  const Schedule leaf = build_bcast_binomial(layout, {Collective::bcast, 3, 2, 16});
  ASSERT_EQ(leaf.ops.size(), 1u);
  EXPECT_EQ(leaf.ops[0].kind, OpKind::recv);
  EXPECT_EQ(leaf.ops[0].peer, 2);
  EXPECT_EQ(leaf.ops[0].lanes, root.ops[2].lanes);  // the lanes its send names
  EXPECT_EQ(leaf.rounds, 3);
  EXPECT_TRUE(build_bcast_binomial(layout, {Collective::bcast, 3, 2, 0}).ops.empty());
  EXPECT_TRUE(
      build_bcast_binomial(Layout::blocks(1, 1, 1), {Collective::bcast, 0, 0, 9}).ops.empty());
}

TEST(ScatterBinomial, WrappingSubtreeGoesAsTwoMessages) {
  // p = 6, root 4: the root's first child is relative rank 4 (rank 2), subtree {4,5} -> ranks 2,3;
  // its second child is relative rank 2 (rank 0), subtree {2,3} -> ranks 0,1; the third is
  // relative rank 1 (rank 5). Relative 0..1 of the root's range is ranks 4,5: no wrap there;
  // with root 5 the child at relative 2 has ranks 1,2 and the one at relative 4 has ranks 3,4.
  const Layout layout = Layout::blocks(6, 2, 1);
  const std::size_t b = 10;
  // Root 3: child relative 4 -> ranks 1,2 (no wrap); relative 2 -> ranks 5,0 (wraps).
  const Schedule root = build_scatter_binomial(layout, {Collective::scatter, 3, 3, b});
  std::vector<Region> to_rank5;
  for (const Op& op : root.ops) {
    if (op.kind == OpKind::send && op.peer == 5) to_rank5.push_back(op.src);
  }
  ASSERT_EQ(to_rank5.size(), 2u);
  EXPECT_EQ(to_rank5[0], (Region{Buffer::send, 5 * b, b}));
  EXPECT_EQ(to_rank5[1], (Region{Buffer::send, 0, b}));
  EXPECT_EQ(root.sends_to(5), 2u);
  const Schedule mid = build_scatter_binomial(layout, {Collective::scatter, 5, 3, b});
  EXPECT_EQ(mid.recvs_from(3), 2u);
  EXPECT_EQ(mid.scratch_bytes, 2 * b);
  const SimResult res = simulate_schedules(Collective::scatter, layout, 3, b, [&] {
    std::vector<Schedule> all;
    for (int r = 0; r < 6; ++r)
      all.push_back(build_scatter_binomial(layout, {Collective::scatter, r, 3, b}));
    return all;
  }());
  EXPECT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.max_rounds, 3);
  // Leaves receive straight into the receive buffer and need no scratch.
  const Schedule leaf = build_scatter_binomial(layout, {Collective::scatter, 4, 3, b});
  ASSERT_EQ(leaf.ops.size(), 1u);
  EXPECT_EQ(leaf.ops[0].dst, (Region{Buffer::recv, 0, b}));
  EXPECT_EQ(leaf.scratch_bytes, 0u);
}

TEST(ScatterBinomial, SizeOneCopiesOwnBlock) {
  const Schedule s =
      build_scatter_binomial(Layout::blocks(1, 1, 1), {Collective::scatter, 0, 0, 5});
  ASSERT_EQ(s.ops.size(), 1u);
  EXPECT_EQ(s.ops[0].kind, OpKind::copy);
  EXPECT_EQ(s.ops[0].src, (Region{Buffer::send, 0, 5}));
  EXPECT_EQ(s.ops[0].dst, (Region{Buffer::recv, 0, 5}));
}

TEST(AlltoallPairwise, StepsAreChained) {
  const Layout layout = Layout::blocks(5, 2, 2);
  const Schedule s = build_alltoall_pairwise(layout, {Collective::alltoall, 1, 0, 3});
  ASSERT_EQ(s.ops.size(), 1u + 2 * 4);
  EXPECT_EQ(s.rounds, 4);
  EXPECT_EQ(s.ops[1].peer, 2);
  EXPECT_EQ(s.ops[2].peer, 0);
  EXPECT_EQ(s.ops[2].lanes, layout.lanes_of[0]);
  EXPECT_EQ(s.ops[3].deps, (std::vector<OpId>{1, 2}));
  EXPECT_EQ(s.ops[4].deps, (std::vector<OpId>{1, 2}));
  const SimResult res = simulate(*find_algorithm(Collective::alltoall, "pairwise"), layout, 0, 3);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.messages, 20u);
  EXPECT_EQ(res.bytes_moved, 60u);
}

TEST(Schedule, FinalizeNumbersMessagesPerPeerAndDirection) {
  Schedule s;
  s.send(3, LaneSet::one(0), {Buffer::recv, 0, 4});
  s.recv(3, LaneSet::one(0), {Buffer::recv, 0, 4});
  s.send(3, LaneSet::one(0), {Buffer::recv, 4, 4});
  s.send(1, LaneSet::one(0), {Buffer::recv, 0, 4});
  const OpId c = s.copy({Buffer::send, 0, 4}, {Buffer::recv, 0, 4}, {0, 1});
  s.recv(3, LaneSet::one(0), {Buffer::recv, 8, 4}, {c}, 2);
  s.finalize();
  EXPECT_EQ(c, 4u);
  EXPECT_EQ(s.ops[0].msg, 0u);
  EXPECT_EQ(s.ops[1].msg, 0u);
  EXPECT_EQ(s.ops[2].msg, 1u);
  EXPECT_EQ(s.ops[3].msg, 0u);
  EXPECT_EQ(s.ops[5].msg, 1u);
  EXPECT_EQ(s.ops[5].round, 2);
  EXPECT_EQ(s.sends_to(3), 2u);
  EXPECT_EQ(s.sends_to(1), 1u);
  EXPECT_EQ(s.sends_to(0), 0u);
  EXPECT_EQ(s.recvs_from(3), 2u);
  EXPECT_EQ(s.recvs_from(1), 0u);
  const std::string text = s.dump();
  EXPECT_NE(text.find("6 ops"), std::string::npos) << text;
  EXPECT_NE(text.find("#2 send -> 3 recv[4,+4) lane 0 msg 1"), std::string::npos) << text;
  EXPECT_NE(text.find("#4 copy send[0,+4) -> recv[0,+4) after #0,#1"), std::string::npos) << text;
  EXPECT_NE(text.find("#5 recv <- 3 recv[8,+4) lane 0 msg 1 round 2 after #4"), std::string::npos)
      << text;
}

// Hand-built schedules the simulator must reject.
class Broken : public ::testing::Test {
 protected:
  static constexpr std::size_t kBytes = 8;
  const Layout layout_ = Layout::blocks(2, 1, 2);  // two nodes; rank 1 also drives lane 0
  std::vector<Schedule> s_ = std::vector<Schedule>(2);

  SimResult run(Collective coll, int root = 0) {
    for (Schedule& s : s_) s.finalize();
    return simulate_schedules(coll, layout_, root, kBytes, s_);
  }
  static void expect_error(const SimResult& res, const std::string& part) {
    EXPECT_FALSE(res.ok);
    EXPECT_NE(res.error.find(part), std::string::npos) << res.error;
  }
  static Region block(Buffer b, int j) { return {b, j * kBytes, kBytes}; }
};

TEST_F(Broken, CorrectHandBuiltSchedulesPass) {
  // Allgather of two ranks, each posting both directions at once.
  for (int r = 0; r < 2; ++r) {
    s_[r].copy(block(Buffer::send, 0), block(Buffer::recv, r));
    s_[r].send(1 - r, LaneSet::one(0), block(Buffer::send, 0));
    s_[r].recv(1 - r, LaneSet::one(0), block(Buffer::recv, 1 - r));
  }
  const SimResult res = run(Collective::allgather);
  EXPECT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.messages, 2u);
  EXPECT_EQ(res.bytes_moved, 2 * kBytes);
  EXPECT_EQ(res.offnode_bytes, 2 * kBytes);
}

TEST_F(Broken, MissingRecv) {
  s_[0].send(1, LaneSet::one(0), block(Buffer::recv, 0));
  expect_error(run(Collective::bcast), "rank 0 op 0: send to 1");
  expect_error(run(Collective::bcast), "has no matching recv at rank 1");
}

TEST_F(Broken, MissingSend) {
  s_[0].send(1, LaneSet::one(0), block(Buffer::recv, 0));
  s_[1].recv(0, LaneSet::one(0), block(Buffer::recv, 0));
  s_[1].recv(0, LaneSet::one(0), block(Buffer::recv, 0));
  expect_error(run(Collective::bcast), "rank 1 op 1: recv from 0 (msg 1");
  expect_error(run(Collective::bcast), "has no matching send");
}

TEST_F(Broken, SizeMismatch) {
  s_[0].send(1, LaneSet::one(0), block(Buffer::recv, 0));
  s_[1].recv(0, LaneSet::one(0), {Buffer::recv, 0, kBytes - 1});
  expect_error(run(Collective::bcast), "sends 8 bytes but its recv (rank 1 op 0) expects 7");
}

TEST_F(Broken, LaneMismatch) {
  s_[0].send(1, LaneSet::one(0), block(Buffer::recv, 0));
  s_[1].recv(0, LaneSet::one(1), block(Buffer::recv, 0));
  expect_error(run(Collective::bcast), "uses lanes 0 but its recv (rank 1 op 0) uses lanes 1");
}

TEST_F(Broken, WrongSourceOffset) {
  // Scatter of two ranks: the root sends its own block 0 to rank 1 instead of block 1.
  s_[0].copy(block(Buffer::send, 0), block(Buffer::recv, 0));
  s_[0].send(1, LaneSet::one(0), block(Buffer::send, 0));
  s_[1].recv(0, LaneSet::one(0), block(Buffer::recv, 0));
  expect_error(run(Collective::scatter), "rank 1: recv byte 0 is");
  expect_error(run(Collective::scatter), "byte 8 of rank 0's input; last written by op 0");
}

TEST_F(Broken, WrongDestinationOffset) {
  // Allgather of three ranks where rank 0 stores the blocks of ranks 1 and 2 swapped.
  const Layout three = Layout::blocks(3, 2, 1);
  std::vector<Schedule> s(3);
  for (int r = 0; r < 3; ++r) {
    s[r].copy(block(Buffer::send, 0), block(Buffer::recv, r));
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == r) continue;
      s[r].send(peer, LaneSet::one(0), block(Buffer::send, 0));
      const int slot = r == 0 ? 3 - peer : peer;
      s[r].recv(peer, LaneSet::one(0), block(Buffer::recv, slot));
    }
    s[r].finalize();
  }
  const SimResult res = simulate_schedules(Collective::allgather, three, 0, kBytes, s);
  expect_error(res, "rank 0: recv byte 8 is");
  expect_error(res, "byte 0 of rank 1's input; last written by op 4 (recv from 2");
}

TEST_F(Broken, RecvOverwritesOwnBlock) {
  for (int r = 0; r < 2; ++r) {
    s_[r].copy(block(Buffer::send, 0), block(Buffer::recv, r));
    s_[r].send(1 - r, LaneSet::one(0), block(Buffer::send, 0));
  }
  s_[0].recv(1, LaneSet::one(0), block(Buffer::recv, 1));
  s_[1].recv(0, LaneSet::one(0),
             block(Buffer::recv, 1));  // should be block 0; races with its own copy
  expect_error(run(Collective::allgather), "rank 1 op 2: recv from 0");
  expect_error(run(Collective::allgather), "races with op 0");
}

TEST_F(Broken, GatherHandBuilt) {
  // Gather is not registered yet, but the simulator knows its definition.
  s_[0].copy(block(Buffer::send, 0), block(Buffer::recv, 0));
  s_[0].recv(1, LaneSet::one(1), block(Buffer::recv, 1));
  s_[1].send(0, LaneSet::one(1), block(Buffer::send, 0));
  SimResult res = run(Collective::gather);
  EXPECT_TRUE(res.ok) << res.error;
  s_[0].ops[1].dst = block(Buffer::recv, 0);
  s_[0].ops[1].deps = {0};
  expect_error(run(Collective::gather), "rank 0: recv byte 0 is");
}

TEST_F(Broken, NeverWrittenOutput) {
  s_[0].copy(block(Buffer::send, 0), block(Buffer::recv, 0));
  expect_error(run(Collective::scatter), "rank 1: recv byte 0");
  expect_error(run(Collective::scatter), "no op writes it");
}

TEST_F(Broken, DeadlockBothReceiveFirst) {
  for (int r = 0; r < 2; ++r) {
    s_[r].copy(block(Buffer::send, 0), block(Buffer::recv, r));
    const OpId in = s_[r].recv(1 - r, LaneSet::one(0), block(Buffer::recv, 1 - r));
    s_[r].send(1 - r, LaneSet::one(0), block(Buffer::send, 0), {in});
  }
  const SimResult res = run(Collective::allgather);
  expect_error(res, "deadlock");
  expect_error(res, "rank 0 op 1: recv from 1");
  expect_error(res, "rank 1 op 1: recv from 0");
  expect_error(res, "stuck ranks 0,1");
}

TEST_F(Broken, RegionOutsideBuffer) {
  s_[0].send(1, LaneSet::one(0), {Buffer::recv, 1, kBytes});
  s_[1].recv(0, LaneSet::one(0), {Buffer::recv, 1, kBytes});
  expect_error(run(Collective::bcast),
               "rank 0 op 0: source recv[1,+8) lies outside the recv buffer");
}

TEST_F(Broken, SendBufferOfNonRootIsEmpty) {
  s_[1].copy(block(Buffer::send, 0), block(Buffer::recv, 0));
  expect_error(run(Collective::scatter), "rank 1 op 0: source send[0,+8) lies outside");
}

TEST_F(Broken, ScratchBeyondDeclaredSize) {
  s_[0].scratch_bytes = kBytes - 1;
  s_[0].copy(block(Buffer::recv, 0), block(Buffer::scratch, 0));
  expect_error(run(Collective::bcast), "outside the scratch buffer of 7 bytes");
}

TEST_F(Broken, WriteIntoSendBuffer) {
  s_[0].copy(block(Buffer::recv, 0), {Buffer::send, 0, 4});
  expect_error(run(Collective::scatter), "writes into the send buffer");
}

TEST_F(Broken, DependencyOnLaterOp) {
  s_[0].copy(block(Buffer::send, 0), block(Buffer::recv, 0), {1});
  s_[0].copy(block(Buffer::send, 1), block(Buffer::scratch, 0));
  s_[0].scratch_bytes = kBytes;
  expect_error(run(Collective::scatter), "rank 0 op 0: depends on op 1");
}

TEST_F(Broken, NotFinalized) {
  s_[0].send(1, LaneSet::one(0), block(Buffer::recv, 0));
  s_[0].send(1, LaneSet::one(0), block(Buffer::recv, 0));
  s_[1].recv(0, LaneSet::one(0), block(Buffer::recv, 0));
  s_[1].recv(0, LaneSet::one(0), block(Buffer::recv, 0));
  expect_error(simulate_schedules(Collective::bcast, layout_, 0, kBytes, s_),
               "rank 0 op 1: send to 1 (msg 0, recv[0,+8)): message number should be 1");
}

TEST_F(Broken, MessageToSelfAndBadPeer) {
  s_[0].send(0, LaneSet::one(0), block(Buffer::recv, 0));
  expect_error(run(Collective::bcast), "message to itself");
  s_[0].ops[0].peer = 2;
  expect_error(run(Collective::bcast), "peer outside 0..1");
}

TEST_F(Broken, LaneOutsideLayout) {
  s_[0].send(1, LaneSet::one(2), block(Buffer::recv, 0));
  s_[1].recv(0, LaneSet::one(2), block(Buffer::recv, 0));
  expect_error(run(Collective::bcast), "lanes 2 but the layout has 2");
}

TEST_F(Broken, SendsOnlyOverDrivenLanes) {
  // A broadcast on two nodes of two ranks, two lanes (each rank drives one): rank 0 sends to 1
  // on the node and to 2 over `lanes` in round 0; rank 1 forwards to 3 in round `round1`.
  const Layout layout = Layout::blocks(4, 2, 2);
  const auto run_with = [&](LaneSet lanes, int round1) {
    std::vector<Schedule> s(4);
    for (Schedule& x : s) x.rounds = 2;
    const Region data = block(Buffer::recv, 0);
    s[0].send(2, lanes, data, {}, 0);
    s[0].send(1, layout.lanes_of[0], data, {}, 0);
    s[2].recv(0, lanes, data, {}, 0);
    const OpId got = s[1].recv(0, layout.lanes_of[0], data, {}, 0);
    s[1].send(3, layout.lanes_of[1], data, {got}, round1);
    s[3].recv(1, layout.lanes_of[1], data, {}, round1);
    for (Schedule& x : s) x.finalize();
    return simulate_schedules(Collective::bcast, layout, 0, kBytes, s);
  };
  EXPECT_TRUE(run_with(LaneSet::one(0), 0).ok) << run_with(LaneSet::one(0), 0).error;
  // Rank 0 is its node's only sender off the node in round 0: it may use both lanes.
  EXPECT_TRUE(run_with(LaneSet::first(2), 1).ok) << run_with(LaneSet::first(2), 1).error;
  // Not while rank 1 sends off the node in the same round.
  expect_error(run_with(LaneSet::first(2), 0), "uses lanes 0,1, but rank 0 drives lanes 0");
  expect_error(run_with(LaneSet::one(1), 0),
               "is not its node's only sender off the node in round 0");
}

TEST_F(Broken, RoundBeyondClaim) {
  s_[0].rounds = 1;
  s_[1].rounds = 1;
  s_[0].send(1, LaneSet::one(0), block(Buffer::recv, 0), {}, 1);
  s_[1].recv(0, LaneSet::one(0), block(Buffer::recv, 0), {}, 0);
  expect_error(run(Collective::bcast), "round 1 but the schedule claims 1 rounds");
}

TEST_F(Broken, RaceBetweenRecvAndForwardingSend) {
  // Three ranks in a chain, the middle one forwards without waiting for its receive.
  const Layout chain = Layout::blocks(3, 1, 1);
  std::vector<Schedule> s(3);
  s[0].send(1, LaneSet::one(0), block(Buffer::recv, 0));
  s[1].recv(0, LaneSet::one(0), block(Buffer::recv, 0));
  s[1].send(2, LaneSet::one(0), block(Buffer::recv, 0));
  s[2].recv(1, LaneSet::one(0), block(Buffer::recv, 0));
  for (Schedule& x : s) x.finalize();
  expect_error(simulate_schedules(Collective::bcast, chain, 0, kBytes, s),
               "rank 1 op 1: send to 2 (msg 0, recv[0,+8)) races with op 0");
  s[1].ops[1].deps = {0};
  const SimResult res = simulate_schedules(Collective::bcast, chain, 0, kBytes, s);
  EXPECT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.messages, 2u);
}

TEST_F(Broken, OverlappingCopy) {
  s_[0].scratch_bytes = 2 * kBytes;
  s_[0].copy({Buffer::scratch, 0, kBytes}, {Buffer::scratch, 4, kBytes});
  expect_error(run(Collective::bcast), "overlaps destination");
}

TEST_F(Broken, WrongScheduleCountAndRoot) {
  std::vector<Schedule> one(1);
  expect_error(simulate_schedules(Collective::bcast, layout_, 0, kBytes, one), "1 schedules for 2");
  expect_error(simulate_schedules(Collective::bcast, layout_, 2, kBytes, s_), "root 2 outside");
  expect_error(simulate(*find_algorithm(Collective::bcast, "binomial"), layout_, -1, kBytes),
               "root -1 outside");
}

}  // namespace
}  // namespace lanes::algos

// node_send_order: the rule the executor's single-copy hint and the shared-core model share.
TEST(NodeSendOrder, TellsExchangesFromRelaysAndRoots) {
  using lanes::algos::Collective;
  const lanes::algos::Layout node = lanes::algos::Layout::blocks(4, 4, 1);
  const auto order = [&](Collective c, const char* name, int rank) {
    lanes::algos::CollArgs args;
    args.coll = c;
    args.rank = rank;
    args.bytes = 4096;
    lanes::algos::Schedule s = lanes::algos::find_algorithm(c, name)->build(node, args);
    s.finalize();
    return lanes::algos::node_send_order(s, node, rank);
  };
  // An alltoall's ranks send everything before they receive.
  EXPECT_TRUE(order(Collective::alltoall, "k-lane", 1).sends_before_receiving());
  // Recursive doubling's second round sends what the first received.
  const auto doubling = order(Collective::allgather, "recursive-doubling", 1);
  EXPECT_TRUE(doubling.free_send);
  EXPECT_TRUE(doubling.gated_send);
  EXPECT_FALSE(doubling.sends_before_receiving());
  // A broadcast root only sends; a leaf only receives.
  const auto root = order(Collective::bcast, "binomial", 0);
  EXPECT_TRUE(root.free_send);
  EXPECT_FALSE(root.receives);
  const auto leaf = order(Collective::bcast, "binomial", 3);
  EXPECT_TRUE(leaf.receives);
  EXPECT_FALSE(leaf.free_send || leaf.gated_send);
  // Off the node nothing counts.
  const lanes::algos::Layout apart = lanes::algos::Layout::blocks(4, 1, 1);
  lanes::algos::CollArgs args;
  args.coll = Collective::alltoall;
  args.rank = 1;
  args.bytes = 4096;
  lanes::algos::Schedule s =
      lanes::algos::find_algorithm(Collective::alltoall, "k-lane")->build(apart, args);
  s.finalize();
  const auto off = lanes::algos::node_send_order(s, apart, 1);
  EXPECT_FALSE(off.free_send || off.gated_send || off.receives);
}
