// The broadcast algorithms beyond binomial: every one through the simulator over many layouts,
// roots, lane counts and sizes, with the round counts their comments claim, and what sets each
// apart (lanes, ports, bytes between nodes, the bandwidth saving).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"
#include "algos/simulator.hpp"

namespace lanes::algos {
namespace {

const char* const kNames[] = {
    "kported",      "scatter-allgather", "scatter-ring", "scatter-ring-bwsave",
    "hierarchical", "full-lane",         "k-lane",       "pipeline"};

const Algorithm& bcast(const std::string& name) {
  const Algorithm* algo = find_algorithm(Collective::bcast, name);
  if (algo == nullptr) throw std::runtime_error("no bcast algorithm " + name);
  return *algo;
}

int clog2(long long x) {
  int r = 0;
  while ((1LL << r) < x) ++r;
  return r;
}

int flog2(long long x) {
  int r = 0;
  while ((x >> (r + 1)) > 0) ++r;
  return r;
}

int clog(long long base, long long x) {
  int r = 0;
  for (long long y = 1; y < x; y *= base) ++r;
  return r;
}

int smallest_node(const Layout& layout) {
  int n = layout.size;
  for (const auto& ranks : layout.node_ranks) n = std::min(n, static_cast<int>(ranks.size()));
  return n;
}

int largest_node(const Layout& layout) {
  int n = 0;
  for (const auto& ranks : layout.node_ranks) n = std::max(n, static_cast<int>(ranks.size()));
  return n;
}

// The rounds each algorithm's comment claims.
int expected_rounds(const std::string& name, const Layout& layout, std::size_t bytes) {
  const int p = layout.size;
  if (p == 1 || bytes == 0) return 0;
  const int k = layout.num_lanes;
  const int nodes = layout.num_nodes();
  if (name == "kported") return clog(k + 1, p);
  if (name == "scatter-allgather") {
    const bool power = (p & (p - 1)) == 0;
    return clog2(p) + flog2(p) + (power ? 0 : 2);
  }
  if (name == "scatter-ring" || name == "scatter-ring-bwsave") return clog2(p) + p - 1;
  if (name == "hierarchical") return clog2(nodes) + clog2(largest_node(layout));
  if (name == "full-lane") {
    const int n = largest_node(layout);
    return clog2(n) + clog2(nodes) + n - 1;
  }
  if (name == "k-lane") {
    const int ports = std::min(k, smallest_node(layout));
    const int c = clog2(ports);
    const int steps = clog(ports + 1, nodes);
    return c + steps * (1 + c) + clog2((largest_node(layout) + ports - 1) / ports);
  }
  if (name == "pipeline") {
    // S + N, S the segments of the largest lane part (about 64 KiB each, at most 64), over the
    // lanes that get a part of at least 32 KiB (one at least).
    const int used = static_cast<int>(std::clamp<std::size_t>(bytes / 32768, 1, k));
    std::size_t largest_part = 0;
    std::size_t total = 0;
    for (int l = 0; l < used; ++l) total += layout.lane_weight(l);
    std::size_t before = 0;
    for (int l = 0; l < used; ++l) {
      const auto cut = [&](std::size_t w) {
        return w >= total ? bytes : bytes * w / total / 64 * 64;
      };
      largest_part = std::max(largest_part, cut(before + layout.lane_weight(l)) - cut(before));
      before += layout.lane_weight(l);
    }
    const auto most = static_cast<std::size_t>(std::min(64, 2048 / k));
    const auto segs = std::clamp<std::size_t>((largest_part + 65535) / 65536, 1, most);
    return static_cast<int>(segs) + nodes;
  }
  ADD_FAILURE() << "no round formula for " << name;
  return -1;
}

// Nodes of the sizes in `pattern` (cycled), the last cut so that they hold p ranks.
Layout from_pattern(int p, const std::vector<int>& pattern, int lanes) {
  std::vector<int> sizes;
  int placed = 0;
  for (std::size_t i = 0; placed < p; ++i) {
    const int n = std::min(pattern[i % pattern.size()], p - placed);
    sizes.push_back(n);
    placed += n;
  }
  return Layout::from_node_sizes(sizes, lanes);
}

const std::vector<int> kIrregularA = {3, 1, 4, 1, 5, 8, 2, 6, 7};
const std::vector<int> kIrregularB = {8, 2, 7, 1, 6, 3, 5, 4};

constexpr int kFamilies = 7;

// Family f of p ranks: blocks of 1, 2, 3, 4 or p ranks per node, or one of two irregular ones.
Layout family(int f, int p, int lanes) {
  switch (f) {
    case 0:
      return Layout::blocks(p, 1, lanes);
    case 1:
      return Layout::blocks(p, 2, lanes);
    case 2:
      return Layout::blocks(p, 3, lanes);
    case 3:
      return Layout::blocks(p, 4, lanes);
    case 4:
      return Layout::blocks(p, p, lanes);
    case 5:
      return from_pattern(p, kIrregularA, lanes);
    default:
      return from_pattern(p, kIrregularB, lanes);
  }
}

std::string what(const std::string& name, const Layout& layout, int root, std::size_t bytes) {
  return name + " on " + layout.describe() + ", root " + std::to_string(root) + ", " +
         std::to_string(bytes) + " bytes";
}

bool tree_of_whole_messages(const std::string& name) {
  return name == "kported" || name == "hierarchical" || name == "k-lane";
}

bool node_aware(const std::string& name) {
  return name == "hierarchical" || name == "full-lane" || name == "k-lane" || name == "pipeline";
}

// Simulates one call and checks what every call of `name` must satisfy. False on failure.
bool check_call(const std::string& name, const Layout& layout, int root, std::size_t bytes) {
  const Algorithm& algo = bcast(name);
  const SimResult res = simulate(algo, layout, root, bytes);
  const std::string where = what(name, layout, root, bytes);
  if (!res.ok) {
    ADD_FAILURE() << where << ": " << res.error;
    return false;
  }
  const auto p = static_cast<std::size_t>(layout.size);
  const auto nodes = static_cast<std::size_t>(layout.num_nodes());
  bool ok = true;
  const auto expect = [&](bool cond, const std::string& why) {
    if (!cond) {
      ADD_FAILURE() << where << ": " << why;
      ok = false;
    }
  };
  expect(res.max_rounds == expected_rounds(name, layout, bytes),
         "rounds " + std::to_string(res.max_rounds) + ", expected " +
             std::to_string(expected_rounds(name, layout, bytes)));
  if (bytes == 0 || p == 1) {
    expect(res.messages == 0, "messages for nothing to do");
    return ok;
  }
  expect(res.bytes_moved >= (p - 1) * bytes, "fewer bytes than every rank needs");
  if (nodes == 1) expect(res.offnode_bytes == 0, "bytes between nodes on one node");
  if (nodes == p) expect(res.offnode_bytes == res.bytes_moved, "on-node bytes with 1 rank/node");
  if (tree_of_whole_messages(name)) {
    expect(res.messages == p - 1, "messages " + std::to_string(res.messages) + " != p - 1");
    expect(res.bytes_moved == (p - 1) * bytes, "a tree moves p - 1 messages");
  }
  if (node_aware(name)) {
    expect(res.offnode_bytes == (nodes - 1) * bytes,
           "offnode bytes " + std::to_string(res.offnode_bytes) + " != (N - 1) m");
  }
  return ok;
}

std::string test_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string out = info.param;
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

class EveryBcast : public ::testing::TestWithParam<const char*> {};

// Algorithms whose schedules depend on the layout only through each sender's default lane.
bool layout_oblivious(const std::string& name) {
  return name == "scatter-allgather" || name == "scatter-ring" || name == "scatter-ring-bwsave";
}

// p = 1..64, every root, seven layout families, 1..6 lanes, sizes 0, 1, 7, p - 1 and 1003.
// Lanes and sizes rotate with the root, and root 0 sees every size: together that covers every
// (p, family, lanes) and (p, family, size) combination without simulating the full product.
// Layout-oblivious algorithms (whose ring steps make them the slowest to simulate) see one family
// per root, rotating, and all of them at root 0.
TEST_P(EveryBcast, CorrectUpTo64Ranks) {
  const std::string name = GetParam();
  const Algorithm& algo = bcast(name);
  int runs = 0;
  for (int p = 1; p <= 64; ++p) {
    const std::vector<std::size_t> sizes = {0, 1, 7, static_cast<std::size_t>(p - 1), 1003};
    for (int f = 0; f < kFamilies; ++f) {
      for (int root = 0; root < p; ++root) {
        if (layout_oblivious(name) && root != 0 && f != (root + p) % kFamilies) continue;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
          const int turn = root + static_cast<int>(i);
          if (root != 0 && i != static_cast<std::size_t>(root + root / 5 + f) % sizes.size()) {
            continue;
          }
          const Layout layout = family(f, p, 1 + (turn + f + p) % 6);
          if (algo.applicable != nullptr && !algo.applicable(layout)) continue;
          ++runs;
          if (!check_call(name, layout, root, sizes[i])) return;
        }
      }
    }
  }
  EXPECT_GT(runs, 2000);
}

// Up to 1024 ranks, a few layouts and roots. The ring algorithms send p (p - 1) messages: one
// sample each above 256 ranks.
TEST_P(EveryBcast, LargeSamples) {
  const std::string name = GetParam();
  const Algorithm& algo = bcast(name);
  const bool ring = name == "scatter-ring" || name == "scatter-ring-bwsave";
  const std::vector<Layout> layouts = {Layout::blocks(1024, 16, 4), Layout::blocks(1000, 8, 3),
                                       Layout::blocks(768, 1, 2), from_pattern(777, kIrregularA, 2),
                                       Layout::blocks(130, 130, 6)};
  for (const Layout& layout : layouts) {
    if (algo.applicable != nullptr && !algo.applicable(layout)) continue;
    const int p = layout.size;
    if (ring && p > 256 && p != 1024) continue;
    for (int root : {0, p / 3, p - 1}) {
      for (std::size_t bytes : {std::size_t{7}, std::size_t{1003}, std::size_t{4096}}) {
        if (root != 0 && bytes == 4096) continue;
        if (ring && p > 256 && (root != p / 3 || bytes != 1003)) continue;
        ASSERT_TRUE(check_call(name, layout, root, bytes));
      }
    }
  }
}

TEST_P(EveryBcast, RoundFormulasAtScale) {
  const std::string name = GetParam();
  const Algorithm& algo = bcast(name);
  for (int p : {2, 3, 5, 8, 16, 17, 31, 32, 33, 100, 127, 128, 129, 256, 1000}) {
    for (int lanes : {1, 2, 3, 5}) {
      for (int n : {1, 4, 5}) {
        const Layout layout = Layout::blocks(p, n, lanes);
        if (algo.applicable != nullptr && !algo.applicable(layout)) continue;
        const Schedule s = algo.build(layout, {Collective::bcast, p - 1, p / 2, 64});
        EXPECT_EQ(s.rounds, expected_rounds(name, layout, 64)) << what(name, layout, p / 2, 64);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Bcast, EveryBcast, ::testing::ValuesIn(kNames), test_name);

TEST(BcastRegistry, AllRegisteredWithSummaries) {
  for (const char* name : kNames) {
    const Algorithm* algo = find_algorithm(Collective::bcast, name);
    ASSERT_NE(algo, nullptr) << name;
    EXPECT_EQ(algo->coll, Collective::bcast);
    EXPECT_FALSE(algo->summary.empty()) << name;
  }
  EXPECT_EQ(bcast("kported").build, &build_bcast_kported);
  EXPECT_EQ(bcast("scatter-allgather").build, &build_bcast_scatter_allgather);
  EXPECT_EQ(bcast("scatter-ring").build, &build_bcast_scatter_ring);
  EXPECT_EQ(bcast("scatter-ring-bwsave").build, &build_bcast_scatter_ring_bwsave);
  EXPECT_EQ(bcast("hierarchical").build, &build_bcast_hierarchical);
  EXPECT_EQ(bcast("full-lane").build, &build_bcast_full_lane);
  EXPECT_EQ(bcast("k-lane").build, &build_bcast_k_lane);
}

// ---------------------------------------------------------------------------------------------
// kported

TEST(BcastKported, RootSendsOnAllPortsAtOnce) {
  // p = 10, k = 3: [0,10) splits into 3,3,2,2 -> the root 0 sends to 3, 6 and 8 in round 0, with
  // no order among them, each over all three lanes (one rank per node drives them all).
  const Layout layout = Layout::blocks(10, 1, 3);
  const Schedule root = build_bcast_kported(layout, {Collective::bcast, 0, 0, 100});
  EXPECT_EQ(root.ports, 3);
  EXPECT_EQ(root.rounds, 2);  // ceil(log4 10)
  std::vector<const Op*> first;
  for (const Op& op : root.ops) {
    ASSERT_EQ(op.kind, OpKind::send);
    if (op.round == 0) first.push_back(&op);
  }
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0]->peer, 3);
  EXPECT_EQ(first[1]->peer, 6);
  EXPECT_EQ(first[2]->peer, 8);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(first[j]->lanes, LaneSet::first(3));
    EXPECT_TRUE(first[j]->deps.empty());
  }
  // Rank 6 gets the data from the root over the root's lanes and then splits [6,8) for rank 7.
  const Schedule six = build_bcast_kported(layout, {Collective::bcast, 6, 0, 100});
  ASSERT_EQ(six.ops.size(), 2u);
  EXPECT_EQ(six.ops[0].kind, OpKind::recv);
  EXPECT_EQ(six.ops[0].peer, 0);
  EXPECT_EQ(six.ops[0].lanes, layout.lanes_of[0]);
  EXPECT_EQ(six.ops[1].peer, 7);
  EXPECT_EQ(six.ops[1].round, 1);
  EXPECT_EQ(six.ops[1].deps, (std::vector<OpId>{0}));
}

TEST(BcastKported, RootInsideItsSubrange) {
  // p = 9, k = 2, root 4: [0,9) splits into [0,3) [3,6) [6,9); the root keeps [3,6) and sends to
  // 0 and 6.
  const Layout layout = Layout::blocks(9, 3, 2);
  const Schedule root = build_bcast_kported(layout, {Collective::bcast, 4, 4, 8});
  ASSERT_GE(root.ops.size(), 2u);
  EXPECT_EQ(root.ops[0].peer, 0);
  EXPECT_EQ(root.ops[1].peer, 6);
  EXPECT_EQ(root.ops[0].round, 0);
  EXPECT_EQ(root.ops[1].round, 0);
  EXPECT_TRUE(check_call("kported", layout, 4, 8));
}

TEST(BcastKported, OnePortIsBinomialDepth) {
  for (int p = 2; p <= 40; ++p) {
    const Layout layout = Layout::blocks(p, 2, 1);
    const SimResult res = simulate(bcast("kported"), layout, p - 1, 16);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.max_rounds, clog2(p));
  }
}

