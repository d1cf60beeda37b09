// Reduce and allreduce algorithms (and the barrier): correctness through the simulator's value
// check (every rank's contribution exactly once) over many layouts, lane counts, roots and vector
// sizes, in-place safety, and the rounds and volumes each algorithm's comment claims; and the
// simulator's reduction checks themselves on hand-built schedules.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "algos/common.hpp"
#include "algos/compose.hpp"
#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "algos/node_phases.hpp"
#include "algos/reduce/hierarchical.hpp"
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

// ---------------------------------------------------------------------------------------------
// The reductions built from segments, folds and sub-schedules.

// Vectors of several segments (about 64 KiB each): 3 * 64 KiB + 5 words, and a short one.
constexpr std::size_t kLongWords = 3 * 8192 + 5;

TEST(ReduceSegmented, LongVectorsOnEveryRoot) {
  for (const char* name : {"chain", "binary", "in-order-binary", "rabenseifner"}) {
    const Algorithm& a = algo(Collective::reduce, name);
    for (const Layout& layout : {Layout::blocks(1, 1, 1), Layout::blocks(2, 1, 1),
                                 Layout::blocks(7, 3, 2), mixed(12, 2), Layout::blocks(16, 4, 2)}) {
      for (int root = 0; root < layout.size; root += 1 + layout.size / 4) {
        const SimResult res = simulate(a, layout, root, kLongWords * kWord);
        ASSERT_TRUE(res.ok) << what(a, layout, root, kLongWords) << ": " << res.error;
      }
    }
  }
}

TEST(ReduceLinear, OneMessagePerRankOneRoundEach) {
  const Algorithm& a = algo(Collective::reduce, "linear");
  for (int p : {1, 2, 5, 9}) {
    for (int root : {0, p / 2, p - 1}) {
      const SimResult res = simulate(a, Layout::blocks(p, 2, 1), root, 3 * kWord);
      ASSERT_TRUE(res.ok) << res.error;
      EXPECT_EQ(res.messages, static_cast<std::size_t>(p - 1));
      EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(p - 1) * 3 * kWord);
      EXPECT_EQ(res.max_rounds, p - 1);
    }
  }
}

TEST(ReduceChain, SegmentsPipelineAlongTheChain) {
  const Algorithm& a = algo(Collective::reduce, "chain");
  // 4 segments of 64 KiB: p + S - 2 rounds, every rank but the root sends every segment once.
  const std::size_t m = 4 * 8192 * kWord;
  for (int p : {2, 3, 6, 11}) {
    const SimResult res = simulate(a, Layout::blocks(p, 3, 1), p / 2, m);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.max_rounds, p + 4 - 2) << p;
    EXPECT_EQ(res.messages, static_cast<std::size_t>(4 * (p - 1)));
    EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(p - 1) * m);
  }
  // One segment below 64 KiB: a chain of p - 1 hops.
  const SimResult small = simulate(a, Layout::blocks(9, 3, 1), 4, 100 * kWord);
  ASSERT_TRUE(small.ok) << small.error;
  EXPECT_EQ(small.max_rounds, 8);
  EXPECT_EQ(small.messages, 8u);
}

TEST(ReduceBinaryTrees, TwoRoundsPerLevelAndSegment) {
  // Height H = floor(log2 p): 2 (S + H - 1) rounds (2 S - 1 for p = 2); one message per segment
  // and rank but the root; in-order-binary adds a hop from rank 0 for another root.
  for (const std::size_t segs : {std::size_t{1}, std::size_t{3}}) {
    const std::size_t m = segs == 1 ? 5 * kWord : segs * 8192 * kWord;
    const int s = static_cast<int>(segs);
    for (int p : {2, 3, 4, 7, 8, 13}) {
      int h = 0;
      while ((2 << h) <= p) ++h;
      const int rounds = p == 2 ? 2 * s - 1 : 2 * (s + h - 1);
      const Layout layout = Layout::blocks(p, 4, 1);
      for (const char* name : {"binary", "in-order-binary"}) {
        const SimResult res = simulate(algo(Collective::reduce, name), layout, 0, m);
        ASSERT_TRUE(res.ok) << name << ": " << res.error;
        EXPECT_EQ(res.max_rounds, rounds) << name << " p " << p << " S " << s;
        EXPECT_EQ(res.messages, segs * static_cast<std::size_t>(p - 1)) << name;
        EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(p - 1) * m) << name;
      }
      const SimResult hop = simulate(algo(Collective::reduce, "in-order-binary"), layout, p - 1, m);
      ASSERT_TRUE(hop.ok) << hop.error;
      EXPECT_EQ(hop.max_rounds, 2 * (s + h) - 1) << p;
      EXPECT_EQ(hop.messages, segs * static_cast<std::size_t>(p));
    }
  }
}

