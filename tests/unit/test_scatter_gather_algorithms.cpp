// Scatter and gather algorithms: correctness through the simulator over many layouts, lane
// counts, roots and block sizes, and the round counts and volumes each algorithm's comment
// claims.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algos/layout.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"
#include "algos/simulator.hpp"

namespace lanes::algos {
namespace {

// Smallest t with base^t >= p.
int ceil_log(int base, int p) {
  int t = 0;
  for (long long x = 1; x < p; x *= base) ++t;
  return t;
}

int max_node_size(const Layout& layout) {
  std::size_t n = 0;
  for (const auto& ranks : layout.node_ranks) n = std::max(n, ranks.size());
  return static_cast<int>(n);
}

// Rounds each algorithm claims (its file's comment), for blocks of at least one byte.
int expected_rounds(Collective coll, std::string_view name, const Layout& layout) {
  const int p = layout.size;
  const int k = layout.num_lanes;
  if (p == 1) return 0;
  if (name == "linear") return 1;
  if (name == "binomial") return ceil_log(2, p);
  if (coll == Collective::scatter && name == "kported") return ceil_log(k + 1, p);
  if (coll == Collective::scatter && name == "full-lane") {
    return ceil_log(2, max_node_size(layout)) + ceil_log(2, layout.num_nodes());
  }
  if (coll == Collective::scatter && name == "k-lane") {
    const int n_max = max_node_size(layout);
    const int h = k > 1 && n_max > 1 ? 1 : 0;
    return ceil_log(k + 1, layout.num_nodes()) * (1 + h) + ceil_log(k + 1, n_max);
  }
  ADD_FAILURE() << "no round formula for " << name;
  return -1;
}

// Node sizes mixed between 1 and 8, cut to p ranks.
Layout mixed(int p, int lanes, int variant) {
  static const std::vector<int> kSizes[] = {{3, 1, 8, 2, 5, 7, 4, 6},
                                            {1, 1, 6, 8, 2, 3, 7, 1, 5, 4}};
  const std::vector<int>& pattern = kSizes[variant % 2];
  std::vector<int> sizes;
  int placed = 0;
  for (std::size_t i = 0; placed < p; ++i) {
    const int n = std::min(pattern[i % pattern.size()], p - placed);
    sizes.push_back(n);
    placed += n;
  }
  return Layout::from_node_sizes(sizes, lanes);
}

std::vector<Layout> layouts_for(int p, int lanes) {
  std::vector<Layout> out;
  std::set<int> sizes;
  for (int n : {1, 2, 3, 4, p}) sizes.insert(std::min(n, p));
  for (int n : sizes) out.push_back(Layout::blocks(p, n, lanes));
  out.push_back(mixed(p, lanes, 0));
  out.push_back(mixed(p, lanes, 1));
  return out;
}

struct Named {
  Collective coll;
  std::string_view name;
};

const Named kAlgorithms[] = {
    {Collective::scatter, "linear"},    {Collective::scatter, "kported"},
    {Collective::scatter, "full-lane"}, {Collective::scatter, "k-lane"},
    {Collective::gather, "linear"},     {Collective::gather, "binomial"},
};

void PrintTo(const Named& n, std::ostream* os) {
  *os << to_string(n.coll) << " " << n.name;
}

std::string what(const Algorithm& algo, const Layout& layout, int root, std::size_t bytes) {
  return std::string(to_string(algo.coll)) + " " + std::string(algo.name) + " on " +
         layout.describe() + ", root " + std::to_string(root) + ", " + std::to_string(bytes) +
         " bytes";
}

// Bytes that ranks of the root's node send to ranks of other nodes.
std::size_t bytes_leaving_root_node(const Algorithm& algo, const Layout& layout, int root,
                                    std::size_t bytes) {
  std::size_t total = 0;
  for (int r : layout.node_ranks[layout.node_of[root]]) {
    const Schedule s = algo.build(layout, CollArgs{algo.coll, r, root, bytes});
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::send && !layout.same_node(r, op.peer)) total += op.src.bytes;
    }
  }
  return total;
}

