// lib/node_copy: which single-copy hint each rank's schedule gets, on schedules the algorithms
// build for one node.
#include "lib/node_copy.hpp"

#include <gtest/gtest.h>

#include "algos/registry.hpp"

using lanes::algos::Collective;
using lanes::algos::Layout;
using lanes::detail::kPulledReductionMax;
using lanes::detail::node_copy_of;
using lanes::transport::SingleCopy;

namespace {

// `rank`'s finalized schedule of `name` on `layout`, for `bytes` (4-byte elements).
lanes::algos::Schedule build(Collective coll, const char* name, const Layout& layout, int rank,
                             std::size_t bytes) {
  const lanes::algos::Algorithm* algo = lanes::algos::find_algorithm(coll, name);
  EXPECT_NE(algo, nullptr) << name;
  lanes::algos::CollArgs args;
  args.coll = coll;
  args.rank = rank;
  args.bytes = bytes;
  args.elem = 4;
  lanes::algos::Schedule s = algo->build(layout, args);
  s.finalize();
  return s;
}

SingleCopy hint_on(const Layout& layout, Collective coll, const char* name, int rank,
                   std::size_t bytes, bool cma = false, double cma_slowdown = 0) {
  return node_copy_of(build(coll, name, layout, rank, bytes), layout, rank, cma,
                      coll == Collective::reduce, cma_slowdown);
}

// The hint on one node of p ranks.
SingleCopy hint(Collective coll, const char* name, int p, int rank, std::size_t bytes,
                bool cma = false, double cma_slowdown = 0) {
  return hint_on(Layout::blocks(p, p, 1), coll, name, rank, bytes, cma, cma_slowdown);
}

}  // namespace

TEST(NodeCopy, CollectivesThatCombineNothing) {
  // An alltoall sends everything before it receives anything.
  EXPECT_EQ(hint(Collective::alltoall, "pairwise", 2, 0, 1 << 20), SingleCopy::exchange);
  // A root that feeds several local peers leaves each receiver its own copy, where processes
  // share cores too.
  EXPECT_EQ(hint(Collective::scatter, "linear", 3, 0, 1 << 20), SingleCopy::fanout);
  EXPECT_EQ(hint(Collective::scatter, "linear", 4, 0, 1 << 20, true), SingleCopy::fanout);
  // Between two ranks, sender and receiver share the copy.
  EXPECT_EQ(hint(Collective::bcast, "binomial", 2, 0, 1 << 20), SingleCopy::shared);
  // A root that also copies its own block, as large as its one message, balances the two.
  for (const char* name : {"linear", "binomial"}) {
    EXPECT_EQ(hint(Collective::scatter, name, 2, 0, 1 << 20), SingleCopy::balanced) << name;
  }
  // With a second node, the root has off-node sends to make as well.
  EXPECT_EQ(hint_on(Layout::blocks(4, 2, 1), Collective::scatter, "linear", 0, 1 << 20, false, 3.0),
            SingleCopy::pulled);
}

TEST(NodeCopy, ReductionsPullUpToTheirLimitAndStageBeyond) {
  // The full-lane node phases exchange parts: pulled, up to vectors of kPulledReductionMax.
  EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, 0, kPulledReductionMax),
            SingleCopy::pulled);
  EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, 1, kPulledReductionMax),
            SingleCopy::pulled);
  // Larger vectors stream from memory: staged, where each process has a core...
  EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, 0, 2 * kPulledReductionMax),
            SingleCopy::no);
  EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, 1, 2 * kPulledReductionMax),
            SingleCopy::no);
  // ... and as before where processes share cores (the channels single-copy every large one).
  EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, 0, 2 * kPulledReductionMax, true),
            SingleCopy::pulled);
  // Vectors up to kPulledReductionMin go staged too, their pieces combined as they arrive; just
  // above it, pulled.
  using lanes::detail::kPulledReductionMin;
  for (const int rank : {0, 1}) {
    EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, rank, kPulledReductionMin),
              SingleCopy::no);
    EXPECT_EQ(hint(Collective::allreduce, "recursive-doubling", 2, rank, std::size_t{1} << 16),
              SingleCopy::no);
    EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, rank, kPulledReductionMin + 4),
              SingleCopy::pulled);
    // Where processes share cores, single copy at every size above the chunk.
    EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, rank, std::size_t{1} << 16, true),
              SingleCopy::pulled);
  }
}