// In rank order for every root (the simulator's non-commutative check), one segment and several.
TEST(ReduceInOrderBinary, CombinesInRankOrderForEveryRoot) {
  for (const char* name : {"in-order-binary", "linear", "rabenseifner"}) {
    const Algorithm& a = algo(Collective::reduce, name);
    for (int p : {1, 2, 3, 5, 6, 7, 12, 13}) {
      const Layout layout = Layout::blocks(p, 3, 1);
      for (int root = 0; root < p; ++root) {
        for (const std::size_t words : {std::size_t{1}, static_cast<std::size_t>(p) + 2}) {
          const SimResult res = simulate(a, layout, root, words * kWord, true);
          ASSERT_TRUE(res.ok) << what(a, layout, root, words) << ": " << res.error;
        }
      }
    }
    const SimResult res = simulate(a, Layout::blocks(7, 3, 2), 4, kLongWords * kWord, true);
    ASSERT_TRUE(res.ok) << name << ": " << res.error;
  }
}

TEST(ReduceRabenseifner, HalvesTheVectorUpAndGathersItToTheRoot) {
  // q = 2^floor(log2 p), L = log2 q, e = p - q; m a multiple of q words. Reduce-scatter: q L
  // messages, (q - 1) m in all; gather: q - 1 messages of m / 2 per step; fold: e messages of m.
  const Algorithm& a = algo(Collective::reduce, "rabenseifner");
  for (int p : {2, 3, 4, 6, 8, 11, 16}) {
    int levels = 0;
    while ((2 << levels) <= p) ++levels;
    const int q = 1 << levels;
    const auto e = static_cast<std::size_t>(p - q);
    const std::size_t m = static_cast<std::size_t>(q) * 4 * kWord;
    for (int root : {0, 1, p - 1}) {
      const SimResult res = simulate(a, Layout::blocks(p, 2, 1), root, m);
      ASSERT_TRUE(res.ok) << res.error;
      EXPECT_EQ(res.max_rounds, 2 * levels + (e > 0 ? 1 : 0)) << p;
      EXPECT_EQ(res.messages, e + static_cast<std::size_t>(q * levels + q - 1)) << p;
      EXPECT_EQ(res.bytes_moved, e * m + static_cast<std::size_t>(q - 1) * m +
                                     static_cast<std::size_t>(levels) * m / 2)
          << p << " root " << root;
    }
  }
}

// Every region of every reduction cut on element boundaries with 4-byte elements, vectors of one
// segment and of several.
TEST(ReductionAlgorithms, CutOnlyAtElementBoundaries) {
  for (const Algorithm* a : reductions()) {
    for (const Layout& layout : {Layout::blocks(6, 3, 2), Layout::blocks(12, 4, 1), mixed(11, 2)}) {
      if (a->applicable != nullptr && !a->applicable(layout)) continue;
      for (const std::size_t elems : {std::size_t{37}, std::size_t{3 * 16384 + 7}}) {
        if (a->coll == Collective::reduce_scatter_block && elems > 100) continue;
        for (int r = 0; r < layout.size; ++r) {
          const Schedule s = a->build(layout, {a->coll, r, layout.size - 1, 4 * elems, 4});
          for (const Op& op : s.ops) {
            for (const Region& g : {op.src, op.dst, op.acc}) {
              ASSERT_EQ(g.offset % 4, 0u) << a->name << " rank " << r << "\n" << s.dump();
              ASSERT_EQ(g.bytes % 4, 0u) << a->name << " rank " << r << "\n" << s.dump();
            }
          }
        }
      }
    }
  }
}

// A spliced part: peers through its ranks, every region (the left operand of a three-operand
// combine too) into its place, rounds shifted, its first ops after `after`, its last ops returned.
TEST(Compose, SpliceMapsRanksRegionsRoundsAndDeps) {
  const Layout layout = Layout::blocks(6, 3, 2);
  const std::vector<int> ranks = {1, 4};
  const Layout sub = sub_layout(layout, ranks, true);
  ASSERT_EQ(sub.size, 2);
  EXPECT_EQ(sub.num_nodes(), 2);
  EXPECT_EQ(sub.lanes_of[0], layout.all_lanes());  // alone on its node among `ranks`
  Schedule part;
  part.scratch_bytes = 16;
  const OpId in = part.recv(1, sub.lanes_of[1], {Buffer::scratch, 0, 8}, {}, 0);
  const OpId sum =
      part.combine_into({Buffer::send, 8, 8}, {Buffer::scratch, 0, 8}, {Buffer::recv, 0, 8}, {in});
  part.send(1, sub.lanes_of[0], {Buffer::recv, 0, 8}, {sum}, 1);
  Schedule whole;
  whole.scratch_bytes = 8;
  const OpId before = whole.copy({Buffer::send, 0, 8}, {Buffer::scratch, 0, 8});
  Splice how;
  how.ranks = ranks;
  how.layout = &sub;
  how.self = 0;
  how.buffers.send = Buffer::scratch;
  how.buffers.send_at = 0;
  how.buffers.recv = Buffer::recv;
  how.buffers.recv_at = 16;
  how.buffers.scratch = 8;
  how.first_round = 3;
  how.after = {before};
  const std::vector<OpId> last = splice(whole, part, layout, how);
  ASSERT_EQ(whole.ops.size(), 4u);
  EXPECT_EQ(last, std::vector<OpId>{3});
  EXPECT_EQ(whole.scratch_bytes, 24u);
  const Op& r = whole.ops[1];
  EXPECT_EQ(r.peer, 4);
  EXPECT_EQ(r.round, 3);
  EXPECT_EQ(r.deps, std::vector<OpId>{before});
  EXPECT_EQ(r.dst, (Region{Buffer::scratch, 8, 8}));
  const Op& c = whole.ops[2];
  EXPECT_EQ(c.acc, (Region{Buffer::scratch, 8, 8}));
  EXPECT_EQ(c.src, (Region{Buffer::scratch, 8, 8}));
  EXPECT_EQ(c.dst, (Region{Buffer::recv, 16, 8}));
  EXPECT_EQ(c.deps, std::vector<OpId>{1});
  const Op& out = whole.ops[3];
  EXPECT_EQ(out.peer, 4);
  EXPECT_EQ(out.round, 4);
  EXPECT_EQ(out.lanes, layout.all_lanes());
  EXPECT_EQ(out.deps, std::vector<OpId>{2});
}

