// Alltoall (kported, bruck, full-lane, k-lane, windowed) and allgather (ring, recursive-doubling,
// bruck, node-aware) schedules: correctness through the simulator over many layouts, lane counts
// and block sizes, the round counts their descriptions claim, and their communication structure.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"
#include "algos/simulator.hpp"
#include "lanes/error.hpp"

namespace lanes::algos {
namespace {

int ceil_log2(int p) {
  int r = 0;
  while ((1 << r) < p) ++r;
  return r;
}

int floor_log2(int x) {
  int r = 0;
  while ((x >> (r + 1)) > 0) ++r;
  return r;
}

const Algorithm& algo(Collective coll, const char* name) {
  const Algorithm* a = find_algorithm(coll, name);
  if (a == nullptr) throw Error(Errc::internal, std::string("missing algorithm ") + name);
  return *a;
}

// Node sizes cycling through 1..8 in a mixed order, cut to p ranks.
Layout mixed(int p, int lanes) {
  static const int kSizes[] = {5, 1, 8, 3, 2, 7, 4, 6};
  std::vector<int> sizes;
  for (int i = 0, placed = 0; placed < p; ++i) {
    sizes.push_back(std::min(kSizes[i % 8], p - placed));
    placed += sizes.back();
  }
  return Layout::from_node_sizes(sizes, lanes);
}

// Nodes whose ranks are not consecutive: rank r on node r mod nodes.
Layout interleaved(int p, int nodes, int lanes) {
  std::vector<int> labels(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) labels[static_cast<std::size_t>(r)] = r % nodes;
  return Layout::from_node_labels(labels, lanes);
}

std::vector<Layout> layouts_for(int p, int lanes) {
  std::vector<Layout> out;
  std::set<int> sizes = {1, 2, 3, 4, p};
  for (int n : sizes) out.push_back(Layout::blocks(p, n, lanes));
  out.push_back(mixed(p, lanes));
  if (p % 3 == 0 && p > 3) out.push_back(interleaved(p, 3, lanes));
  if (p % 2 == 0 && p > 2) out.push_back(interleaved(p, p / 2, lanes));
  return out;
}

std::string what(const Algorithm& a, const Layout& layout, std::size_t bytes) {
  return std::string(to_string(a.coll)) + " " + std::string(a.name) + " on " + layout.describe() +
         ", " + std::to_string(bytes) + " bytes";
}

// Rounds an algorithm claims for a layout (p > 1, bytes > 0).
using RoundsFn = std::function<int(const Layout&)>;

int node_size(const Layout& layout) {
  return static_cast<int>(layout.node_ranks[0].size());
}

const RoundsFn kKportedRounds = [](const Layout& l) {
  return (l.size - 1 + l.num_lanes - 1) / l.num_lanes;
};
const RoundsFn kLogRounds = [](const Layout& l) { return ceil_log2(l.size); };
const RoundsFn kFullLaneRounds = [](const Layout& l) {
  return node_size(l) - 1 + l.num_nodes() - 1;
};
const RoundsFn kKLaneRounds = [](const Layout& l) {
  return (l.num_nodes() - 1) * node_size(l) + (node_size(l) > 1 ? 1 : 0);
};
const RoundsFn kRingRounds = [](const Layout& l) { return l.size - 1; };
const RoundsFn kWindowRounds = [](const Layout& l) {
  const int window = std::min(l.size - 1, 2 * l.num_lanes);
  return (l.size - 1 + window - 1) / window;
};
const RoundsFn kDoublingRounds = [](const Layout& l) {
  const int levels = floor_log2(l.size);
  return levels + ((1 << levels) == l.size ? 0 : 2);
};
const RoundsFn kNodeAwareRounds = [](const Layout& l) {
  bool local = false;
  for (const auto& ranks : l.node_ranks) local |= ranks.size() > 1;
  return l.num_nodes() - 1 + (local ? 2 : 0);
};

struct Case {
  Collective coll;
  const char* name;
  RoundsFn rounds;
  bool regular_only;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {Collective::alltoall, "kported", kKportedRounds, false},
      {Collective::alltoall, "bruck", kLogRounds, false},
      {Collective::alltoall, "full-lane", kFullLaneRounds, true},
      {Collective::alltoall, "k-lane", kKLaneRounds, true},
      {Collective::alltoall, "windowed", kWindowRounds, false},
      {Collective::allgather, "ring", kRingRounds, false},
      {Collective::allgather, "recursive-doubling", kDoublingRounds, false},
      {Collective::allgather, "bruck", kLogRounds, false},
      {Collective::allgather, "node-aware", kNodeAwareRounds, false},
  };
  return all;
}

// Simulates and checks correctness, minimum volume and the claimed rounds.
void check(const Case& c, const Layout& layout, std::size_t bytes, int* runs) {
  const Algorithm& a = algo(c.coll, c.name);
  ASSERT_EQ(a.applicable == nullptr || a.applicable(layout), !c.regular_only || layout.regular())
      << what(a, layout, bytes);
  if (c.regular_only && !layout.regular()) return;
  const SimResult res = simulate(a, layout, 0, bytes);
  ++*runs;
  ASSERT_TRUE(res.ok) << what(a, layout, bytes) << ": " << res.error;
  const auto p = static_cast<std::size_t>(layout.size);
  if (bytes == 0 || p == 1) {
    EXPECT_EQ(res.bytes_moved, 0u) << what(a, layout, bytes);
    EXPECT_EQ(res.max_rounds, 0) << what(a, layout, bytes);
    return;
  }
  EXPECT_GE(res.bytes_moved, p * (p - 1) * bytes) << what(a, layout, bytes);
  EXPECT_EQ(res.max_rounds, c.rounds(layout)) << what(a, layout, bytes);
}

class Sweep : public ::testing::TestWithParam<Case> {};

TEST_P(Sweep, CorrectUpTo64Ranks) {
  const Case& c = GetParam();
  int runs = 0;
  for (int p = 1; p <= 64; ++p) {
    // Every lane count for small p; two per p beyond, so that all of 1..6 still occur.
    std::vector<int> lanes = {1, 2, 3, 4, 5, 6};
    if (p > 20) lanes = {1 + p % 6, 1 + (p + 3) % 6};
    for (int k : lanes) {
      for (const Layout& layout : layouts_for(p, k)) {
        for (std::size_t bytes :
             {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{13}}) {
          check(c, layout, bytes, &runs);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  EXPECT_GT(runs, 1000);
}

TEST_P(Sweep, LargeSamples) {
  const Case& c = GetParam();
  struct Sample {
    Layout layout;
    std::size_t bytes;
  };
  // About 2M operations per alltoall at p = 1024: one sample there.
  std::vector<Sample> samples = {
      {Layout::blocks(200, 8, 3), 7},
      {mixed(300, 2), 1},
      {interleaved(240, 12, 4), 13},
      {Layout::blocks(1024, 16, 4), 1},
  };
  if (c.coll == Collective::allgather) {
    samples.push_back({mixed(1000, 5), 3});
    samples.push_back({interleaved(512, 32, 2), 7});
  }
  int runs = 0;
  for (const Sample& sample : samples) {
    check(c, sample.layout, sample.bytes, &runs);
    if (HasFatalFailure()) return;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::string(to_string(info.param.coll)) + "_" + info.param.name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, Sweep, ::testing::ValuesIn(cases()), case_name);

std::vector<Schedule> build_all(const Algorithm& a, const Layout& layout, std::size_t bytes) {
  std::vector<Schedule> out;
  for (int r = 0; r < layout.size; ++r) out.push_back(a.build(layout, {a.coll, r, 0, bytes}));
  return out;
}

TEST(Registry, NewAlgorithmsAreRegistered) {
  for (const Case& c : cases()) {
    const Algorithm* a = find_algorithm(c.coll, c.name);
    ASSERT_NE(a, nullptr) << c.name;
    EXPECT_EQ(a->coll, c.coll);
    EXPECT_FALSE(a->summary.empty()) << c.name;
    EXPECT_EQ(a->applicable != nullptr, c.regular_only) << c.name;
  }
  EXPECT_EQ(find_algorithm(Collective::alltoall, "kported")->build, &build_alltoall_kported);
  EXPECT_EQ(find_algorithm(Collective::alltoall, "bruck")->build, &build_alltoall_bruck);
  EXPECT_EQ(find_algorithm(Collective::alltoall, "full-lane")->build, &build_alltoall_full_lane);
  EXPECT_EQ(find_algorithm(Collective::alltoall, "k-lane")->build, &build_alltoall_k_lane);
  EXPECT_EQ(find_algorithm(Collective::allgather, "ring")->build, &build_allgather_ring);
  EXPECT_EQ(find_algorithm(Collective::allgather, "recursive-doubling")->build,
            &build_allgather_recursive_doubling);
  EXPECT_EQ(find_algorithm(Collective::allgather, "bruck")->build, &build_allgather_bruck);
  EXPECT_EQ(find_algorithm(Collective::allgather, "node-aware")->build,
            &build_allgather_node_aware);
}

TEST(AlltoallKported, PortIUsesLaneIAndShiftTkPlusIPlusOne) {
  const Layout layout = Layout::blocks(11, 2, 3);
  const std::size_t b = 5;
  const Schedule s = build_alltoall_kported(layout, {Collective::alltoall, 4, 0, b});
  EXPECT_EQ(s.rounds, 4);  // ceil(10 / 3)
  EXPECT_EQ(s.ports, 3);
  ASSERT_EQ(s.ops.size(), 1u + 2 * 10);
  EXPECT_EQ(s.ops[0].kind, OpKind::copy);
  EXPECT_EQ(s.ops[0].src, (Region{Buffer::send, 4 * b, b}));
  EXPECT_EQ(s.ops[0].dst, (Region{Buffer::recv, 4 * b, b}));
  for (std::size_t x = 1; x < s.ops.size(); x += 2) {
    const Op& snd = s.ops[x];
    const Op& rcv = s.ops[x + 1];
    const int d = static_cast<int>(x / 2) + 1;
    ASSERT_EQ(snd.kind, OpKind::send);
    ASSERT_EQ(rcv.kind, OpKind::recv);
    EXPECT_EQ(snd.peer, (4 + d) % 11);
    EXPECT_EQ(rcv.peer, (4 - d + 11) % 11);
    EXPECT_EQ(snd.lanes, layout.lanes_of[4]);  // the sender's lanes
    EXPECT_EQ(rcv.lanes, layout.lanes_of[rcv.peer]);
    EXPECT_EQ(snd.round, (d - 1) / 3);
    EXPECT_EQ(snd.src, (Region{Buffer::send, static_cast<std::size_t>(snd.peer) * b, b}));
    EXPECT_EQ(rcv.dst, (Region{Buffer::recv, static_cast<std::size_t>(rcv.peer) * b, b}));
    // A round starts after all of the previous round.
    EXPECT_EQ(snd.deps.size(), snd.round == 0 ? 0u : 6u);
  }
}

TEST(AlltoallWindowed, KeepsTwoStepsPerLaneInFlight) {
  // p = 9, 2 lanes: W = 4; step s waits for step s - 4 only.
  const Layout layout = Layout::blocks(9, 3, 2);
  const Schedule s = build_alltoall_windowed(layout, {Collective::alltoall, 4, 0, 5});
  ASSERT_EQ(s.ops.size(), 1u + 2 * 8);
  for (int step = 1; step <= 8; ++step) {
    const Op& snd = s.ops[static_cast<std::size_t>(2 * step - 1)];
    const Op& rcv = s.ops[static_cast<std::size_t>(2 * step)];
    EXPECT_EQ(snd.peer, (4 + step) % 9);
    EXPECT_EQ(rcv.peer, (4 - step + 9) % 9);
    EXPECT_EQ(snd.lanes, layout.lanes_of[4]);
    const std::vector<OpId> after = step <= 4
                                        ? std::vector<OpId>{}
                                        : std::vector<OpId>{static_cast<OpId>(2 * (step - 4) - 1),
                                                            static_cast<OpId>(2 * (step - 4))};
    EXPECT_EQ(snd.deps, after) << step;
    EXPECT_EQ(rcv.deps, after) << step;
  }
  // One lane, three ranks: W = 2 = p - 1, everything at once.
  const Schedule all =
      build_alltoall_windowed(Layout::blocks(3, 1, 1), {Collective::alltoall, 0, 0, 5});
  for (const Op& op : all.ops) EXPECT_TRUE(op.deps.empty());
}

TEST(AlltoallKported, OneLaneIsPairwise) {
  for (int p : {2, 5, 16}) {
    const Layout layout = Layout::blocks(p, 2, 1);
    const SimResult kp = simulate(algo(Collective::alltoall, "kported"), layout, 0, 9);
    const SimResult pw = simulate(algo(Collective::alltoall, "pairwise"), layout, 0, 9);
    ASSERT_TRUE(kp.ok && pw.ok) << kp.error << pw.error;
    EXPECT_EQ(kp.max_rounds, pw.max_rounds);
    EXPECT_EQ(kp.messages, pw.messages);
    EXPECT_EQ(kp.bytes_moved, pw.bytes_moved);
  }
}

TEST(AlltoallBruck, MessagesAndVolume) {
  for (int p : {2, 3, 5, 8, 13, 64, 100}) {
    const Layout layout = Layout::blocks(p, 4, 2);
    const std::size_t b = 7;
    const SimResult res = simulate(algo(Collective::alltoall, "bruck"), layout, 0, b);
    ASSERT_TRUE(res.ok) << res.error;
    // One message per rank and round; block i travels popcount(i) times.
    EXPECT_EQ(res.messages, static_cast<std::size_t>(p * ceil_log2(p)));
    std::size_t hops = 0;
    for (int i = 0; i < p; ++i)
      hops += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(i)));
    EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(p) * hops * b) << "p " << p;
    const Schedule s = build_alltoall_bruck(layout, {Collective::alltoall, 1, 0, b});
    EXPECT_EQ(s.ports, 1);
    // Every step packs and receives into scratch of its own: at most twice the bytes sent.
    EXPECT_LE(s.scratch_bytes, 2 * hops * b);
  }
}

TEST(AlltoallBruck, TwoRanksNeedNoScratch) {
  const Schedule s = build_alltoall_bruck(Layout::blocks(2, 1, 1), {Collective::alltoall, 0, 0, 6});
  EXPECT_EQ(s.scratch_bytes, 0u);
  ASSERT_EQ(s.ops.size(), 3u);
  EXPECT_EQ(s.ops[1].src, (Region{Buffer::send, 6, 6}));
  EXPECT_EQ(s.ops[2].dst, (Region{Buffer::recv, 6, 6}));
}

TEST(AlltoallFullLane, EveryBlockCrossesTwice) {
  const std::size_t b = 13;
  for (int n : {1, 2, 3, 4, 8}) {
    for (int nodes : {1, 2, 3, 5}) {
      const int p = n * nodes;
      for (const Layout& layout : {Layout::blocks(p, n, 2), interleaved(p, nodes, 3)}) {
        const SimResult full = simulate(algo(Collective::alltoall, "full-lane"), layout, 0, b);
        const SimResult pair = simulate(algo(Collective::alltoall, "pairwise"), layout, 0, b);
        ASSERT_TRUE(full.ok) << layout.describe() << ": " << full.error;
        ASSERT_TRUE(pair.ok) << pair.error;
        const auto P = static_cast<std::size_t>(p);
        const auto N = static_cast<std::size_t>(nodes);
        const auto nn = static_cast<std::size_t>(n);
        EXPECT_EQ(pair.bytes_moved, P * (P - 1) * b);
        // A block from local rank l of node c to local rank i of node a moves on its node when
        // l != i and between nodes when c != a: twice unless it keeps its node or local rank.
        EXPECT_EQ(full.bytes_moved, P * (2 * P - N - nn) * b) << layout.describe();
        EXPECT_EQ(full.bytes_moved, 2 * pair.bytes_moved - P * (N + nn - 2) * b);
        // The same volume leaves the nodes, in n-times larger messages.
        EXPECT_EQ(full.offnode_bytes, pair.offnode_bytes);
        EXPECT_EQ(full.messages, P * (nn - 1 + N - 1));
      }
    }
  }
}

TEST(AlltoallFullLane, OffNodeMessagesCarryNBlocksOnTheLocalRanksLane) {
  const Layout layout = Layout::blocks(12, 4, 3);  // 3 nodes of 4
  const std::size_t b = 7;
  for (int r = 0; r < 12; ++r) {
    const Schedule s = build_alltoall_full_lane(layout, {Collective::alltoall, r, 0, b});
    EXPECT_EQ(s.rounds, 3 + 2);
    EXPECT_EQ(s.ports, 1);
    int off = 0;
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::copy || layout.same_node(r, op.peer)) continue;
      ++off;
      EXPECT_EQ(layout.local_rank_of[op.peer], layout.local_rank_of[r]);
      EXPECT_EQ(op.lanes, LaneSet::one(layout.local_rank_of[r] % 3));
      EXPECT_EQ((op.kind == OpKind::send ? op.src : op.dst).bytes, 4 * b);
    }
    EXPECT_EQ(off, 2 * 2);
  }
}

TEST(AlltoallFullLane, IrregularLayoutsAreRejected) {
  const Layout layout = Layout::from_node_sizes({3, 2}, 2);
  EXPECT_FALSE(algo(Collective::alltoall, "full-lane").applicable(layout));
  EXPECT_THROW(build_alltoall_full_lane(layout, {Collective::alltoall, 0, 0, 4}), Error);
  EXPECT_FALSE(algo(Collective::alltoall, "k-lane").applicable(layout));
  EXPECT_THROW(build_alltoall_k_lane(layout, {Collective::alltoall, 0, 0, 4}), Error);
}

TEST(AlltoallKLane, EachStepPairsANodeWithNDistinctRanks) {
  for (const Layout& layout : {Layout::blocks(15, 5, 2), interleaved(12, 3, 3)}) {
    const int nodes = layout.num_nodes();
    const int n = node_size(layout);
    const std::vector<Schedule> all = build_all(algo(Collective::alltoall, "k-lane"), layout, 3);
    const int node_rounds = (nodes - 1) * n;
    for (int a = 0; a < nodes; ++a) {
      for (int round = 0; round < node_rounds; ++round) {
        std::set<int> targets;
        std::set<int> target_nodes;
        std::set<int> sources;
        for (int member : layout.node_ranks[a]) {
          int sends = 0;
          for (const Op& op : all[member].ops) {
            if (op.kind == OpKind::copy || op.round != round) continue;
            EXPECT_EQ(op.lanes,
                      op.kind == OpKind::send ? layout.lanes_of[member] : layout.lanes_of[op.peer]);
            if (op.kind == OpKind::send) {
              ++sends;
              targets.insert(op.peer);
              target_nodes.insert(layout.node_of[op.peer]);
            } else {
              sources.insert(op.peer);
            }
          }
          EXPECT_EQ(sends, 1);
        }
        EXPECT_EQ(static_cast<int>(targets.size()), n) << "node " << a << " round " << round;
        EXPECT_EQ(static_cast<int>(sources.size()), n);
        ASSERT_EQ(target_nodes.size(), 1u);
        EXPECT_EQ(*target_nodes.begin(), (a + 1 + round / n) % nodes);
      }
    }
    // The last round stays on the node and exchanges with every node mate at once.
    for (int r = 0; r < layout.size; ++r) {
      int last = 0;
      for (const Op& op : all[r].ops) {
        if (op.kind == OpKind::copy || op.round != node_rounds) continue;
        EXPECT_TRUE(layout.same_node(r, op.peer));
        ++last;
      }
      EXPECT_EQ(last, 2 * (n - 1));
    }
    const SimResult res = simulate(algo(Collective::alltoall, "k-lane"), layout, 0, 3);
    ASSERT_TRUE(res.ok) << res.error;
    // Every block travels once, directly.
    EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(layout.size * (layout.size - 1)) * 3);
  }
}

