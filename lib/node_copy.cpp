#include "lib/node_copy.hpp"

#include <algorithm>
#include <set>

#include "algos/schedule.hpp"

namespace lanes::detail {

std::size_t user_bytes(const algos::Schedule& schedule) {
  std::size_t most = 0;
  const auto extent = [&most](const algos::Region& r) {
    if (r.buffer != algos::Buffer::scratch) most = std::max(most, r.offset + r.bytes);
  };
  for (const algos::Op& op : schedule.ops) {
    extent(op.src);
    extent(op.dst);
    extent(op.acc);
  }
  return most;
}

bool node_receiver_busy(const algos::Schedule& schedule, const algos::Layout& layout, int rank) {
  bool copies = false, receives = false;
  for (const algos::Op& op : schedule.ops) {
    if (op.kind == algos::OpKind::combine) return false;
    if (op.kind == algos::OpKind::copy) copies = true;
    if (op.kind == algos::OpKind::recv && layout.same_node(op.peer, rank)) receives = true;
  }
  return copies && receives;
}

transport::SingleCopy node_copy_of(const algos::Schedule& schedule, const algos::Layout& layout,
                                   int rank, bool cma, bool reduce, double cma_slowdown) {
  using algos::OpKind;
  using transport::SingleCopy;
  std::set<int> send_peers, recv_peers;  // local peers this rank sends to, receives from
  bool combines = false, off_node = false;
  std::size_t copied = 0, sent = 0;  // bytes this rank copies locally, sends on its node
  for (const algos::Op& op : schedule.ops) {
    if (op.kind == OpKind::combine) combines = true;
    if (op.kind == OpKind::copy) copied += op.src.bytes;
    if (op.kind == OpKind::copy || op.kind == OpKind::combine) continue;
    if (!layout.same_node(op.peer, rank)) {
      off_node = true;
      continue;
    }
    (op.kind == OpKind::send ? send_peers : recv_peers).insert(op.peer);
    if (op.kind == OpKind::send) sent += op.src.bytes;
  }
  const bool copies = copied > 0;
  // Where each process has a core: a reduce's messages go staged, and their receivers combine
  // them straight out of the slots; other reductions' go staged when their vectors stream from
  // memory or the kernel's single copy is slow here.
  if (reduce && !cma) return SingleCopy::pipelined;
  if (combines && !cma &&
      (user_bytes(schedule) > kPulledReductionMax || user_bytes(schedule) <= kPulledReductionMin ||
       cma_slowdown >= kPullReductionSlowdownMax)) {
    return SingleCopy::no;
  }
  const algos::NodeSendOrder order = algos::node_send_order(schedule, layout, rank);
  if (order.sends_before_receiving()) return SingleCopy::exchange;
  const bool exchange = order.free_send && order.receives;
  // A rank that receives on its node before it sends there relays to a receiver that is likely
  // busier (a gather's root): it shares the copy rather than leave all of it to that receiver.
  const bool sender_busy = send_peers.size() > 1 || (copies && recv_peers.empty());
  // A sender whose only other work is a local copy as large as what it sends to its one local
  // peer (scatter's root between two ranks) takes a share of its messages where the kernel's
  // copy is slow, so that it and its receiver finish together.
  if (!exchange && !combines && !off_node && send_peers.size() == 1 && recv_peers.empty() &&
      copied == sent) {
    return SingleCopy::balanced;
  }
  // A sender that feeds several local peers and receives nothing on its node (scatter's root)
  // leaves each receiver its whole message, where processes share cores too.
  if (!combines && recv_peers.empty() && send_peers.size() > 1) return SingleCopy::fanout;
  // Where processes share cores, a rank that only sends on its node (a gather's leaves) leaves
  // the copy to its receivers too: its sends then go staged where the kernel's copy is slow
  // (NodeChannels::single_copy_min), and it is done once its pieces are in the slots.
  if (exchange || (!combines && (sender_busy || (cma && recv_peers.empty())))) {
    return SingleCopy::pulled;
  }
  return combines ? SingleCopy::no : SingleCopy::shared;
}

}  // namespace lanes::detail