TEST(AllreduceRabenseifner, MovesTwiceTheVectorInTwiceLog2Rounds) {
  const Algorithm& a = algo(Collective::allreduce, "rabenseifner");
  for (int p : {2, 3, 4, 5, 8, 12, 16}) {
    int levels = 0;
    while ((2 << levels) <= p) ++levels;
    const int q = 1 << levels;
    const auto e = static_cast<std::size_t>(p - q);
    const std::size_t m = static_cast<std::size_t>(q) * 2 * kWord;
    const SimResult res = simulate(a, Layout::blocks(p, 2, 1), 0, m);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.max_rounds, 2 * levels + (e > 0 ? 2 : 0)) << p;
    EXPECT_EQ(res.messages, 2 * e + static_cast<std::size_t>(2 * q * levels)) << p;
    EXPECT_EQ(res.bytes_moved, 2 * e * m + 2 * static_cast<std::size_t>(q - 1) * m) << p;
  }
}

TEST(AllreduceReduceBcast, ReducesToRankZeroThenBroadcasts) {
  const Algorithm& a = algo(Collective::allreduce, "reduce-bcast");
  for (int p : {1, 2, 3, 8, 13}) {
    const std::size_t m = 5 * kWord;
    const SimResult res = simulate(a, Layout::blocks(p, 3, 2), 0, m);
    ASSERT_TRUE(res.ok) << res.error;
    int log = 0;
    while ((1 << log) < p) ++log;
    EXPECT_EQ(res.max_rounds, 2 * log);
    EXPECT_EQ(res.messages, 2 * static_cast<std::size_t>(p - 1));
    EXPECT_EQ(res.bytes_moved, 2 * static_cast<std::size_t>(p - 1) * m);
  }
}

// Every rank's schedule of `a` (CollArgs::elem = 8, as the simulator builds them).
std::vector<Schedule> schedules_of(const Algorithm& a, const Layout& layout, int root,
                                   std::size_t bytes) {
  std::vector<Schedule> out;
  for (int r = 0; r < layout.size; ++r) out.push_back(a.build(layout, {a.coll, r, root, bytes, 8}));
  return out;
}