TEST(AllgatherRing, ForwardsTheLastBlockReceived) {
  const Layout layout = Layout::blocks(5, 2, 2);
  const std::size_t b = 3;
  const Schedule s = build_allgather_ring(layout, {Collective::allgather, 2, 0, b});
  ASSERT_EQ(s.ops.size(), 1u + 2 * 4);
  EXPECT_EQ(s.rounds, 4);
  EXPECT_EQ(s.ops[1].src, (Region{Buffer::send, 0, b}));
  for (int step = 0; step < 4; ++step) {
    const Op& snd = s.ops[1 + 2 * step];
    const Op& rcv = s.ops[2 + 2 * step];
    EXPECT_EQ(snd.peer, 3);
    EXPECT_EQ(rcv.peer, 1);
    EXPECT_EQ(rcv.dst.offset, static_cast<std::size_t>((2 - step - 1 + 5) % 5) * b);
    if (step > 0) {
      EXPECT_EQ(snd.src, s.ops[snd.deps[1]].dst);  // the previous receive
    }
  }
  const SimResult res = simulate(algo(Collective::allgather, "ring"), layout, 0, b);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.messages, 5u * 4);
  EXPECT_EQ(res.offnode_bytes, 3u * 4 * b);  // 3 node boundaries on the ring
}