// Checks one simulated call; false (with a failure recorded) when it is wrong.
bool check(const Algorithm& algo, const Layout& layout, int root, std::size_t bytes) {
  const SimResult res = simulate(algo, layout, root, bytes);
  if (!res.ok) {
    ADD_FAILURE() << what(algo, layout, root, bytes) << ": " << res.error;
    return false;
  }
  const auto p = static_cast<std::size_t>(layout.size);
  if (bytes == 0) {
    if (res.bytes_moved != 0) {
      ADD_FAILURE() << what(algo, layout, root, bytes) << ": moved " << res.bytes_moved;
      return false;
    }
    return true;
  }
  const int rounds = expected_rounds(algo.coll, algo.name, layout);
  if (res.max_rounds != rounds) {
    ADD_FAILURE() << what(algo, layout, root, bytes) << ": " << res.max_rounds
                  << " rounds, expected " << rounds;
    return false;
  }
  if (res.bytes_moved < (p - 1) * bytes ||
      (algo.name == "linear" && res.bytes_moved != (p - 1) * bytes)) {
    ADD_FAILURE() << what(algo, layout, root, bytes) << ": moved " << res.bytes_moved;
    return false;
  }
  if (layout.num_nodes() == 1 && res.offnode_bytes != 0) {
    ADD_FAILURE() << what(algo, layout, root, bytes) << ": off-node bytes on one node";
    return false;
  }
  return true;
}

class ScatterGather : public ::testing::TestWithParam<Named> {
 protected:
  const Algorithm& algo() const {
    const Algorithm* a = find_algorithm(GetParam().coll, GetParam().name);
    if (a == nullptr) throw std::runtime_error("not registered: " + std::string(GetParam().name));
    return *a;
  }
};