// Runs schedules that the simulator accepted with symbolic words: word w of rank r's input is
// "r<r>" (every block alike for reduce_scatter_block), a combine writes "(a+b)" with its left
// operand first (Op::acc, or the destination itself). Returns every rank's receive buffer, one
// expression per word: equal expressions, brackets included, are equal bits for floating point.
using Words = std::vector<std::string>;
std::vector<Words> symbolic_run(Collective coll, const Layout& layout, int root, std::size_t words,
                                const std::vector<Schedule>& scheds) {
  const int p = layout.size;
  const auto n = static_cast<std::size_t>(p);
  std::vector<Words> send(n), recv(n), scratch(n);
  std::vector<std::vector<bool>> done(n);
  std::map<std::tuple<int, int, std::uint32_t>, std::size_t> recv_of;  // (from, to, msg) -> op
  for (int r = 0; r < p; ++r) {
    const bool blocks = coll == Collective::reduce_scatter_block;
    send[r].assign(blocks ? n * words : words, "r" + std::to_string(r));
    const bool output = coll != Collective::reduce || r == root;
    recv[r].assign(output ? words : 0, "?");
    scratch[r].assign(scheds[r].scratch_bytes / kWord, "?");
    done[r].assign(scheds[r].ops.size(), false);
    for (std::size_t i = 0; i < scheds[r].ops.size(); ++i) {
      const Op& op = scheds[r].ops[i];
      if (op.kind == OpKind::recv) recv_of[{op.peer, r, op.msg}] = i;
    }
  }
  const auto words_of = [&](int r, const Region& g) -> Words& {
    return g.buffer == Buffer::send ? send[r] : g.buffer == Buffer::recv ? recv[r] : scratch[r];
  };
  const auto ready = [&](int r, const Op& op) {
    for (OpId d : op.deps) {
      if (!done[r][d]) return false;
    }
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto& ops = scheds[r].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        if (done[r][i] || op.kind == OpKind::recv || !ready(r, op)) continue;
        const std::size_t from = op.src.offset / kWord;
        const std::size_t count = op.src.bytes / kWord;
        if (op.kind == OpKind::send) {
          const std::size_t k = recv_of.at({r, op.peer, op.msg});
          const Op& in = scheds[op.peer].ops[k];
          if (!ready(op.peer, in)) continue;
          const Words& src = words_of(r, op.src);
          Words& dst = words_of(op.peer, in.dst);
          for (std::size_t w = 0; w < count; ++w) dst[in.dst.offset / kWord + w] = src[from + w];
          done[op.peer][k] = true;
        } else {
          const Words& src = words_of(r, op.src);
          Words& dst = words_of(r, op.dst);
          const Region left = op.acc.bytes > 0 ? op.acc : op.dst;
          const Words& with = words_of(r, left);
          for (std::size_t w = 0; w < count; ++w) {
            const std::string& x = src[from + w];
            const std::string y = with[left.offset / kWord + w];
            std::string& to = dst[op.dst.offset / kWord + w];
            if (op.kind == OpKind::copy) {
              to = x;
            } else {
              to = op.src_first ? "(" + x + "+" + y + ")" : "(" + y + "+" + x + ")";
            }
          }
        }
        done[r][i] = true;
        progress = true;
      }
    }
  }
  return recv;
}

// Allreduce: every rank's result is the same expression, brackets included (the same bits for
// floating point).
TEST(AllreduceNewAlgorithms, EveryRankGetsTheSameCombination) {
  for (const char* name : {"rabenseifner", "reduce-bcast", "hierarchical"}) {
    const Algorithm& a = algo(Collective::allreduce, name);
    for (int p : {1, 2, 3, 5, 6, 8, 12, 16}) {
      for (const Layout& layout : {Layout::blocks(p, 1, 1), Layout::blocks(p, 4, 2)}) {
        const std::size_t words = static_cast<std::size_t>(p) + 3;
        const auto got = symbolic_run(Collective::allreduce, layout, 0, words,
                                      schedules_of(a, layout, 0, words * kWord));
        for (const std::string& w : got[0]) ASSERT_EQ(w.find('?'), std::string::npos) << name;
        for (int r = 0; r < p; ++r) {
          ASSERT_EQ(got[static_cast<std::size_t>(r)], got[0])
              << name << " p " << p << " rank " << r;
        }
      }
    }
  }
}

TEST(ReduceScatterBlockRecursiveHalving, Log2RoundsAndTheFold) {
  const Algorithm& a = algo(Collective::reduce_scatter_block, "recursive-halving");
  const std::size_t m = 3 * kWord;
  for (int p : {1, 2, 3, 4, 5, 7, 8, 16}) {
    int levels = 0;
    while ((2 << levels) <= p) ++levels;
    const int q = 1 << levels;
    const int e = p - q;
    const SimResult res = simulate(a, Layout::blocks(p, 2, 1), 0, m);
    ASSERT_TRUE(res.ok) << res.error;
    EXPECT_EQ(res.max_rounds, p == 1 ? 0 : levels + (e > 0 ? 2 : 0)) << p;
    // q log2 q exchanges, and per folded rank its whole input in and its block back.
    EXPECT_EQ(res.messages, static_cast<std::size_t>(q * levels + 2 * e)) << p;
    if (e == 0) {
      // Every rank sends p / 2 + p / 4 + ... + 1 = p - 1 blocks.
      EXPECT_EQ(res.bytes_moved, static_cast<std::size_t>(p * (p - 1)) * m) << p;
    }
  }
}

// The hierarchical transformation with a given number of groups G.
std::vector<Schedule> hierarchical_schedules(const char* base, const Layout& layout, int root,
                                             std::size_t bytes, int groups) {
  const Algorithm& b = algo(Collective::reduce, base);
  std::vector<Schedule> out;
  for (int r = 0; r < layout.size; ++r) {
    out.push_back(build_reduce_hierarchical(layout, {Collective::reduce, r, root, bytes, 8},
                                            b.build, groups));
  }
  return out;
}

constexpr const char* kBases[] = {"linear",   "chain",           "binary",
                                  "binomial", "in-order-binary", "rabenseifner"};