TEST(AllgatherRecursiveDoubling, PowersOfTwoExchangeDoublingStretches) {
  const Layout layout = Layout::blocks(8, 8, 1);
  const std::size_t b = 4;
  const Schedule s = build_allgather_recursive_doubling(layout, {Collective::allgather, 5, 0, b});
  EXPECT_EQ(s.rounds, 3);
  std::vector<std::pair<int, std::size_t>> sends;
  for (const Op& op : s.ops) {
    if (op.kind == OpKind::send) sends.emplace_back(op.peer, op.src.bytes);
  }
  const std::vector<std::pair<int, std::size_t>> want = {{4, b}, {7, 2 * b}, {1, 4 * b}};
  EXPECT_EQ(sends, want);
  const SimResult res = simulate(algo(Collective::allgather, "recursive-doubling"), layout, 0, b);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.bytes_moved, 8u * 7 * b);
}

TEST(AllgatherRecursiveDoubling, NonPowersOfTwoFold) {
  // p = 6: q = 4, e = 2; ranks 1 and 3 fold onto 0 and 2.
  const Layout layout = Layout::blocks(6, 2, 1);
  const std::size_t b = 2;
  const Schedule folded =
      build_allgather_recursive_doubling(layout, {Collective::allgather, 3, 0, b});
  EXPECT_EQ(folded.rounds, 4);
  ASSERT_EQ(folded.ops.size(), 2u);
  EXPECT_EQ(folded.ops[0].peer, 2);
  EXPECT_EQ(folded.ops[0].round, 0);
  EXPECT_EQ(folded.ops[1].dst, (Region{Buffer::recv, 0, 6 * b}));
  EXPECT_EQ(folded.ops[1].round, 3);
  const SimResult res = simulate(algo(Collective::allgather, "recursive-doubling"), layout, 0, b);
  ASSERT_TRUE(res.ok) << res.error;
  // Fold partners share a node here: the fold and the unfold stay on it.
  const SimResult ring = simulate(algo(Collective::allgather, "ring"), layout, 0, b);
  EXPECT_GE(res.bytes_moved, ring.bytes_moved);
}