// ---------------------------------------------------------------------------------------------
// scatter-allgather, scatter-ring, scatter-ring-bwsave

// Bytes the binomial scatter of p blocks of b bytes moves: each non-root rank receives its
// subtree.
std::size_t scatter_bytes(int p, std::size_t b) {
  std::size_t total = 0;
  for (int v = 1; v < p; ++v) total += static_cast<std::size_t>(std::min(v & -v, p - v)) * b;
  return total;
}

TEST(BcastScatterAllgather, BytesForPowersOfTwo) {
  // Scatter, then every rank receives the p - 1 blocks it does not own.
  for (int p : {2, 4, 8, 16, 32}) {
    const std::size_t b = 5;
    const std::size_t m = static_cast<std::size_t>(p) * b;
    const SimResult res = simulate(bcast("scatter-allgather"), Layout::blocks(p, 4, 2), 1 % p, m);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.bytes_moved, scatter_bytes(p, b) + static_cast<std::size_t>(p - 1) * m);
    EXPECT_EQ(res.max_rounds, 2 * flog2(p));
  }
}

TEST(BcastScatterAllgather, FoldForNonPowersOfTwo) {
  // p = 6: q = 4, extras 4 and 5 (relative) hand their blocks to 0 and 1 and get the rest back.
  const Layout layout = Layout::blocks(6, 2, 1);
  const std::size_t m = 60;  // blocks of 10
  // Rank 4: scatter receive of blocks 4, 5 and send of block 5 to rank 5; block 4 to rank 0;
  // then everything but block 4 back from rank 0, in two pieces.
  const Schedule extra = build_bcast_scatter_allgather(layout, {Collective::bcast, 4, 0, m});
  ASSERT_EQ(extra.ops.size(), 5u);
  EXPECT_EQ(extra.ops[0].dst, (Region{Buffer::recv, 40, 20}));
  EXPECT_EQ(extra.ops[1].peer, 5);
  EXPECT_EQ(extra.ops[2].kind, OpKind::send);
  EXPECT_EQ(extra.ops[2].peer, 0);
  EXPECT_EQ(extra.ops[2].src, (Region{Buffer::recv, 40, 10}));
  EXPECT_EQ(extra.ops[3].dst, (Region{Buffer::recv, 0, 40}));
  EXPECT_EQ(extra.ops[4].dst, (Region{Buffer::recv, 50, 10}));
  EXPECT_EQ(extra.ops[4].peer, 0);
  EXPECT_EQ(extra.ops[4].round, extra.rounds - 1);
  // Only the piece over block 5, which the scatter wrote and forwarded, waits for the scatter.
  EXPECT_TRUE(extra.ops[3].deps.empty());
  EXPECT_EQ(extra.ops[4].deps, (std::vector<OpId>{0, 1}));
  EXPECT_EQ(extra.rounds, 3 + 2 + 2);
  EXPECT_TRUE(check_call("scatter-allgather", layout, 0, m));
  EXPECT_TRUE(check_call("scatter-allgather", layout, 3, m + 3));
}