// Every divisor G of p (groups that tile the nodes or not), every root: correct; G = 1 and G = p
// send what the base algorithm sends.
TEST(ReduceHierarchical, EveryGroupCountIsCorrectAndTheEndsAreTheBase) {
  for (const char* base : kBases) {
    const Algorithm& b = algo(Collective::reduce, base);
    for (const Layout& layout : {Layout::blocks(12, 4, 2), mixed(12, 3), Layout::blocks(8, 1, 1),
                                 Layout::blocks(9, 9, 1)}) {
      const int p = layout.size;
      for (int root = 0; root < p; ++root) {
        for (const std::size_t words : {std::size_t{1}, std::size_t{29}}) {
          const std::size_t bytes = words * kWord;
          const SimResult plain = simulate(b, layout, root, bytes);
          ASSERT_TRUE(plain.ok) << plain.error;
          for (int groups = 1; groups <= p; ++groups) {
            if (p % groups != 0) continue;
            const SimResult res =
                simulate_schedules(Collective::reduce, layout, root, bytes,
                                   hierarchical_schedules(base, layout, root, bytes, groups));
            ASSERT_TRUE(res.ok) << base << " G " << groups << " on " << layout.describe()
                                << ", root " << root << ": " << res.error;
            if (groups == 1 || groups == p) {
              EXPECT_EQ(res.messages, plain.messages) << base << " G " << groups;
              EXPECT_EQ(res.bytes_moved, plain.bytes_moved) << base << " G " << groups;
              EXPECT_EQ(res.max_rounds, plain.max_rounds) << base << " G " << groups;
            }
          }
        }
      }
    }
  }
}

TEST(ReduceHierarchical, SegmentedBasesWithSeveralGroups) {
  const Layout layout = Layout::blocks(12, 4, 2);
  for (const char* base : {"chain", "binary", "in-order-binary"}) {
    for (int groups : {2, 3, 4, 6}) {
      for (int root : {0, 5, 11}) {
        const std::size_t bytes = kLongWords * kWord;
        const SimResult res =
            simulate_schedules(Collective::reduce, layout, root, bytes,
                               hierarchical_schedules(base, layout, root, bytes, groups));
        ASSERT_TRUE(res.ok) << base << " G " << groups << ", root " << root << ": " << res.error;
      }
    }
  }
}

// The tree bases send p - 1 messages (one segment) with any G, the rounds add up: linear takes
// (p / G - 1) + (G - 1).
TEST(ReduceHierarchical, MessagesAndRoundsAddUp) {
  const Layout layout = Layout::blocks(16, 4, 2);
  for (int groups : {1, 2, 4, 8, 16}) {
    const int g = 16 / groups;
    for (const char* base : {"linear", "binomial", "binary"}) {
      const SimResult res =
          simulate_schedules(Collective::reduce, layout, 0, 2 * kWord,
                             hierarchical_schedules(base, layout, 0, 2 * kWord, groups));
      ASSERT_TRUE(res.ok) << res.error;
      EXPECT_EQ(res.messages, 15u) << base << " G " << groups;
    }
    const SimResult linear =
        simulate_schedules(Collective::reduce, layout, 0, 2 * kWord,
                           hierarchical_schedules("linear", layout, 0, 2 * kWord, groups));
    EXPECT_EQ(linear.max_rounds, (g - 1) + (groups - 1)) << groups;
  }
}

// The registered transformations (G from the cost model) on vectors of several segments.
TEST(ReduceHierarchical, RegisteredOnLongVectors) {
  for (const Algorithm* a : reductions()) {
    if (a->name.find("hierarchical") == std::string_view::npos) continue;
    for (const Layout& layout : {Layout::blocks(8, 2, 2), Layout::blocks(12, 4, 1), mixed(9, 2)}) {
      for (int root : {0, layout.size / 2}) {
        if (a->coll != Collective::reduce && root != 0) continue;
        const SimResult res = simulate(*a, layout, root, kLongWords * kWord);
        ASSERT_TRUE(res.ok) << what(*a, layout, root, kLongWords) << ": " << res.error;
      }
    }
  }
}

// The transformation keeps its base's rank order with every G (groups of consecutive ranks, the
// leaders in group order): for every root where the base has it.
TEST(ReduceHierarchical, KeepsTheBasesRankOrderWithEveryGroupCount) {
  for (const char* base : kBases) {
    const Algorithm& b = algo(Collective::reduce, base);
    if (b.rank_order == nullptr) continue;
    for (const Layout& layout : {Layout::blocks(12, 4, 1), Layout::blocks(16, 4, 2)}) {
      const int p = layout.size;
      for (int groups = 1; groups <= p; ++groups) {
        if (p % groups != 0) continue;
        for (int root = 0; root < p; root += 3) {
          if (!b.rank_order(layout, root)) continue;
          const SimResult res = simulate_schedules(
              Collective::reduce, layout, root, 3 * kWord,
              hierarchical_schedules(base, layout, root, 3 * kWord, groups), true);
          ASSERT_TRUE(res.ok) << base << " G " << groups << " root " << root << ": " << res.error;
        }
      }
    }
  }
}

