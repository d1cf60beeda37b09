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

transport::SingleCopy node_copy_of(const algos::Schedule& schedule, const algos::Layout& layout,
                                   int rank, bool cma, bool reduce, double cma_slowdown) {
  using algos::OpKind;
  using transport::SingleCopy;
  std::set<int> send_peers, recv_peers;  // local peers this rank sends to, receives from
  bool combines = false, copies = false;
  for (const algos::Op& op : schedule.ops) {
    if (op.kind == OpKind::combine) combines = true;
    if (op.kind == OpKind::copy && op.src.bytes > 0) copies = true;
    if (op.kind == OpKind::copy || op.kind == OpKind::combine) continue;
    if (!layout.same_node(op.peer, rank)) continue;
    (op.kind == OpKind::send ? send_peers : recv_peers).insert(op.peer);
  }
  // Where each process has a core: a reduce's messages go staged, and their receivers combine
  // them straight out of the slots; other reductions' go staged when their vectors stream from
  // memory or the kernel's single copy is slow here.
  if (reduce && !cma) return SingleCopy::no;
  if (combines && !cma &&
      (user_bytes(schedule) > kPulledReductionMax || cma_slowdown >= kPullReductionSlowdownMax)) {
    return SingleCopy::no;
  }
  const algos::NodeSendOrder order = algos::node_send_order(schedule, layout, rank);
  if (order.sends_before_receiving()) return SingleCopy::exchange;
  const bool exchange = order.free_send && order.receives;
  // A rank that receives on its node before it sends there relays to a receiver that is likely
  // busier (a gather's root): it shares the copy rather than leave all of it to that receiver.
  const bool sender_busy = send_peers.size() > 1 || (copies && recv_peers.empty());
  if (exchange || (!combines && sender_busy)) return SingleCopy::pulled;
  return combines ? SingleCopy::no : SingleCopy::shared;
}

}  // namespace lanes::detail