TEST(BcastScatterRing, BytesAreScatterPlusRing) {
  for (int p : {2, 3, 5, 6, 7, 12, 16, 33}) {
    const std::size_t b = 3;
    const std::size_t m = static_cast<std::size_t>(p) * b;
    const SimResult res = simulate(bcast("scatter-ring"), Layout::blocks(p, 3, 2), p / 2, m);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.bytes_moved, scatter_bytes(p, b) + static_cast<std::size_t>(p - 1) * m);
    // p - 1 scatter messages, p (p - 1) ring messages.
    EXPECT_EQ(res.messages, static_cast<std::size_t>((p - 1) * (p + 1)));
  }
}

// Blocks rank v holds after the binomial scatter, the root all.
std::size_t held_blocks(int p, int v) {
  return v == 0 ? static_cast<std::size_t>(p) : static_cast<std::size_t>(std::min(v & -v, p - v));
}

TEST(BcastScatterRingBwsave, MovesFewerBytesThanScatterRing) {
  for (int p : {2, 3, 5, 6, 7, 9, 12, 13, 24, 31, 33, 48, 63, 100}) {
    for (std::size_t m : {std::size_t{1} << 16, std::size_t{65537}}) {
      const Layout layout = Layout::blocks(p, 4, 2);
      const int root = p / 3;
      const SimResult ring = simulate(bcast("scatter-ring"), layout, root, m);
      const SimResult save = simulate(bcast("scatter-ring-bwsave"), layout, root, m);
      ASSERT_TRUE(ring.ok) << ring.error;
      ASSERT_TRUE(save.ok) << save.error;
      EXPECT_LT(save.bytes_moved, ring.bytes_moved) << "p " << p << ", " << m << " bytes";
      EXPECT_LT(save.messages, ring.messages);
      EXPECT_EQ(save.max_rounds, ring.max_rounds);
      if (m % static_cast<std::size_t>(p) == 0) {
        // Exactly the blocks receivers held from the scatter are saved.
        const std::size_t b = m / static_cast<std::size_t>(p);
        std::size_t saved = 0;
        for (int v = 0; v < p; ++v) saved += (held_blocks(p, v) - 1) * b;
        EXPECT_EQ(ring.bytes_moved - save.bytes_moved, saved) << "p " << p;
      }
    }
  }
}