// Leaders alone among leaders on their node send over all of the node's lanes; inside the
// groups every rank keeps to the lanes it drives.
TEST(ReduceHierarchical, LoneLeadersDriveEveryLane) {
  const Layout layout = Layout::blocks(16, 4, 2);
  const auto scheds = hierarchical_schedules("binomial", layout, 0, 4 * kWord, 4);
  ASSERT_TRUE(simulate_schedules(Collective::reduce, layout, 0, 4 * kWord, scheds).ok);
  for (int r = 0; r < 16; ++r) {
    for (const Op& op : scheds[static_cast<std::size_t>(r)].ops) {
      if (op.kind != OpKind::send) continue;
      const bool between = !layout.same_node(r, op.peer);
      EXPECT_EQ(op.lanes, between ? layout.all_lanes() : layout.lanes_of[r]) << "rank " << r;
      EXPECT_EQ(between, r % 4 == 0) << "rank " << r;
    }
  }
}

// The chosen G is the cheapest the model sees, never costlier than the base algorithm; for the
// linear base it is about sqrt(p), as the paper derives.
TEST(ReduceHierarchical, ChosenGroupsNeverCostMoreThanTheBase) {
  const MachineParams reference;
  for (const char* base : kBases) {
    const Algorithm& b = algo(Collective::reduce, base);
    const Algorithm& h = algo(Collective::reduce, ("hierarchical-" + std::string(base)).c_str());
    for (long long nodes : {1LL, 2LL, 6LL, 64LL, 1000LL}) {
      for (long long ppn : {1LL, 4LL, 12LL, 32LL}) {
        for (std::size_t bytes : {std::size_t{8}, std::size_t{1} << 16, std::size_t{1} << 24}) {
          CostInput in;
          in.nodes = nodes;
          in.ppn = ppn;
          in.lanes = 2;
          in.bytes = bytes;
          const int groups = hierarchical_groups(b.cost, in.p(), in);
          EXPECT_EQ(in.p() % groups, 0);
          EXPECT_LE(h.cost(in, reference), b.cost(in, reference) * (1 + 1e-12))
              << base << " on " << nodes << " x " << ppn << ", " << bytes << " bytes, G " << groups;
          EXPECT_DOUBLE_EQ(hierarchical_cost(b.cost, in, in.p(), 1, reference),
                           b.cost(in, reference));
          EXPECT_DOUBLE_EQ(hierarchical_cost(b.cost, in, in.p(), in.p(), reference),
                           b.cost(in, reference));
        }
      }
    }
  }
  CostInput one_node;
  one_node.ppn = 64;
  one_node.bytes = 8;
  EXPECT_EQ(hierarchical_groups(cost_reduce_linear, 64, one_node), 8);
  const Layout layout = Layout::blocks(64, 64, 1);
  const SimResult res = simulate(algo(Collective::reduce, "hierarchical-linear"), layout, 0, 8);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.max_rounds, 7 + 7);
  EXPECT_EQ(res.messages, 63u);
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

// The hierarchical barrier: nobody leaves before all arrived, on every layout; 2 (n - 1) tokens
// on a node of n, one per leader and round among the N leaders, 2 A + ceil(log2 N) rounds.
TEST(BarrierHierarchical, EveryRankHearsFromEveryRankThroughItsLeaders) {
  const Algorithm& a = algo(Collective::barrier, "hierarchical");
  for (int p = 1; p <= 64; ++p) {
    for (const Layout& layout :
         {Layout::blocks(p, 1, 1), Layout::blocks(p, 3, 2), mixed(p, 2), Layout::blocks(p, p, 1)}) {
      const SimResult res = simulate(a, layout, 0, 0);
      ASSERT_TRUE(res.ok) << layout.describe() << ": " << res.error;
      const int nodes = layout.num_nodes();
      int log = 0;
      while ((1 << log) < nodes) ++log;
      int most = 1;
      for (const auto& ranks : layout.node_ranks) most = std::max(most, int(ranks.size()));
      EXPECT_EQ(res.max_rounds, 2 * (most > 1 ? 1 : 0) + log) << layout.describe();
      const auto among = static_cast<std::size_t>(nodes > 1 ? nodes * log : 0);
      EXPECT_EQ(res.messages, 2 * static_cast<std::size_t>(p - nodes) + among) << layout.describe();
      EXPECT_EQ(res.offnode_bytes, among) << layout.describe();
    }
  }
  EXPECT_TRUE(simulate(a, Layout::blocks(1024, 16, 2), 0, 0).ok);
}

