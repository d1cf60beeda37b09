// Reduce and allreduce algorithms (and the barrier): correctness through the simulator's value
// check (every rank's contribution exactly once) over many layouts, lane counts, roots and vector
// sizes, in-place safety, and the rounds and volumes each algorithm's comment claims; and the
// simulator's reduction checks themselves on hand-built schedules.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/node_phases.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"
#include "algos/simulator.hpp"

namespace lanes::algos {
namespace {

constexpr std::size_t kWord = 8;

std::vector<const Algorithm*> reductions() {
  std::vector<const Algorithm*> out;
  for (Collective c :
       {Collective::reduce, Collective::allreduce, Collective::reduce_scatter_block}) {
    for (const Algorithm* a : algorithms_for(c)) out.push_back(a);
  }
  return out;
}

// Node sizes 1..5 mixed, cut to p ranks.
Layout mixed(int p, int lanes) {
  static const int kSizes[] = {2, 5, 1, 3, 4, 1, 2};
  std::vector<int> sizes;
  for (int i = 0, placed = 0; placed < p; ++i) {
    sizes.push_back(std::min(kSizes[i % 7], p - placed));
    placed += sizes.back();
  }
  return Layout::from_node_sizes(sizes, lanes);
}

std::string what(const Algorithm& a, const Layout& layout, int root, std::size_t words) {
  return std::string(to_string(a.coll)) + " " + std::string(a.name) + " on " + layout.describe() +
         ", root " + std::to_string(root) + ", " + std::to_string(words) + " words";
}

class EveryReduction : public ::testing::TestWithParam<const Algorithm*> {};

// Vectors shorter than p (empty parts), not divisible by p, and long; every root for reduce.
TEST_P(EveryReduction, CombinesEveryContributionOnceUpTo64Ranks) {
  const Algorithm& a = *GetParam();
  for (int p = 1; p <= 64; p += p < 12 ? 1 : 7) {
    std::vector<Layout> layouts = {Layout::blocks(p, 1, 1), Layout::blocks(p, 4, 2),
                                   Layout::blocks(p, p, 1), mixed(p, 3)};
    for (const Layout& layout : layouts) {
      if (a.applicable != nullptr && !a.applicable(layout)) continue;
      const int roots = a.coll == Collective::reduce ? std::min(p, 9) : 1;
      for (int i = 0; i < roots; ++i) {
        const int root = a.coll == Collective::reduce ? (i * 7) % p : 0;
        for (std::size_t words : {std::size_t{1}, static_cast<std::size_t>(p) + 3,
                                  static_cast<std::size_t>(3 * p) + 5}) {
          const SimResult res = simulate(a, layout, root, words * kWord);
          ASSERT_TRUE(res.ok) << what(a, layout, root, words) << ": " << res.error;
        }
      }
    }
  }
}

TEST_P(EveryReduction, SampledTo1024Ranks) {
  const Algorithm& a = *GetParam();
  for (const Layout& layout :
       {Layout::blocks(100, 10, 2), mixed(257, 2), Layout::blocks(1024, 16, 4)}) {
    if (a.applicable != nullptr && !a.applicable(layout)) continue;
    // Reduce-scatter's race check grows as p^3: its samples stop at 257 ranks.
    if (a.coll == Collective::reduce_scatter_block && layout.size > 257) continue;
    const int p = layout.size;
    for (int root : {0, p - 1}) {
      if (a.coll != Collective::reduce && root != 0) continue;
      const SimResult res = simulate(a, layout, root, 5 * kWord);
      ASSERT_TRUE(res.ok) << what(a, layout, root, 5) << ": " << res.error;
    }
  }
}

TEST_P(EveryReduction, EmptyVectorMovesNothing) {
  const Algorithm& a = *GetParam();
  const SimResult res = simulate(a, Layout::blocks(6, 2, 2), 0, 0);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.messages, 0u);
}

std::string name_of(const ::testing::TestParamInfo<const Algorithm*>& p) {
  std::string name = std::string(to_string(p.param->coll)) + "_" + std::string(p.param->name);
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryReduction, ::testing::ValuesIn(reductions()), name_of);

const Algorithm& algo(Collective c, const char* name) {
  const Algorithm* a = find_algorithm(c, name);
  EXPECT_NE(a, nullptr) << name;
  return *a;
}

// Every regular layout of up to 9 nodes of up to 5 ranks, 1 to 3 lanes; vectors shorter than a
// node, not divisible by it, and long.
TEST(AllreduceFullLane, CorrectOnRegularLayouts) {
  const Algorithm& a = algo(Collective::allreduce, "full-lane");
  for (int nodes = 1; nodes <= 9; ++nodes) {
    for (int n = 1; n <= 5; ++n) {
      for (int lanes = 1; lanes <= 3; ++lanes) {
        const Layout layout = Layout::blocks(nodes * n, n, lanes);
        for (std::size_t words :
             {std::size_t{1}, static_cast<std::size_t>(n) + 2, std::size_t{97}}) {
          const SimResult res = simulate(a, layout, 0, words * kWord);
          ASSERT_TRUE(res.ok) << what(a, layout, 0, words) << ": " << res.error;
        }
      }
    }
  }
}

TEST(AllreduceFullLane, MovesOneNthPerRankBetweenNodes) {
  // 4 nodes of 4: each rank sends its part (m / 4) to its partner in each of log2 4 = 2 rounds.
  const std::size_t m = 64 * kWord;
  const Layout layout = Layout::blocks(16, 4, 2);
  const SimResult res = simulate(algo(Collective::allreduce, "full-lane"), layout, 0, m);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.offnode_bytes, 16 * 2 * (m / 4));
}