TEST(BcastScatterRingBwsave, NothingGoesToTheRoot) {
  const Layout layout = Layout::blocks(7, 2, 1);
  for (int rank = 0; rank < 7; ++rank) {
    const Schedule s = build_bcast_scatter_ring_bwsave(layout, {Collective::bcast, rank, 2, 700});
    if (rank == 2) {
      for (const Op& op : s.ops) EXPECT_NE(op.kind, OpKind::recv);
    }
    EXPECT_EQ(s.sends_to(2), 0u) << "rank " << rank;
  }
}

// ---------------------------------------------------------------------------------------------
// hierarchical

TEST(BcastHierarchical, LeadersAndNodeTrees) {
  // Nodes {0,1,2} {3,4,5} {6,7}, root 4: leaders 0, 4 (the root) and 6.
  const Layout layout = Layout::from_node_sizes({3, 3, 2}, 2);
  const Schedule root = build_bcast_hierarchical(layout, {Collective::bcast, 4, 4, 32});
  std::vector<int> peers;
  for (const Op& op : root.ops) peers.push_back(op.peer);
  // Relative node 2 (node 0, leader 0) gets the first message, node 2 (leader 6) the second;
  // on the node, relative local 2 (rank 3) and then 1 (rank 5).
  EXPECT_EQ(peers, (std::vector<int>{0, 6, 3, 5}));
  for (const Op& op : root.ops) {
    const bool chain_start = op.peer == 0 || op.peer == 3;
    EXPECT_EQ(op.deps.empty(), chain_start) << "inter- and intra-node chains run side by side";
  }
  const Schedule member = build_bcast_hierarchical(layout, {Collective::bcast, 7, 4, 32});
  ASSERT_EQ(member.ops.size(), 1u);
  EXPECT_EQ(member.ops[0].peer, 6);
  EXPECT_EQ(member.ops[0].round, 2);  // after ceil(log2 3) = 2 leader rounds
  EXPECT_EQ(member.rounds, 4);
}

