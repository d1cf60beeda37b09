// NUMA-aware node phases (algos/numa_domains.hpp, algos/node_phases.hpp): how a node's ranks
// group into NUMA domains, and the reductions built on the node phases on nodes whose ranks are
// bound to several NUMA nodes: every contribution combined exactly once, rank order where it is
// claimed, and each byte crossing between NUMA nodes once per phase.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/node_bcast.hpp"
#include "algos/node_phases.hpp"
#include "algos/numa_domains.hpp"
#include "algos/registry.hpp"
#include "algos/simulator.hpp"

namespace lanes::algos {
namespace {

constexpr std::size_t kWord = 8;

// `layout` with local rank i of every node bound to NUMA node numa[i].
Layout bound(Layout layout, const std::vector<int>& numa) {
  for (int r = 0; r < layout.size; ++r) {
    layout.numa_of[static_cast<std::size_t>(r)] =
        numa[static_cast<std::size_t>(layout.local_rank_of[static_cast<std::size_t>(r)])];
  }
  return layout;
}

std::string describe(const Layout& layout) {
  std::string text = layout.describe() + ", NUMA";
  for (const int numa : layout.numa_of) text += " " + std::to_string(numa);
  return text;
}

const Algorithm& full_lane(Collective c) {
  const Algorithm* a = find_algorithm(c, "full-lane");
  EXPECT_NE(a, nullptr);
  return *a;
}

// Every rank's schedule of `a` for the call, built on `built_on` (for the flat phases: the same
// layout without NUMA nodes).
std::vector<Schedule> schedules(const Algorithm& a, const Layout& built_on, int root,
                                std::size_t bytes) {
  std::vector<Schedule> out;
  for (int r = 0; r < built_on.size; ++r) {
    out.push_back(a.build(built_on, CollArgs{a.coll, r, root, bytes, kWord}));
  }
  return out;
}

TEST(NumaDomains, GroupByBoundNumaNodeInOrderOfFirstRank) {
  const Layout layout = bound(Layout::blocks(6, 6, 1), {1, 0, 1, 2, 0, 1});
  const NumaDomains d = numa_domains(layout, layout.node_ranks[0]);
  ASSERT_EQ(d.count(), 3);
  EXPECT_EQ(d.members[0], (std::vector<int>{0, 2, 5}));  // NUMA node 1 holds local rank 0
  EXPECT_EQ(d.members[1], (std::vector<int>{1, 4}));
  EXPECT_EQ(d.members[2], (std::vector<int>{3}));
  EXPECT_EQ(d.domain_of, (std::vector<int>{0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(d.position_of, (std::vector<int>{0, 0, 1, 0, 1, 2}));
  EXPECT_TRUE(d.two_level());
  EXPECT_FALSE(d.contiguous());
  // Stand-ins: a rank itself in its own domain, the member at its position modulo the size in
  // another one.
  EXPECT_EQ(d.proxy(0, 2), 2);
  EXPECT_EQ(d.proxy(1, 5), 1);  // position 2 of domain 0, modulo 2 members: position 0
  EXPECT_EQ(d.proxy(2, 4), 3);
  EXPECT_EQ(d.proxy(0, 4), 2);
}

TEST(NumaDomains, UnknownOrEveryRankAloneMeansFlatPhases) {
  Layout layout = Layout::blocks(4, 4, 1);
  EXPECT_EQ(numa_domains(layout, layout.node_ranks[0]).count(), 1);  // unbound: -1
  layout.numa_of = {0, 1, -1, 1};  // one rank bound across NUMA nodes
  EXPECT_EQ(numa_domains(layout, layout.node_ranks[0]).count(), 1);
  const Layout alone = bound(Layout::blocks(4, 4, 1), {0, 1, 2, 3});
  EXPECT_FALSE(numa_domains(alone, alone.node_ranks[0]).two_level());
  EXPECT_EQ(phase_domains(alone, alone.node_ranks[0]).count(), 1);
  const Layout one = bound(Layout::blocks(4, 4, 1), {3, 3, 3, 3});
  EXPECT_EQ(phase_domains(one, one.node_ranks[0]).count(), 1);
  const Layout halves = bound(Layout::blocks(8, 4, 1), {0, 0, 1, 1});
  EXPECT_TRUE(numa_domains_contiguous(halves));
  EXPECT_FALSE(numa_domains_contiguous(bound(Layout::blocks(8, 4, 1), {0, 1, 0, 1})));
}

// Nodes of 2 to 8 ranks over 2 or 3 NUMA domains, contiguous, interleaved and uneven; one to
// three nodes; vectors shorter than a node, not divisible by it, long, and of several chunks
// per part; every root of reduce.
TEST(NumaPhases, FullLaneReductionsCombineEveryContributionOnce) {
  const std::vector<std::vector<int>> patterns = {{0, 1},
                                                  {0, 0, 1, 1},
                                                  {0, 1, 0, 1},
                                                  {0, 0, 0, 1, 1},
                                                  {0, 1, 1, 1, 1},
                                                  {0, 1, 2, 0, 1, 2},
                                                  {0, 0, 1, 1, 2, 2},
                                                  {1, 1, 0, 0, 0, 0, 1, 1},
                                                  {0, 1, 0, 1, 0, 1, 0, 1}};
  int checked = 0;
  for (const Collective c : {Collective::allreduce, Collective::reduce}) {
    const Algorithm& a = full_lane(c);
    for (const auto& numa : patterns) {
      const int n = static_cast<int>(numa.size());
      for (int nodes = 1; nodes <= 3; ++nodes) {
        const Layout layout = bound(Layout::blocks(nodes * n, n, 2), numa);
        const std::size_t chunk_words = node_chunk_bytes(n, kWord) / kWord;
        for (const std::size_t words :
             {std::size_t{1}, static_cast<std::size_t>(n) + 2, std::size_t{97},
              static_cast<std::size_t>(n) * chunk_words * 7 / 2 + 1}) {
          const int roots = c == Collective::reduce ? layout.size : 1;
          for (int root = 0; root < roots; root += 1 + (words > 100 ? n : 0)) {
            const SimResult res = simulate(a, layout, root, words * kWord);
            ASSERT_TRUE(res.ok) << to_string(c) << " full-lane on " << describe(layout) << ", root "
                                << root << ", " << words << " words: " << res.error;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

// One node of n ranks in D domains of n / D, a vector of m bytes in equal parts: the flat
// reduce-scatter and allgather each move (n - n / D) m bytes between NUMA nodes, the two-level
// ones (D - 1) m, the least that lets every domain see every contribution once. The volume on
// the node is the same.
TEST(NumaPhases, EachByteCrossesBetweenNumaNodesOncePerPhase) {
  const Algorithm& a = full_lane(Collective::allreduce);
  for (const auto& numa : std::vector<std::vector<int>>{
           {0, 0, 1, 1}, {0, 1, 0, 1}, {0, 0, 0, 0, 1, 1, 1, 1}, {0, 1, 2, 0, 1, 2}}) {
    const int n = static_cast<int>(numa.size());
    int domains = 0;
    for (const int x : numa) domains = std::max(domains, x + 1);
    const Layout flat = Layout::blocks(n, n, 1);
    const Layout layout = bound(flat, numa);
    for (const std::size_t per_part : {std::size_t{4}, 3 * node_chunk_bytes(n, kWord) / kWord}) {
      const std::size_t m = static_cast<std::size_t>(n) * per_part * kWord;
      const SimResult aware = simulate(a, layout, 0, m);
      ASSERT_TRUE(aware.ok) << describe(layout) << ": " << aware.error;
      const SimResult plain =
          simulate_schedules(a.coll, layout, 0, m, schedules(a, flat, 0, m), false);
      ASSERT_TRUE(plain.ok) << plain.error;
      const auto d = static_cast<std::size_t>(domains);
      const auto nn = static_cast<std::size_t>(n);
      EXPECT_EQ(aware.cross_numa_bytes, 2 * (d - 1) * m) << describe(layout);
      EXPECT_EQ(plain.cross_numa_bytes, 2 * (nn - nn / d) * m) << describe(layout);
      EXPECT_EQ(aware.bytes_moved, plain.bytes_moved) << describe(layout);
    }
  }
  // Reduce: the reduce-scatter's (D - 1) m, then the parts of the other domains into the root.
  const Layout halves = bound(Layout::blocks(8, 8, 1), {0, 0, 0, 0, 1, 1, 1, 1});
  const std::size_t m = 8 * 16 * kWord;
  const SimResult reduce = simulate(full_lane(Collective::reduce), halves, 5, m);
  ASSERT_TRUE(reduce.ok) << reduce.error;
  EXPECT_EQ(reduce.cross_numa_bytes, m + m / 2);
}

// Domain by domain, local order inside each: rank order where every domain holds consecutive
// local ranks (claimed, and true), another order where they interleave (not claimed).
TEST(NumaPhases, RankOrderHoldsWhereTheDomainsAreContiguous) {
  for (const Collective c : {Collective::allreduce, Collective::reduce}) {
    const Algorithm& a = full_lane(c);
    ASSERT_NE(a.rank_order, nullptr);
    for (int nodes = 1; nodes <= 3; ++nodes) {
      for (const auto& numa :
           std::vector<std::vector<int>>{{0, 0, 1, 1}, {0, 0, 0, 1, 1}, {0, 1, 1, 2, 2, 2}}) {
        const int n = static_cast<int>(numa.size());
        const Layout layout = bound(Layout::blocks(nodes * n, n, 2), numa);
        ASSERT_TRUE(a.rank_order(layout, 0)) << describe(layout);
        for (const std::size_t words : {std::size_t{3}, static_cast<std::size_t>(4 * n + 1)}) {
          const SimResult res = simulate(a, layout, 0, words * kWord, true);
          EXPECT_TRUE(res.ok) << to_string(c) << " on " << describe(layout) << ": " << res.error;
        }
      }
      const Layout interleaved = bound(Layout::blocks(nodes * 4, 4, 2), {0, 1, 0, 1});
      EXPECT_FALSE(a.rank_order(interleaved, 0)) << describe(interleaved);
      EXPECT_FALSE(simulate(a, interleaved, 0, 8 * kWord, true).ok) << describe(interleaved);
      EXPECT_TRUE(simulate(a, interleaved, 0, 8 * kWord, false).ok) << describe(interleaved);
    }
  }
}

// The hierarchical broadcast's node phase: leaders per NUMA domain first, then each domain, so
// that D - 1 copies of the message cross between NUMA nodes on every node, from every root.
TEST(NumaPhases, NodeBroadcastCrossesEachNumaBoundaryOnce) {
  const Algorithm* a = find_algorithm(Collective::bcast, "hierarchical");
  ASSERT_NE(a, nullptr);
  for (const auto& numa : std::vector<std::vector<int>>{
           {0, 1, 0, 1}, {0, 0, 1, 1}, {0, 1, 2, 0, 1, 2}, {1, 0, 0, 0, 0}, {0, 1, 2, 3, 0, 1}}) {
    const int n = static_cast<int>(numa.size());
    int domains = 0;
    for (const int x : numa) domains = std::max(domains, x + 1);
    for (int nodes = 1; nodes <= 3; ++nodes) {
      const Layout layout = bound(Layout::blocks(nodes * n, n, 2), numa);
      for (int root = 0; root < layout.size; ++root) {
        const std::size_t m = 1000;
        const SimResult res = simulate(*a, layout, root, m);
        ASSERT_TRUE(res.ok) << describe(layout) << ", root " << root << ": " << res.error;
        EXPECT_EQ(res.cross_numa_bytes, static_cast<std::size_t>(nodes * (domains - 1)) * m)
            << describe(layout) << ", root " << root;
        EXPECT_EQ(res.max_rounds, (nodes > 1 ? (nodes > 2 ? 2 : 1) : 0) +
                                      node_bcast_rounds(layout, layout.node_of[root]))
            << describe(layout);
      }
    }
  }
}

// The scratch a rank reserves: a bounce slot per peer of each level (single-chunk parts), and a
// partial per rank of another domain it stands for.
TEST(NumaPhases, ScratchCoversTheStandInsPartials) {
  const Layout uneven = bound(Layout::blocks(5, 5, 1), {0, 1, 1, 1, 1});
  const auto& mates = uneven.node_ranks[0];
  const std::size_t part = 1024 * kWord;
  // Local rank 0, alone in its domain, stands for the other four there: a slot for the other
  // domain's partial of its part, and four partials.
  EXPECT_EQ(node_bounce_bytes(uneven, mates, 0, part, kWord), 5 * part);
  // Local rank 2 stands for nobody: three mates in its domain, one other domain.
  EXPECT_EQ(node_bounce_bytes(uneven, mates, 2, part, kWord), 4 * part);
  const Layout flat = Layout::blocks(5, 5, 1);
  EXPECT_EQ(node_bounce_bytes(flat, flat.node_ranks[0], 0, part, kWord), 4 * part);
}

}  // namespace
}  // namespace lanes::algos