// p = 1..64, every root, lanes 1..6, blocks(p, n) for n in {1, 2, 3, 4, p} and two mixed
// layouts. Up to p = 16 everything runs with block sizes 0, 1, 7 and 13. Beyond, each combination
// takes one block size in turn, and algorithms whose structure does not depend on the lane count
// (only their lane labels do) take one lane count in turn too.
TEST_P(ScatterGather, CorrectUpTo64Ranks) {
  const Algorithm& a = algo();
  const bool lane_shaped =
      a.coll == Collective::scatter && (a.name == "kported" || a.name == "k-lane");
  const std::size_t kBytes[] = {0, 1, 7, 13};
  int runs = 0;
  int skipped = 0;
  for (int p = 1; p <= 64; ++p) {
    for (int lanes = 1; lanes <= 6; ++lanes) {
      int variant = 0;
      for (const Layout& layout : layouts_for(p, lanes)) {
        ++variant;
        if (a.applicable != nullptr && !a.applicable(layout)) {
          ++skipped;
          continue;
        }
        for (int root = 0; root < p; ++root) {
          if (p > 16 && !lane_shaped && lanes != 1 + (root + variant) % 6) continue;
          for (int i = 0; i < 4; ++i) {
            if (p > 16 && i != (root + lanes + variant) % 4) continue;
            ++runs;
            if (!check(a, layout, root, kBytes[i])) return;
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 5000);
  if (a.applicable == nullptr) {
    EXPECT_EQ(skipped, 0);
  }
}

TEST_P(ScatterGather, LargeSamples) {
  const Algorithm& a = algo();
  const std::vector<std::pair<Layout, std::size_t>> samples = {
      {Layout::blocks(1024, 16, 4), 7}, {Layout::blocks(1024, 1, 2), 1},
      {Layout::blocks(1000, 8, 3), 13}, {Layout::blocks(729, 27, 6), 7},
      {mixed(1024, 5, 0), 7},           {mixed(777, 2, 1), 1},
      {Layout::blocks(256, 64, 1), 13}, {Layout::blocks(343, 7, 6), 1},
  };
  for (const auto& [layout, bytes] : samples) {
    if (a.applicable != nullptr && !a.applicable(layout)) continue;
    const int p = layout.size;
    for (int root : {0, 1, p / 3, p - 1}) {
      if (!check(a, layout, root, bytes)) return;
    }
  }
}

std::string test_name(const ::testing::TestParamInfo<Named>& info) {
  std::string name = std::string(to_string(info.param.coll)) + "_" + std::string(info.param.name);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ScatterGather, ::testing::ValuesIn(kAlgorithms), test_name);

// The node-aware scatters send every block for another node off the root's node exactly once.
TEST(ScatterNodeAware, BlocksLeaveTheRootsNodeOnce) {
  for (const char* name : {"full-lane", "k-lane"}) {
    const Algorithm& a = *find_algorithm(Collective::scatter, name);
    for (int p : {2, 6, 12, 24, 40, 64, 96}) {
      for (int lanes : {1, 2, 3, 4}) {
        std::vector<Layout> layouts;
        for (int n : {1, 2, 3, 4, 8}) {
          if (p % n == 0) layouts.push_back(Layout::blocks(p, n, lanes));
        }
        if (a.applicable == nullptr) {
          layouts.push_back(mixed(p, lanes, 0));
          layouts.push_back(mixed(p, lanes, 1));
        }
        for (const Layout& layout : layouts) {
          for (int root : {0, 1, p / 2, p - 1}) {
            const std::size_t b = 7;
            const auto n = static_cast<std::size_t>(layout.node_size_of(root));
            EXPECT_EQ(bytes_leaving_root_node(a, layout, root, b),
                      (static_cast<std::size_t>(p) - n) * b)
                << what(a, layout, root, b);
          }
        }
      }
    }
  }
}

TEST(Registry, ScatterAndGatherNames) {
  for (const Named& n : kAlgorithms) {
    const Algorithm* a = find_algorithm(n.coll, n.name);
    ASSERT_NE(a, nullptr) << n.name;
    EXPECT_EQ(a->coll, n.coll);
    EXPECT_FALSE(a->summary.empty());
  }
  EXPECT_EQ(find_algorithm(Collective::scatter, "linear")->build, &build_scatter_linear);
  EXPECT_EQ(find_algorithm(Collective::scatter, "kported")->build, &build_scatter_kported);
  EXPECT_EQ(find_algorithm(Collective::scatter, "full-lane")->build, &build_scatter_full_lane);
  EXPECT_EQ(find_algorithm(Collective::scatter, "k-lane")->build, &build_scatter_k_lane);
  EXPECT_EQ(find_algorithm(Collective::gather, "linear")->build, &build_gather_linear);
  EXPECT_EQ(find_algorithm(Collective::gather, "binomial")->build, &build_gather_binomial);
  const Algorithm* full = find_algorithm(Collective::scatter, "full-lane");
  ASSERT_NE(full->applicable, nullptr);
  EXPECT_TRUE(full->applicable(Layout::blocks(12, 4, 2)));
  EXPECT_FALSE(full->applicable(Layout::blocks(10, 4, 2)));
  EXPECT_EQ(find_algorithm(Collective::scatter, "k-lane")->applicable, nullptr);
}

TEST(ScatterLinear, OneRoundAllPostedAtOnce) {
  const Layout layout = Layout::blocks(7, 2, 3);
  const Schedule root = build_scatter_linear(layout, {Collective::scatter, 2, 2, 5});
  ASSERT_EQ(root.ops.size(), 7u);
  EXPECT_EQ(root.ops[0].kind, OpKind::copy);
  EXPECT_EQ(root.ops[0].src, (Region{Buffer::send, 10, 5}));
  EXPECT_EQ(root.rounds, 1);
  EXPECT_EQ(root.ports, 6);
  for (std::size_t i = 1; i < root.ops.size(); ++i) {
    const Op& op = root.ops[i];
    EXPECT_EQ(op.kind, OpKind::send);
    EXPECT_TRUE(op.deps.empty());
    EXPECT_EQ(op.round, 0);
    EXPECT_EQ(op.src, (Region{Buffer::send, static_cast<std::size_t>(op.peer) * 5, 5}));
    EXPECT_EQ(op.lanes, layout.lanes_of[2]);
  }
  const Schedule leaf = build_scatter_linear(layout, {Collective::scatter, 6, 2, 5});
  ASSERT_EQ(leaf.ops.size(), 1u);
  EXPECT_EQ(leaf.ops[0].dst, (Region{Buffer::recv, 0, 5}));
}

TEST(ScatterKported, RootUsesKPortsPerRound) {
  // p = 16, k = 3: [0,16) -> [0,4) [4,8) [8,12) [12,16); root 5 keeps [4,8).
  const Layout layout = Layout::blocks(16, 4, 3);
  const std::size_t b = 3;
  const Schedule root = build_scatter_kported(layout, {Collective::scatter, 5, 5, b});
  EXPECT_EQ(root.rounds, 2);
  EXPECT_EQ(root.ports, 3);
  std::vector<const Op*> round0;
  for (const Op& op : root.ops) {
    if (op.kind == OpKind::send && op.round == 0) round0.push_back(&op);
  }
  ASSERT_EQ(round0.size(), 3u);
  EXPECT_EQ(round0[0]->peer, 0);
  EXPECT_EQ(round0[0]->src, (Region{Buffer::send, 0, 4 * b}));
  EXPECT_EQ(round0[1]->peer, 8);
  EXPECT_EQ(round0[1]->src, (Region{Buffer::send, 8 * b, 4 * b}));
  EXPECT_EQ(round0[2]->peer, 12);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(round0[j]->lanes, layout.lanes_of[5]);
  // Round 1 within [4,8): ranks 4, 6, 7, each one block.
  std::vector<int> round1;
  for (const Op& op : root.ops) {
    if (op.kind == OpKind::send && op.round == 1) round1.push_back(op.peer);
  }
  EXPECT_EQ(round1, (std::vector<int>{4, 6, 7}));
  // Rank 8 receives [8,12) into scratch and forwards 9, 10, 11.
  const Schedule mid = build_scatter_kported(layout, {Collective::scatter, 8, 5, b});
  EXPECT_EQ(mid.scratch_bytes, 4 * b);
  EXPECT_EQ(mid.recvs_from(5), 1u);
  EXPECT_EQ(mid.sends_to(9) + mid.sends_to(10) + mid.sends_to(11), 3u);
}

TEST(ScatterKported, RoundsAreCeilLogKPlusOne) {
  const Algorithm& a = *find_algorithm(Collective::scatter, "kported");
  for (int p : {2, 3, 4, 5, 8, 9, 16, 17, 27, 28, 64, 65, 125, 126, 216, 217, 343, 512, 1024}) {
    for (int k = 1; k <= 6; ++k) {
      const Layout layout = Layout::blocks(p, 4, k);
      const SimResult res = simulate(a, layout, p / 2, 2);
      ASSERT_TRUE(res.ok) << res.error;
      EXPECT_EQ(res.max_rounds, ceil_log(k + 1, p)) << "p " << p << " k " << k;
    }
  }
}

TEST(ScatterFullLane, RoundsAndOffNodeVolume) {
  const Algorithm& a = *find_algorithm(Collective::scatter, "full-lane");
  for (int num_nodes : {1, 2, 3, 4, 5, 8, 13}) {
    for (int n : {1, 2, 3, 4, 6, 8}) {
      const int p = num_nodes * n;
      const Layout layout = Layout::blocks(p, n, 2);
      for (int root : {0, p / 2, p - 1}) {
        const std::size_t b = 11;
        const SimResult res = simulate(a, layout, root, b);
        ASSERT_TRUE(res.ok) << what(a, layout, root, b) << ": " << res.error;
        EXPECT_EQ(res.max_rounds, ceil_log(2, n) + ceil_log(2, num_nodes))
            << what(a, layout, root, b);
        // The root's node sends every block for another node once: (N - 1) * n blocks.
        EXPECT_EQ(bytes_leaving_root_node(a, layout, root, b),
                  static_cast<std::size_t>((num_nodes - 1) * n) * b);
        // All off-node traffic: n binomial scatters over the nodes, node vm != 0 receiving its
        // subtree of min(lowbit(vm), N - vm) nodes; for N <= 2 that is (N - 1) * n blocks.
        std::size_t subtrees = 0;
        for (int vm = 1; vm < num_nodes; ++vm) {
          subtrees += static_cast<std::size_t>(std::min(vm & -vm, num_nodes - vm));
        }
        EXPECT_EQ(res.offnode_bytes, subtrees * static_cast<std::size_t>(n) * b);
        if (num_nodes <= 2) {
          EXPECT_EQ(res.offnode_bytes, static_cast<std::size_t>((num_nodes - 1) * n) * b);
        }
      }
    }
  }
}

TEST(ScatterFullLane, ColumnsUseTheirLanes) {
  // 4 nodes of 4 ranks, 2 lanes, root 5 (node 1, local 1): local rank i of node 1 sends off the
  // node on lane i mod 2.
  const Layout layout = Layout::blocks(16, 4, 2);
  for (int local = 0; local < 4; ++local) {
    const int rank = 4 + local;
    const Schedule s = build_scatter_full_lane(layout, {Collective::scatter, rank, 5, 3});
    EXPECT_EQ(s.ports, 1);
    int offnode = 0;
    for (const Op& op : s.ops) {
      if (op.kind != OpKind::send || layout.same_node(rank, op.peer)) continue;
      ++offnode;
      EXPECT_EQ(op.lanes, LaneSet::one(local % 2));
      EXPECT_EQ(layout.local_rank_of[op.peer], local);
      EXPECT_GE(op.round, 2);  // after the two on-node rounds
    }
    EXPECT_EQ(offnode, 2);  // binomial over 4 nodes: 2 children
  }
  EXPECT_THROW(build_scatter_full_lane(Layout::blocks(10, 4, 2), {Collective::scatter, 0, 0, 3}),
               std::exception);
}

TEST(ScatterFullLane, PermutedRegularLayout) {
  // Nodes interleaved: rank r on node r % 3, so every node's blocks are strided in the root's
  // send buffer.
  std::vector<int> labels;
  for (int r = 0; r < 24; ++r) labels.push_back(r % 3);
  const Layout layout = Layout::from_node_labels(labels, 3);
  for (const char* name : {"full-lane", "k-lane", "kported"}) {
    const Algorithm& a = *find_algorithm(Collective::scatter, name);
    for (int root = 0; root < 24; ++root) {
      for (std::size_t b : {std::size_t{1}, std::size_t{13}})
        EXPECT_TRUE(check(a, layout, root, b));
    }
  }
}

TEST(ScatterKLane, PortsSendOnDistinctLanes) {
  // 16 nodes of 8 ranks, 4 lanes: [0,16) -> 5 parts; root 3 (node 0) keeps [0,4).
  const Layout layout = Layout::blocks(128, 8, 4);
  const int root = 3;
  std::set<int> senders;
  std::set<int> lanes;
  for (int r : layout.node_ranks[0]) {
    const Schedule s = build_scatter_k_lane(layout, {Collective::scatter, r, root, 5});
    EXPECT_EQ(s.ports, 4);
    EXPECT_EQ(s.rounds, 2 * 2 + 2);  // L = 2 levels of 2 rounds, F = ceil(log5 8) = 2
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::send && !layout.same_node(r, op.peer) && op.round == 1) {
        senders.insert(r);
        lanes.insert(op.lanes.lowest());
        EXPECT_EQ(op.lanes, layout.lanes_of[r]);
        EXPECT_EQ(layout.local_rank_of[op.peer], 0);  // to the first rank of a new node
      }
    }
  }
  EXPECT_EQ(senders, (std::set<int>{3, 4, 5, 6}));  // the root and the next three local ranks
  EXPECT_EQ(lanes, (std::set<int>{0, 1, 2, 3}));
}

TEST(ScatterKLane, FewerRanksThanLanes) {
  // Nodes of 1 and 2 ranks with 5 lanes: a rank serves several ports.
  const Algorithm& a = *find_algorithm(Collective::scatter, "k-lane");
  for (int n : {1, 2}) {
    const Layout layout = Layout::blocks(30, n, 5);
    for (int root : {0, 7, 29}) {
      const SimResult res = simulate(a, layout, root, 9);
      ASSERT_TRUE(res.ok) << what(a, layout, root, 9) << ": " << res.error;
      EXPECT_EQ(res.max_rounds, expected_rounds(Collective::scatter, "k-lane", layout));
    }
  }
}

TEST(GatherBinomial, WrappingSubtreeArrivesAsTwoMessages) {
  // p = 6, root 3: relative rank 2 (rank 5) holds ranks 5, 0 and sends them as two messages.
  const Layout layout = Layout::blocks(6, 2, 1);
  const std::size_t b = 10;
  const Schedule root = build_gather_binomial(layout, {Collective::gather, 3, 3, b});
  std::vector<Region> from5;
  for (const Op& op : root.ops) {
    if (op.kind == OpKind::recv && op.peer == 5) from5.push_back(op.dst);
  }
  ASSERT_EQ(from5.size(), 2u);
  EXPECT_EQ(from5[0], (Region{Buffer::recv, 5 * b, b}));
  EXPECT_EQ(from5[1], (Region{Buffer::recv, 0, b}));
  const Schedule mid = build_gather_binomial(layout, {Collective::gather, 5, 3, b});
  EXPECT_EQ(mid.sends_to(3), 2u);
  EXPECT_EQ(mid.scratch_bytes, 2 * b);
  const Schedule leaf = build_gather_binomial(layout, {Collective::gather, 4, 3, b});
  ASSERT_EQ(leaf.ops.size(), 1u);
  EXPECT_EQ(leaf.ops[0].src, (Region{Buffer::send, 0, b}));
  EXPECT_EQ(leaf.scratch_bytes, 0u);
  EXPECT_TRUE(check(*find_algorithm(Collective::gather, "binomial"), layout, 3, b));
}

TEST(GatherLinear, RootReceivesEveryBlockDirectly) {
  const Layout layout = Layout::blocks(5, 5, 2);
  const Schedule root = build_gather_linear(layout, {Collective::gather, 1, 1, 4});
  ASSERT_EQ(root.ops.size(), 5u);
  EXPECT_EQ(root.ops[0].dst, (Region{Buffer::recv, 4, 4}));
  for (std::size_t i = 1; i < 5; ++i) {
    EXPECT_EQ(root.ops[i].kind, OpKind::recv);
    EXPECT_EQ(root.ops[i].dst.offset, static_cast<std::size_t>(root.ops[i].peer) * 4);
  }
  const Schedule other = build_gather_linear(layout, {Collective::gather, 3, 1, 4});
  ASSERT_EQ(other.ops.size(), 1u);
  EXPECT_EQ(other.ops[0].src, (Region{Buffer::send, 0, 4}));
}

TEST(ScatterGather, SizeOneCopiesOwnBlock) {
  const Layout one = Layout::blocks(1, 1, 3);
  for (const Named& n : kAlgorithms) {
    const Algorithm& a = *find_algorithm(n.coll, n.name);
    const Schedule s = a.build(one, CollArgs{n.coll, 0, 0, 5});
    ASSERT_EQ(s.ops.size(), 1u) << n.name;
    EXPECT_EQ(s.ops[0].kind, OpKind::copy);
    EXPECT_EQ(s.ops[0].src, (Region{Buffer::send, 0, 5}));
    EXPECT_EQ(s.ops[0].dst, (Region{Buffer::recv, 0, 5}));
    EXPECT_TRUE(a.build(one, CollArgs{n.coll, 0, 0, 0}).ops.empty());
  }
}

}  // namespace
}  // namespace lanes::algos
