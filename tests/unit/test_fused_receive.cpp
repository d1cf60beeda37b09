// lib/fused_receive: which node receives may combine their message as it arrives, on schedules
// built by hand and by the algorithms.
#include "lib/fused_receive.hpp"

#include <gtest/gtest.h>

#include "algos/registry.hpp"

using lanes::algos::Buffer;
using lanes::algos::Collective;
using lanes::algos::LaneSet;
using lanes::algos::Layout;
using lanes::algos::OpId;
using lanes::algos::OpKind;
using lanes::algos::Region;
using lanes::algos::Schedule;
using lanes::detail::fusable_receives;
using lanes::detail::Fusion;
using lanes::detail::kNoFusion;

namespace {

std::vector<std::vector<OpId>> dependents_of(const Schedule& s) {
  std::vector<std::vector<OpId>> out(s.ops.size());
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    for (const OpId d : s.ops[i].deps) out[d].push_back(static_cast<OpId>(i));
  }
  return out;
}

std::vector<Fusion> fusions(const Schedule& s, const Layout& layout, int rank) {
  return fusable_receives(s, layout, rank, dependents_of(s));
}

const Region kScratch{Buffer::scratch, 0, 4096};
const Region kInput{Buffer::send, 0, 4096};
const Region kResult{Buffer::recv, 0, 4096};

}  // namespace

TEST(FusedReceive, ARecvIntoScratchThatOneCombineConsumes) {
  const Layout node = Layout::blocks(2, 2, 1);
  Schedule s;
  const OpId r = s.recv(1, LaneSet::one(0), kScratch);
  const OpId c = s.combine_into(kInput, kScratch, kResult, {r});
  s.finalize();
  const auto f = fusions(s, node, 0);
  EXPECT_EQ(f[r].combine, c);
  EXPECT_FALSE(f[r].as_acc);
  EXPECT_EQ(f[c].combine, kNoFusion);
  // The received region as the left operand.
  Schedule left;
  const OpId r2 = left.recv(1, LaneSet::one(0), kScratch);
  const OpId c2 = left.combine_into(kScratch, kInput, kResult, {r2});
  left.finalize();
  const auto f2 = fusions(left, node, 0);
  EXPECT_EQ(f2[r2].combine, c2);
  EXPECT_TRUE(f2[r2].as_acc);
}

TEST(FusedReceive, NotWhereTheMessageIsNeededAfterwards) {
  const Layout node = Layout::blocks(2, 2, 1);
  {  // sent on after the combine
    Schedule s;
    const OpId r = s.recv(1, LaneSet::one(0), kScratch);
    const OpId c = s.combine_into(kInput, kScratch, kResult, {r});
    s.send(1, LaneSet::one(0), kScratch, {c});
    s.finalize();
    EXPECT_EQ(fusions(s, node, 0)[r].combine, kNoFusion);
  }
  {  // combined into in place: the result lands where the message was
    Schedule s;
    const OpId r = s.recv(1, LaneSet::one(0), kScratch);
    s.combine(kInput, kScratch, {r});
    s.finalize();
    EXPECT_EQ(fusions(s, node, 0)[r].combine, kNoFusion);
  }
  {  // two ops wait for the receive
    Schedule s;
    const OpId r = s.recv(1, LaneSet::one(0), kScratch);
    s.combine_into(kInput, kScratch, kResult, {r});
    s.copy(kScratch, Region{Buffer::scratch, 8192, 4096}, {r});
    s.finalize();
    EXPECT_EQ(fusions(s, node, 0)[r].combine, kNoFusion);
  }
  {  // into the caller's buffer, not scratch
    Schedule s;
    const OpId r = s.recv(1, LaneSet::one(0), kResult);
    s.combine_into(kInput, kResult, Region{Buffer::scratch, 0, 4096}, {r});
    s.finalize();
    EXPECT_EQ(fusions(s, node, 0)[r].combine, kNoFusion);
  }
  {  // from another node
    Schedule s;
    const OpId r = s.recv(1, LaneSet::one(0), kScratch);
    s.combine_into(kInput, kScratch, kResult, {r});
    s.finalize();
    EXPECT_EQ(fusions(s, Layout::blocks(2, 1, 1), 0)[r].combine, kNoFusion);
  }
}

TEST(FusedReceive, ABounceSlotReusedAfterItsCombine) {
  // The next message overwrites the slot before anything reads it again: both fuse.
  const Layout node = Layout::blocks(2, 2, 1);
  Schedule s;
  const Region first{Buffer::recv, 0, 4096}, second{Buffer::recv, 4096, 4096};
  const OpId r1 = s.recv(1, LaneSet::one(0), kScratch);
  const OpId c1 = s.combine_into(kInput, kScratch, first, {r1});
  const OpId r2 = s.recv(1, LaneSet::one(0), kScratch, {c1});
  const OpId c2 = s.combine_into(Region{Buffer::send, 4096, 4096}, kScratch, second, {r2});
  s.finalize();
  const auto f = fusions(s, node, 0);
  EXPECT_EQ(f[r1].combine, c1);
  EXPECT_EQ(f[r2].combine, c2);
}

TEST(FusedReceive, TheAlgorithmsReceivesCombinedOnTheNode) {
  const auto build = [](Collective coll, const char* name, int p, int rank) {
    const lanes::algos::Algorithm* algo = lanes::algos::find_algorithm(coll, name);
    EXPECT_NE(algo, nullptr) << name;
    lanes::algos::CollArgs args;
    args.coll = coll;
    args.rank = rank;
    args.bytes = 1 << 20;
    args.elem = 4;
    Schedule s = algo->build(Layout::blocks(p, p, 1), args);
    s.finalize();
    return s;
  };
  const auto fused = [&](Collective coll, const char* name, int p, int rank) {
    const Schedule s = build(coll, name, p, rank);
    const auto f = fusions(s, Layout::blocks(p, p, 1), rank);
    int n = 0;
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      if (f[i].combine == kNoFusion) continue;
      ++n;
      EXPECT_EQ(s.ops[i].kind, OpKind::recv);
      EXPECT_EQ(s.ops[f[i].combine].kind, OpKind::combine);
    }
    return n;
  };
  // A linear reduce's root combines each peer's vector as it arrives; its senders receive none.
  EXPECT_EQ(fused(Collective::reduce, "linear", 4, 0), 3);
  EXPECT_EQ(fused(Collective::reduce, "linear", 4, 2), 0);
  // The partitioned (full-lane) reduce and allreduce combine their node reduce-scatter's chunks;
  // what the allreduce's allgather receives is nobody's operand.
  EXPECT_GT(fused(Collective::reduce, "full-lane", 2, 0), 0);
  EXPECT_GT(fused(Collective::allreduce, "full-lane", 2, 1), 0);
  const Schedule ar = build(Collective::allreduce, "full-lane", 2, 1);
  const auto f = fusions(ar, Layout::blocks(2, 2, 1), 1);
  for (std::size_t i = 0; i < ar.ops.size(); ++i) {
    if (ar.ops[i].kind == OpKind::recv && ar.ops[i].dst.buffer == Buffer::recv) {
      EXPECT_EQ(f[i].combine, kNoFusion);
    }
  }
}