TEST(NodeCopy, ReductionsStageAtEverySizeWhereTheKernelsCopyIsSlow) {
  using lanes::detail::kPullReductionSlowdownMax;
  for (const std::size_t bytes : {lanes::detail::kPulledReductionMin + 4, kPulledReductionMax}) {
    for (const int rank : {0, 1}) {
      // A kernel copy at the limit or slower: staged, where each process has a core...
      EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, rank, bytes, false,
                     kPullReductionSlowdownMax),
                SingleCopy::no);
      EXPECT_EQ(hint(Collective::allreduce, "recursive-doubling", 2, rank, bytes, false,
                     3 * kPullReductionSlowdownMax),
                SingleCopy::no);
      // ... as at a ratio that the messages of collectives that combine nothing still take
      // single-copy (an AMD EPYC's 2.2, whose staged 4 MB allreduce was 2.4x the faster) ...
      EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, rank, bytes, false, 2.2),
                SingleCopy::no);
      // ... pulled when it is faster than that ...
      EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, rank, bytes, false,
                     kPullReductionSlowdownMax / 2),
                SingleCopy::pulled);
      // ... and single-copy where processes share cores, whatever its rate.
      EXPECT_EQ(hint(Collective::allreduce, "full-lane", 2, rank, bytes, true,
                     3 * kPullReductionSlowdownMax),
                SingleCopy::pulled);
    }
  }
  // Collectives that combine nothing keep their hints.
  EXPECT_EQ(
      hint(Collective::bcast, "binomial", 2, 0, 1 << 20, false, 3 * kPullReductionSlowdownMax),
      SingleCopy::shared);
  EXPECT_EQ(
      hint(Collective::alltoall, "pairwise", 2, 0, 1 << 20, false, 3 * kPullReductionSlowdownMax),
      SingleCopy::exchange);
}

TEST(NodeCopy, AReducesMessagesGoStagedToBeCombinedAsTheyArrive) {
  // Every rank of a reduce stages its node messages at any size, where each process has a core:
  // the root that receives and combines, the sender that combines nothing, the partitioned one;
  // pipelined, so that large ones stay staged from the shared heap too.
  for (const std::size_t bytes :
       {std::size_t{1} << 16, std::size_t{1} << 20, 2 * kPulledReductionMax}) {
    EXPECT_EQ(hint(Collective::reduce, "linear", 2, 0, bytes), SingleCopy::pipelined);
    EXPECT_EQ(hint(Collective::reduce, "linear", 2, 1, bytes), SingleCopy::pipelined);
    EXPECT_EQ(hint(Collective::reduce, "full-lane", 2, 0, bytes), SingleCopy::pipelined);
    EXPECT_EQ(hint(Collective::reduce, "full-lane", 2, 1, bytes), SingleCopy::pipelined);
  }
  // Where processes share cores, as any other schedule: a rank that only sends on its node leaves
  // the copy to its receiver.
  EXPECT_EQ(hint(Collective::reduce, "linear", 2, 1, 1 << 20, true), SingleCopy::pulled);
}

TEST(NodeCopy, WhereProcessesShareCoresRanksThatOnlySendLeaveTheCopyToTheirReceivers) {
  // A gather's leaves send and receive nothing on their node: pulled (the channels stage such
  // messages up to a limit where the kernel's copy is slow).
  EXPECT_EQ(hint(Collective::gather, "linear", 4, 1, 1 << 16, true), SingleCopy::pulled);
  EXPECT_EQ(hint(Collective::gather, "linear", 4, 1, 1 << 16, false), SingleCopy::shared);
  // A pipeline's relays receive before they send: they share.
  EXPECT_EQ(hint(Collective::bcast, "pipeline", 4, 1, 1 << 20, true), SingleCopy::shared);
}

TEST(NodeCopy, TheVectorIsTheLargestExtentOfTheCallersBuffers) {
  const auto s = build(Collective::allreduce, "full-lane", Layout::blocks(2, 2, 1), 0, 3 << 20);
  EXPECT_EQ(lanes::detail::user_bytes(s), std::size_t{3} << 20);
}