// With NUMA domains: the members arrive at their domain's leader, the domain leaders at the
// node's; one token each way crosses between two domains.
TEST(BarrierHierarchical, ArrivesDomainByDomain) {
  const Algorithm& a = algo(Collective::barrier, "hierarchical");
  for (const std::vector<int>& numa : std::vector<std::vector<int>>{
           {0, 0, 1, 1}, {0, 1, 0, 1}, {0, 1, 2, 0, 1, 2}, {0, 0, 0, 1}}) {
    const int n = static_cast<int>(numa.size());
    int domains = 0;
    for (const int x : numa) domains = std::max(domains, x + 1);
    for (int nodes = 1; nodes <= 5; ++nodes) {
      Layout layout = Layout::blocks(nodes * n, n, 2);
      for (int r = 0; r < layout.size; ++r) layout.numa_of[r] = numa[layout.local_rank_of[r]];
      const SimResult res = simulate(a, layout, 0, 0);
      ASSERT_TRUE(res.ok) << layout.describe() << ": " << res.error;
      int log = 0;
      while ((1 << log) < nodes) ++log;
      EXPECT_EQ(res.max_rounds, 4 + log);
      EXPECT_EQ(res.cross_numa_bytes, static_cast<std::size_t>(nodes * 2 * (domains - 1)));
    }
  }
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

// Ranks 0..p-1 dealt to `nodes` nodes round robin: regular when nodes divides p, and no node
// holds consecutive ranks.
Layout dealt(int p, int nodes, int lanes) {
  std::vector<int> labels;
  for (int r = 0; r < p; ++r) labels.push_back(r % nodes);
  return Layout::from_node_labels(labels, lanes);
}

// Every rank's schedule of `a`, or of `a` toward rank 0 sent on to `root` (reroot_reduce).
std::vector<Schedule> schedules(const Algorithm& a, const Layout& layout, int root,
                                std::size_t bytes, std::size_t elem, bool reroot) {
  std::vector<Schedule> out;
  for (int r = 0; r < layout.size; ++r) {
    const CollArgs args{a.coll, r, root, bytes, elem};
    out.push_back(
        reroot ? reroot_reduce(a.build(layout, CollArgs{a.coll, r, 0, bytes, elem}), layout, args)
               : a.build(layout, args));
  }
  return out;
}

// Where an algorithm claims rank order (Algorithm::rank_order), a non-commutative combination
// (the simulator's composition of affine maps) comes out right: every root where it holds, the
// others of a reduce through rank 0; also on layouts whose nodes hold no consecutive ranks.
TEST_P(EveryReduction, RankOrderClaimsHold) {
  const Algorithm& a = *GetParam();
  if (a.rank_order == nullptr) {
    // An algorithm that does not claim rank order shows another order somewhere (else it should
    // claim it).
    bool other = false;
    for (int p = 3; p <= 8 && !other; ++p) {
      for (const Layout& layout : {Layout::blocks(p, 1, 1), Layout::blocks(p, 2, 1)}) {
        if (a.applicable != nullptr && !a.applicable(layout)) continue;
        const std::size_t m = static_cast<std::size_t>(p) * kWord;
        ASSERT_TRUE(simulate(a, layout, 0, m).ok) << what(a, layout, 0, p);
        other = other || !simulate(a, layout, 0, m, true).ok;
      }
    }
    EXPECT_TRUE(other) << a.name << " combined in rank order on every layout tried";
    return;
  }
  int checked = 0;
  for (int p = 1; p <= 40; p += p < 10 ? 1 : 5) {
    std::vector<Layout> layouts = {Layout::blocks(p, 1, 1), Layout::blocks(p, 4, 2),
                                   Layout::blocks(p, 3, 1), mixed(p, 2)};
    if (p % 2 == 0) layouts.push_back(dealt(p, 2, 1));
    for (const Layout& layout : layouts) {
      if (a.applicable != nullptr && !a.applicable(layout)) continue;
      const int roots = a.coll == Collective::reduce ? std::min(p, 7) : 1;
      for (int i = 0; i < roots; ++i) {
        const int root = (i * 5) % p;
        const bool direct = a.rank_order(layout, root);
        const bool reroot = !direct && a.coll == Collective::reduce && a.rank_order(layout, 0);
        if (!direct && !reroot) continue;
        for (std::size_t words : {std::size_t{1}, static_cast<std::size_t>(p) + 3}) {
          const std::size_t m = words * kWord;
          const SimResult res = simulate_schedules(
              a.coll, layout, root, m, schedules(a, layout, root, m, kWord, reroot), true);
          ASSERT_TRUE(res.ok) << what(a, layout, root, words) << (reroot ? " via rank 0" : "")
                              << ": " << res.error;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 20);
}

// The simulator's rank-order check catches the rotations of the algorithms that do not claim
// rank order, and the claims' limits: a binomial reduce to another root, full-lane algorithms on
// nodes of ranks that are not consecutive.
TEST(RankOrder, OtherOrdersAreCaught) {
  const Layout three = Layout::blocks(3, 1, 1);
  EXPECT_FALSE(simulate(algo(Collective::allreduce, "ring"), three, 0, 3 * kWord, true).ok);
  EXPECT_FALSE(
      simulate(algo(Collective::reduce_scatter_block, "ring"), three, 0, 3 * kWord, true).ok);
  EXPECT_FALSE(simulate(algo(Collective::reduce, "binomial"), three, 1, 3 * kWord, true).ok);
  const Layout interleaved = dealt(4, 2, 1);
  EXPECT_FALSE(consecutive_nodes(interleaved));
  EXPECT_TRUE(consecutive_nodes(Layout::blocks(7, 3, 1)));
  for (Collective c : {Collective::allreduce, Collective::reduce}) {
    const Algorithm& a = algo(c, "full-lane");
    EXPECT_FALSE(a.rank_order(interleaved, 0));
    EXPECT_FALSE(simulate(a, interleaved, 0, 4 * kWord, true).ok) << to_string(c);
    EXPECT_TRUE(simulate(a, interleaved, 0, 4 * kWord, false).ok) << to_string(c);
  }
  EXPECT_FALSE(algo(Collective::reduce, "full-lane").rank_order(Layout::blocks(4, 2, 1), 2));
  EXPECT_TRUE(algo(Collective::reduce, "full-lane").rank_order(Layout::blocks(4, 2, 1), 1));
  // The commutative check accepts them all.
  EXPECT_TRUE(simulate(algo(Collective::allreduce, "ring"), three, 0, 3 * kWord).ok);
}

// Element sizes that do not divide the node phases' power-of-two chunks (user operations on
// structs): every combine and every chunk holds whole elements, parts of several chunks, and the
// result is right in rank order where the algorithm claims it.
TEST(RankOrder, ElementsOfAnySizeStayWhole) {
  for (const std::size_t elem : {std::size_t{24}, std::size_t{40}}) {
    for (int n : {2, 3, 5}) {
      const std::size_t chunk = node_chunk_bytes(n, elem);
      EXPECT_EQ(chunk % elem, 0u);
      EXPECT_LE(chunk, node_chunk_bytes(n));
      EXPECT_GT(chunk + elem, node_chunk_bytes(n));
    }
    for (const Algorithm* a : reductions()) {
      const Layout layout = Layout::blocks(6, 3, 2);  // two nodes of three, two lanes
      const int n = layout.node_size_of(0);
      // Parts of about 2.5 chunks, whole elements (and whole simulated words).
      const std::size_t m =
          (static_cast<std::size_t>(n) * node_chunk_bytes(n, elem) * 5 / 2 / (elem * kWord) + 1) *
          elem * kWord;
      const int root = a->coll == Collective::reduce ? layout.size - 1 : 0;
      const bool reroot = a->coll == Collective::reduce && a->rank_order != nullptr &&
                          !a->rank_order(layout, root) && a->rank_order(layout, 0);
      const std::size_t bytes = a->coll == Collective::reduce_scatter_block ? elem * kWord : m;
      const std::vector<Schedule> scheds = schedules(*a, layout, root, bytes, elem, reroot);
      for (const Schedule& sched : scheds) {
        for (const Op& op : sched.ops) {
          if (op.kind != OpKind::combine) continue;
          ASSERT_EQ(op.src.bytes % elem, 0u) << a->name << " " << sched.dump();
          ASSERT_EQ(op.src.offset % elem, 0u) << a->name;
          ASSERT_EQ(op.dst.offset % elem, 0u) << a->name;
        }
      }
      const bool ordered = a->rank_order != nullptr && (reroot || a->rank_order(layout, root));
      const SimResult res = simulate_schedules(a->coll, layout, root, bytes, scheds, ordered);
      ASSERT_TRUE(res.ok) << what(*a, layout, root, bytes / kWord) << ", " << elem
                          << "-byte elements: " << res.error;
    }
  }
}

// A reduce through rank 0 in place at the root: the result lands after every read of the input.
TEST(RankOrder, RerootedReduceIsSafeInPlace) {
  for (const char* name : {"binomial", "full-lane"}) {
    const Algorithm& a = algo(Collective::reduce, name);
    const Layout layout = Layout::blocks(6, 2, 1);
    for (int root = 1; root < layout.size; ++root) {
      const std::vector<Schedule> scheds = schedules(a, layout, root, 7 * kWord, kWord, true);
      for (const Op& op : scheds[0].ops) {  // rank 0 is not the root: it has no receive buffer
        for (const Region& region : {op.src, op.dst, op.acc}) {
          ASSERT_TRUE(region.buffer != Buffer::recv || region.bytes == 0) << scheds[0].dump();
        }
      }
      const Op& last = scheds[static_cast<std::size_t>(root)].ops.back();
      EXPECT_TRUE(last.kind == OpKind::recv && last.peer == 0 &&
                  last.deps.size() + 1 == scheds[static_cast<std::size_t>(root)].ops.size());
      const SimResult res =
          simulate_schedules(Collective::reduce, layout, root, 7 * kWord, scheds, true);
      ASSERT_TRUE(res.ok) << name << " root " << root << ": " << res.error;
    }
  }
}

}  // namespace
}  // namespace lanes::algos