TEST(AllgatherBruck, RoundsCarryMinOfDoublingAndRest) {
  const Layout layout = Layout::blocks(6, 3, 2);
  const std::size_t b = 5;
  const Schedule s = build_allgather_bruck(layout, {Collective::allgather, 1, 0, b});
  EXPECT_EQ(s.rounds, 3);
  EXPECT_EQ(s.scratch_bytes, 6 * b);
  std::vector<std::size_t> sizes;
  std::vector<int> peers;
  for (const Op& op : s.ops) {
    if (op.kind != OpKind::send) continue;
    sizes.push_back(op.src.bytes);
    peers.push_back(op.peer);
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{b, 2 * b, 2 * b}));  // min(2^j, p - 2^j)
  EXPECT_EQ(peers, (std::vector<int>{0, 5, 3}));                  // r - 2^j
  const SimResult res = simulate(algo(Collective::allgather, "bruck"), layout, 0, b);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.bytes_moved, 6u * 5 * b);
  EXPECT_EQ(res.messages, 6u * 3);
}

TEST(AllgatherNodeAware, OnlyLeadersLeaveTheirNode) {
  for (const Layout& layout :
       {Layout::from_node_sizes({3, 1, 4, 2}, 2), mixed(40, 3), interleaved(12, 4, 2)}) {
    const std::size_t b = 7;
    const SimResult res = simulate(algo(Collective::allgather, "node-aware"), layout, 0, b);
    ASSERT_TRUE(res.ok) << layout.describe() << ": " << res.error;
    const auto p = static_cast<std::size_t>(layout.size);
    const auto N = static_cast<std::size_t>(layout.num_nodes());
    // Each node's combined block goes around the ring once: every leader receives all others.
    EXPECT_EQ(res.offnode_bytes, (N - 1) * p * b) << layout.describe();
    const std::vector<Schedule> all =
        build_all(algo(Collective::allgather, "node-aware"), layout, b);
    std::size_t off_messages = 0;
    for (int r = 0; r < layout.size; ++r) {
      for (const Op& op : all[r].ops) {
        if (op.kind != OpKind::send || layout.same_node(r, op.peer)) continue;
        ++off_messages;
        EXPECT_EQ(layout.local_rank_of[r], 0);
        EXPECT_EQ(layout.local_rank_of[op.peer], 0);
        bool node_sized = false;
        for (const auto& ranks : layout.node_ranks) node_sized |= op.src.bytes == ranks.size() * b;
        EXPECT_TRUE(node_sized) << op.src.bytes;
      }
    }
    EXPECT_EQ(off_messages, N * (N - 1));
  }
}