// ---------------------------------------------------------------------------------------------
// full-lane

TEST(BcastFullLane, LaneOfLocalRankAndRegularOnly) {
  const Layout layout = Layout::blocks(12, 3, 2);  // 4 nodes of 3
  for (int rank = 0; rank < 12; ++rank) {
    const Schedule s = build_bcast_full_lane(layout, {Collective::bcast, rank, 4, 3000});
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::copy || layout.same_node(rank, op.peer)) continue;
      EXPECT_EQ(layout.local_rank_of[op.peer], layout.local_rank_of[rank]);
      EXPECT_EQ(op.lanes, LaneSet::one(layout.local_rank_of[rank] % 2));
      EXPECT_EQ(op.kind == OpKind::send ? op.src.bytes : op.dst.bytes, 1000u);
    }
  }
  const SimResult res = simulate(bcast("full-lane"), layout, 4, 3000);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.offnode_bytes, 3u * 3000);
  const Algorithm& algo = bcast("full-lane");
  EXPECT_FALSE(algo.applicable(Layout::from_node_sizes({3, 2}, 2)));
  EXPECT_FALSE(simulate(algo, Layout::blocks(7, 3, 1), 0, 8).ok);
}

// ---------------------------------------------------------------------------------------------
// k-lane

TEST(BcastKLane, PortsAreDistinctRanksAndLanes) {
  // 16 nodes of 4, k = 3: the root's node spreads to 3 local roots (2 rounds), then each sends
  // over the lanes it drives to the entry (local rank 0) of a new node. The local roots are
  // local ranks 1, 3 and 0 (groups of 2, 1, 1 from the root's local rank 1); 3 and 0 both drive
  // lane 0.
  const Layout layout = Layout::blocks(64, 4, 3);
  const int root = 5;  // node 1, local rank 1
  std::vector<int> lanes_used;
  for (int rank = 4; rank < 8; ++rank) {
    const Schedule s = build_bcast_k_lane(layout, {Collective::bcast, rank, root, 100});
    EXPECT_EQ(s.ports, 1);
    for (const Op& op : s.ops) {
      if (op.kind != OpKind::send || layout.same_node(rank, op.peer)) continue;
      EXPECT_EQ(layout.local_rank_of[op.peer], 0);
      EXPECT_EQ(op.lanes, layout.lanes_of[rank]);
      if (op.round == 2) lanes_used.push_back(op.lanes.lowest());  // the first step off the node
    }
  }
  std::sort(lanes_used.begin(), lanes_used.end());
  EXPECT_EQ(lanes_used, (std::vector<int>{0, 0, 1}));
  EXPECT_TRUE(check_call("k-lane", layout, root, 100));
}