TEST(ReduceScatterBlock, EveryRankSendsPMinusOneBlocks) {
  for (const char* name : {"ring", "pairwise"}) {
    for (int p : {2, 3, 6}) {
      const std::size_t m = 3 * kWord;
      const SimResult res =
          simulate(algo(Collective::reduce_scatter_block, name), Layout::blocks(p, 2, 1), 0, m);
      ASSERT_TRUE(res.ok) << name << ": " << res.error;
      EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(p * (p - 1)) * m) << name << " " << p;
    }
  }
}

TEST(AllreduceRing, MovesTwiceTheVectorMinusOnePart) {
  // Every rank sends 2 (p - 1) parts of m / p: 2 (p - 1) m over all ranks.
  for (int p : {2, 3, 5, 8}) {
    const std::size_t m = static_cast<std::size_t>(p) * 4 * kWord;
    const SimResult res =
        simulate(algo(Collective::allreduce, "ring"), Layout::blocks(p, 1, 1), 0, m);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.bytes_moved, 2 * static_cast<std::size_t>(p - 1) * m) << p;
    EXPECT_EQ(res.max_rounds, 2 * (p - 1));
  }
}

TEST(AllreduceRecursiveDoubling, RoundsAreLog2PlusFold) {
  const Algorithm& a = algo(Collective::allreduce, "recursive-doubling");
  for (auto [p, rounds] : {std::pair{2, 1}, {4, 2}, {8, 3}, {5, 4}, {6, 4}, {7, 4}, {16, 4}}) {
    const SimResult res = simulate(a, Layout::blocks(p, 2, 1), 0, 3 * kWord);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.max_rounds, rounds) << p;
  }
}

TEST(ReduceBinomial, RoundsAreCeilLog2AndOneMessagePerNonRoot) {
  const Algorithm& a = algo(Collective::reduce, "binomial");
  for (int p : {2, 3, 7, 8, 13}) {
    const SimResult res = simulate(a, Layout::blocks(p, 3, 1), p / 2, 2 * kWord);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.messages, static_cast<std::size_t>(p - 1));
    int log = 0;
    while ((1 << log) < p) ++log;
    EXPECT_EQ(res.max_rounds, log);
  }
}

TEST(AllreduceRing, CutsOnlyAtElementBoundaries) {
  // 4-byte elements: no part boundary inside an element.
  const Layout layout = Layout::blocks(3, 1, 1);
  const Schedule s = build_allreduce_ring(layout, {Collective::allreduce, 0, 0, 40, 4});
  for (const Op& op : s.ops) {
    const Region& r = op.kind == OpKind::send ? op.src : op.dst;
    EXPECT_EQ(r.offset % 4, 0u);
    EXPECT_EQ(r.bytes % 4, 0u);
  }
}

TEST(BarrierDissemination, EveryRankHearsFromEveryRank) {
  const Algorithm& a = algo(Collective::barrier, "dissemination");
  for (int p = 1; p <= 64; ++p) {
    for (const Layout& layout : {Layout::blocks(p, 1, 1), Layout::blocks(p, 3, 2), mixed(p, 2)}) {
      const SimResult res = simulate(a, layout, 0, 0);
      ASSERT_TRUE(res.ok) << layout.describe() << ": " << res.error;
      int log = 0;
      while ((1 << log) < p) ++log;
      EXPECT_EQ(res.max_rounds, log);
    }
  }
  const SimResult big = simulate(a, Layout::blocks(1024, 16, 2), 0, 0);
  EXPECT_TRUE(big.ok) << big.error;
}