TEST(AllgatherNodeAware, RingCarriesNodeSizedBlocks) {
  const Layout layout = Layout::from_node_sizes({3, 1, 4}, 1);
  const std::size_t b = 2;
  // Leader of node 1 (rank 3): step 0 sends its node's 1 block, step 1 node 0's 3 blocks.
  const Schedule s = build_allgather_node_aware(layout, {Collective::allgather, 3, 0, b});
  std::vector<std::size_t> out;
  for (const Op& op : s.ops) {
    if (op.kind == OpKind::send) out.push_back(op.src.bytes);
  }
  EXPECT_EQ(out, (std::vector<std::size_t>{1 * b, 3 * b}));
  EXPECT_EQ(s.rounds, 2 + 2);
  EXPECT_EQ(s.scratch_bytes, 0u);  // ranks numbered node by node: the receive buffer suffices
}

TEST(ZeroBytesAndOneRank, NoMessages) {
  for (const Case& c : cases()) {
    const Algorithm& a = algo(c.coll, c.name);
    const Schedule empty = a.build(Layout::blocks(6, 3, 2), {c.coll, 2, 0, 0});
    EXPECT_TRUE(empty.ops.empty()) << c.name;
    const Schedule single = a.build(Layout::blocks(1, 1, 4), {c.coll, 0, 0, 9});
    ASSERT_EQ(single.ops.size(), 1u) << c.name;
    EXPECT_EQ(single.ops[0].kind, OpKind::copy) << c.name;
    EXPECT_EQ(single.ops[0].dst, (Region{Buffer::recv, 0, 9})) << c.name;
    EXPECT_THROW(a.build(Layout::blocks(4, 2, 1), {c.coll, 4, 0, 1}), Error) << c.name;
  }
}

}  // namespace
}  // namespace lanes::algos