TEST(BcastKLane, PortsLimitedBySmallestNode) {
  // A node of 2 ranks: K = 2 although 4 lanes exist.
  const Layout layout = Layout::from_node_sizes({5, 2, 6, 4, 3}, 4);
  EXPECT_EQ(expected_rounds("k-lane", layout, 10), 1 + clog(3, 5) * 2 + clog2(3));
  for (int root = 0; root < layout.size; ++root)
    EXPECT_TRUE(check_call("k-lane", layout, root, 10));
}

// ---------------------------------------------------------------------------------------------
// pipeline

TEST(BcastPipeline, LanePartsTravelTheChainInSegments) {
  // 4 nodes of 1 rank, 2 lanes, 1 MiB from rank 1: two parts of 512 KiB, 8 segments each, along
  // nodes 1 -> 2 -> 3 -> 0; every rank forwards segment j on lane l right after receiving it.
  const Layout layout = Layout::blocks(4, 1, 2);
  const std::size_t c = 1 << 20;
  ASSERT_TRUE(check_call("pipeline", layout, 1, c));
  for (int rank = 0; rank < 4; ++rank) {
    const Schedule s = build_bcast_pipeline(layout, {Collective::bcast, rank, 1, c});
    EXPECT_EQ(s.rounds, 8 + 4);
    int sends = 0, recvs = 0;
    for (const Op& op : s.ops) {
      ASSERT_NE(op.kind, OpKind::copy);
      EXPECT_EQ(op.lanes.count(), 1);
      EXPECT_EQ((op.kind == OpKind::send ? op.src : op.dst).bytes, c / 16);
      if (op.kind == OpKind::send) {
        ++sends;
        EXPECT_EQ(op.peer, (rank + 1) % 4);
        if (rank != 1) {
          ASSERT_EQ(op.deps.size(), 1u);
        }
      } else {
        ++recvs;
        EXPECT_EQ(op.peer, (rank + 3) % 4);
      }
    }
    EXPECT_EQ(sends, rank == 0 ? 0 : 16);  // the last node of the chain only receives
    EXPECT_EQ(recvs, rank == 1 ? 0 : 16);
  }
}

TEST(BcastPipeline, CarriersAreTheDriversAndPartsFollowTheWeights) {
  // 2 nodes of 2, rails of weights 1000 and 500: lane 0 carries two thirds of the message.
  Layout layout = Layout::blocks(4, 2, 2);
  layout.rail_weights = {1000, 500};
  const std::size_t c = 3 * 64 * 1000;
  const SimResult res = simulate(bcast("pipeline"), layout, 0, c);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.offnode_bytes, c);
  std::size_t on_lane[2] = {0, 0};
  for (int rank : {0, 1}) {
    for (const Op& op : build_bcast_pipeline(layout, {Collective::bcast, rank, 0, c}).ops) {
      if (op.kind != OpKind::send || layout.same_node(rank, op.peer)) continue;
      EXPECT_EQ(op.lanes, layout.lanes_of[rank]);  // the carrier of a lane drives it
      on_lane[op.lanes.lowest()] += op.src.bytes;
    }
  }
  EXPECT_EQ(on_lane[0], 2 * 64 * 1000u);
  EXPECT_EQ(on_lane[1], 64 * 1000u);
}

}  // namespace
}  // namespace lanes::algos