TEST(BarrierDissemination, TheSimulatorRejectsABarrierThatLetsARankLeaveEarly) {
  // Four ranks, one round of the dissemination only: rank r hears from r - 1 alone.
  const Layout layout = Layout::blocks(4, 1, 1);
  std::vector<Schedule> scheds(4);
  for (int r = 0; r < 4; ++r) {
    scheds[r].scratch_bytes = 2;
    scheds[r].send((r + 1) % 4, LaneSet::one(0), {Buffer::scratch, 0, 1});
    scheds[r].recv((r + 3) % 4, LaneSet::one(0), {Buffer::scratch, 1, 1});
    scheds[r].finalize();
  }
  const SimResult res = simulate_schedules(Collective::barrier, layout, 0, 0, scheds);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("can leave before rank"), std::string::npos) << res.error;
}

// Two ranks on two nodes: rank 0's schedule, and rank 1's as given.
SimResult two_ranks(const Schedule& zero, const Schedule& one) {
  const Layout layout = Layout::blocks(2, 1, 1);
  return simulate_schedules(Collective::allreduce, layout, 0, 2 * kWord, {zero, one});
}

// The exchange of a correct two-rank allreduce: own vector to recv, the peer's into scratch,
// combined. `combines` copies of the combine (0: a missing contribution, 2: a doubled one).
Schedule exchange(int peer, int combines) {
  Schedule s;
  const Region result{Buffer::recv, 0, 2 * kWord};
  const Region incoming{Buffer::scratch, 0, 2 * kWord};
  s.scratch_bytes = 2 * kWord;
  const OpId own = s.copy({Buffer::send, 0, 2 * kWord}, result);
  const OpId out = s.send(peer, LaneSet::one(0), {Buffer::send, 0, 2 * kWord});
  const OpId in = s.recv(peer, LaneSet::one(0), incoming);
  OpId last = own;
  for (int i = 0; i < combines; ++i) last = s.combine(incoming, result, {last, in, out});
  s.finalize();
  return s;
}

TEST(SimulatorReductions, AcceptsACorrectExchange) {
  const SimResult res = two_ranks(exchange(1, 1), exchange(0, 1));
  EXPECT_TRUE(res.ok) << res.error;
}

TEST(SimulatorReductions, CatchesAMissingContribution) {
  const SimResult res = two_ranks(exchange(1, 1), exchange(0, 0));
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("rank 1: recv word at byte 0 is not the combination"), std::string::npos)
      << res.error;
}

TEST(SimulatorReductions, CatchesADoubleContribution) {
  const SimResult res = two_ranks(exchange(1, 2), exchange(0, 1));
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("rank 0: recv word"), std::string::npos) << res.error;
}

TEST(SimulatorReductions, RejectsCombinesOffElementBoundaries) {
  Schedule bad = exchange(0, 1);
  bad.ops.back().src.offset = 4;
  bad.ops.back().src.bytes = 8;
  bad.ops.back().dst.bytes = 8;
  const SimResult res = two_ranks(exchange(1, 1), bad);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("element boundaries"), std::string::npos) << res.error;
}

TEST(SimulatorReductions, RejectsCombinesOutsideReductions) {
  Schedule s;
  s.combine({Buffer::recv, 0, 8}, {Buffer::recv, 8, 8});
  s.finalize();
  const SimResult res = simulate_schedules(Collective::bcast, Layout::blocks(1, 1, 1), 0, 16, {s});
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("a combine in a bcast"), std::string::npos) << res.error;
}

TEST(SimulatorReductions, InPlaceRacesAreCaught) {
  // Receiving the result into recv while the input still leaves from send: fine with separate
  // buffers, a race in place.
  Schedule folded;
  folded.send(0, LaneSet::one(0), {Buffer::send, 0, 2 * kWord});
  folded.recv(0, LaneSet::one(0), {Buffer::recv, 0, 2 * kWord});
  folded.finalize();
  Schedule keeper;
  const Region result{Buffer::recv, 0, 2 * kWord};
  const Region incoming{Buffer::scratch, 0, 2 * kWord};
  keeper.scratch_bytes = 2 * kWord;
  const OpId own = keeper.copy({Buffer::send, 0, 2 * kWord}, result);
  const OpId in = keeper.recv(1, LaneSet::one(0), incoming);
  const OpId sum = keeper.combine(incoming, result, {own, in});
  keeper.send(1, LaneSet::one(0), result, {sum});
  keeper.finalize();
  const SimResult res = two_ranks(keeper, folded);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("races"), std::string::npos) << res.error;
}

// The exchange with a three-operand combine: recv = send (+) incoming, no copy first.
Schedule exchange_into(int peer) {
  Schedule s;
  const Region incoming{Buffer::scratch, 0, 2 * kWord};
  s.scratch_bytes = 2 * kWord;
  const OpId out = s.send(peer, LaneSet::one(0), {Buffer::send, 0, 2 * kWord});
  const OpId in = s.recv(peer, LaneSet::one(0), incoming);
  s.combine_into({Buffer::send, 0, 2 * kWord}, incoming, {Buffer::recv, 0, 2 * kWord}, {in, out},
                 peer == 0);
  s.finalize();
  return s;
}

TEST(SimulatorReductions, AcceptsACombineIntoAnotherRegion) {
  const SimResult res = two_ranks(exchange_into(1), exchange_into(0));
  EXPECT_TRUE(res.ok) << res.error;
}

TEST(SimulatorReductions, RejectsALeftOperandPartlyOverTheDestination) {
  // Four words: recv[8, 24) = recv[0, 16) (+) scratch, where the operands share a word.
  Schedule bad;
  const std::size_t m = 4 * kWord;
  bad.scratch_bytes = m;
  const OpId out = bad.send(0, LaneSet::one(0), {Buffer::send, 0, m});
  const OpId in = bad.recv(0, LaneSet::one(0), {Buffer::scratch, 0, m});
  bad.combine_into({Buffer::recv, 0, 2 * kWord}, {Buffer::scratch, 0, 2 * kWord},
                   {Buffer::recv, kWord, 2 * kWord}, {in, out});
  bad.finalize();
  Schedule peer;
  peer.scratch_bytes = m;
  peer.send(1, LaneSet::one(0), {Buffer::send, 0, m});
  peer.recv(1, LaneSet::one(0), {Buffer::scratch, 0, m});
  peer.finalize();
  const SimResult res =
      simulate_schedules(Collective::allreduce, Layout::blocks(2, 1, 1), 0, m, {peer, bad});
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("partly overlaps"), std::string::npos) << res.error;
}

TEST(SimulatorReductions, ALeftOperandReadIsOrderedAgainstWrites) {
  // The combine reads scratch while the receive may still write it: no dependency.
  Schedule bad;
  const Region incoming{Buffer::scratch, 0, 2 * kWord};
  bad.scratch_bytes = 2 * kWord;
  const OpId out = bad.send(0, LaneSet::one(0), {Buffer::send, 0, 2 * kWord});
  bad.recv(0, LaneSet::one(0), incoming);
  bad.combine_into(incoming, {Buffer::send, 0, 2 * kWord}, {Buffer::recv, 0, 2 * kWord}, {out});
  bad.finalize();
  const SimResult res = two_ranks(exchange_into(1), bad);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("races"), std::string::npos) << res.error;
}

// Vectors long enough that the node phases cut parts into several chunks through the bounce
// slots (two per peer, reused every other chunk); every root of reduce.
TEST(FullLaneReductions, ChunkedNodePhasesAreCorrect) {
  for (Collective c : {Collective::allreduce, Collective::reduce}) {
    const Algorithm& a = algo(c, "full-lane");
    for (const Layout& layout :
         {Layout::blocks(2, 2, 1), Layout::blocks(3, 3, 1), Layout::blocks(6, 3, 2)}) {
      const int n = layout.node_size_of(0);
      const std::size_t chunk = node_chunk_bytes(n);
      // Parts of 3.5 chunks, and an odd number of words.
      const std::size_t m = (static_cast<std::size_t>(n) * chunk * 7 / 2 / kWord + 1) * kWord;
      const int roots = c == Collective::reduce ? layout.size : 1;
      for (int root = 0; root < roots; ++root) {
        const SimResult res = simulate(a, layout, root, m);
        ASSERT_TRUE(res.ok) << what(a, layout, root, m / kWord) << ": " << res.error;
      }
    }
  }
}

}  // namespace
}  // namespace lanes::algos
