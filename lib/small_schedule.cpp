// The smallest schedules run here without an Execution: a handful of ops (two or a few ranks of
// one node: every collective of small blocks), messages only to ranks of this node. The call
// itself copies, combines, writes its peers' slots and polls its own, with its bookkeeping in
// fixed arrays and its transfers and scratch kept by the communicator from call to call, so a
// collective of a few bytes costs little more than its slot writes.
#include <array>
#include <string>
#include <vector>

#include "lib/comm_impl.hpp"
#include "lib/executor.hpp"
#include "lib/local_ops.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes::detail {

using algos::Op;
using algos::OpId;
using algos::OpKind;
using transport::XferState;

bool is_small_node_schedule(const algos::Schedule& schedule, const algos::Layout& layout,
                            int rank) {
  constexpr std::size_t kMaxScratch = 256 * 1024;
  if (schedule.ops.empty() || schedule.ops.size() > kMaxSmallOps ||
      schedule.scratch_bytes > kMaxScratch) {
    return false;
  }
  for (const Op& op : schedule.ops) {
    const bool message = op.kind == OpKind::send || op.kind == OpKind::recv;
    if (message && !layout.same_node(op.peer, rank)) return false;
  }
  return true;
}

namespace {

class SmallRun {
 public:
  SmallRun(CommImpl& comm, const PreparedSchedule& prepared, const std::byte* send, std::byte* recv,
           const Combiner& combine, std::size_t elem)
      : comm_(comm),
        prepared_(prepared),
        ops_(prepared.schedule.ops),
        buffers_{const_cast<std::byte*>(send), recv,
                 comm.small_scratch(prepared.schedule.scratch_bytes)},
        combine_(combine),
        elem_(elem),
        channels_(comm.channels()),
        transfers_(comm.small_transfers()) {}

  void run() {
    // Claimed as an Execution would: one sequence number, each peer's message numbers.
    (void)comm_.next_seq();
    for (std::size_t i = 0; i < prepared_.node_sends.size(); ++i) {
      const auto [peer, count] = prepared_.node_sends[i];
      send_base_[i] = comm_.claim_node_sends(peer, count);
    }
    for (std::size_t i = 0; i < prepared_.node_recvs.size(); ++i) {
      const auto [peer, count] = prepared_.node_recvs[i];
      recv_base_[i] = comm_.claim_node_recvs(peer, count);
    }
    // Kept from call to call: each message's entry is assigned when it starts, and only
    // started ones are read.
    if (transfers_.size() < ops_.size()) transfers_.resize(ops_.size());
    fused_.start(prepared_.schedule, prepared_.fusions, buffers_, combine_, elem_);
    remaining_ = ops_.size();
    // Messages start before local copies and combines (ready_ is a stack), each in order.
    for (const bool messages : {false, true}) {
      for (std::size_t i = ops_.size(); i-- > 0;) {
        waiting_[i] = prepared_.dep_counts[i];
        if (waiting_[i] == 0 && is_message(ops_[i]) == messages) push_ready(i);
      }
    }
    start_ready();
    if (remaining_ == 0) return;
    comm_.runtime().wait_until([this] { return poll(); },
                               [this](bool timed_out) { stalled(timed_out); }, true);
  }

 private:
  static bool is_message(const Op& op) {
    return op.kind == OpKind::send || op.kind == OpKind::recv;
  }
  void push_ready(std::size_t id) { ready_[ready_count_++] = static_cast<std::uint8_t>(id); }

  // The first message number of this call to or from `peer`.
  static std::uint64_t base_of(const std::vector<std::pair<int, std::uint32_t>>& entries,
                               const std::array<std::uint64_t, kMaxSmallOps>& bases, int peer) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].first == peer) return bases[i];
    }
    return 0;  // not reached: prepare() counted every message
  }

  void start_ready() {
    while (ready_count_ > 0) start(ready_[--ready_count_]);
  }

  void start(std::size_t id) {
    const Op& op = ops_[id];
    if (!is_message(op)) {
      const std::string why = run_local_op(op, buffers_, combine_, elem_);
      if (!why.empty()) give_up(Errc::invalid_argument, why);
      complete(id);
      return;
    }
    const int peer = comm_.layout().local_rank_of[static_cast<std::size_t>(op.peer)];
    if (op.kind == OpKind::send) {
      transfers_[id] =
          channels_->send(peer, base_of(prepared_.node_sends, send_base_, peer) + op.msg,
                          buffers_.at(op.src), op.src.bytes, prepared_.node_copy);
    } else {
      const OpId c = prepared_.fusions[id].combine;
      transfers_[id] =
          channels_->recv(peer, base_of(prepared_.node_recvs, recv_base_, peer) + op.msg,
                          buffers_.at(op.dst), op.dst.bytes,
                          fused_.sink_for(static_cast<OpId>(id), c == kNoFusion ? 0 : waiting_[c],
                                          *channels_, op.dst.bytes),
                          prepared_.node_receiver_busy);
    }
    const XferState st = transfers_[id].test(why_);
    if (st == XferState::failed) failed(id);
    if (st == XferState::done) {
      complete_transfer(id);
    } else {
      pending_[pending_count_++] = static_cast<std::uint8_t>(id);
    }
  }

  void complete(std::size_t id) {
    --remaining_;
    for (const OpId next : prepared_.dependents[id]) {
      if (--waiting_[next] == 0) push_ready(next);
    }
  }

  // A transfer ended well: completes its op, and the combine a fused receive did (its only
  // dependent, which waited for it alone: never run).
  void complete_transfer(std::size_t id) {
    if (!transfers_[id].sunk()) {
      complete(id);
      return;
    }
    --remaining_;
    const OpId c = prepared_.fusions[id].combine;
    --waiting_[c];
    complete(c);
  }

  // Tests the running transfers, starts what their completion freed; true when all is done.
  bool poll() {
    for (std::size_t k = 0; k < pending_count_;) {
      const std::size_t id = pending_[k];
      const XferState st = transfers_[id].test(why_);
      if (st == XferState::pending) {
        ++k;
        continue;
      }
      if (st == XferState::failed) failed(id);
      pending_[k] = pending_[--pending_count_];
      complete_transfer(id);
      start_ready();
    }
    return remaining_ == 0;
  }

  void stalled(bool timed_out) {
    Errc code = Errc::peer_failure;
    std::string revoked;
    if (comm_.revoked_by_peer(code, revoked)) give_up(code, revoked);
    for (std::size_t k = 0; k < pending_count_; ++k) {
      const int peer = transfers_[pending_[k]].peer();
      if (!channels_->peer_alive(peer)) {
        fail(pending_[k], Errc::peer_failure,
             "the process (pid " + std::to_string(channels_->pid_of(peer)) +
                 ") of this node's local rank " + std::to_string(peer) + " has exited");
      }
    }
    if (timed_out) give_up(Errc::timeout, comm_.runtime().timeout_message());
  }

  // A transfer failed: why_ says why.
  [[noreturn]] void failed(std::size_t id) {
    if (!fused_.error().empty()) give_up(Errc::invalid_argument, fused_.error());
    const transport::ShmTransfer& t = transfers_[id];
    const Errc code = t.peer_gone() || !channels_->peer_alive(t.peer()) ? Errc::peer_failure
                      : t.size_mismatch()                               ? Errc::mismatch
                                                                        : Errc::transport;
    fail(id, code, why_);
  }

  [[noreturn]] void fail(std::size_t id, Errc code, const std::string& why) {
    const Op& op = ops_[id];
    throw_revoked(code, "rank " + std::to_string(comm_.rank()) + ": " +
                            (op.kind == OpKind::send ? "send to rank " : "receive from rank ") +
                            std::to_string(op.peer) + " (" + prepared_.algorithm + "): " + why);
  }

  [[noreturn]] void give_up(Errc code, const std::string& why) {
    throw_revoked(
        code, "rank " + std::to_string(comm_.rank()) + " (" + prepared_.algorithm + "): " + why);
  }

  [[noreturn]] void throw_revoked(Errc code, const std::string& message) {
    comm_.revoke(code, message);
    throw Error(code, message);
  }

  CommImpl& comm_;
  const PreparedSchedule& prepared_;
  const std::vector<Op>& ops_;
  ScheduleBuffers buffers_;
  const Combiner& combine_;
  std::size_t elem_;
  transport::NodeChannels* channels_;  // null when this rank is alone on its node (copies only)
  std::vector<transport::ShmTransfer>& transfers_;
  FusedReceives fused_;  // handed to the node channels: the run does not move
  std::array<std::uint64_t, kMaxSmallOps> send_base_, recv_base_;
  std::array<std::uint32_t, kMaxSmallOps> waiting_;
  std::array<std::uint8_t, kMaxSmallOps> ready_, pending_;
  std::size_t ready_count_ = 0, pending_count_ = 0, remaining_ = 0;
  std::string why_;
};

}  // namespace

void run_small_node_schedule(CommImpl& comm, const PreparedSchedule& prepared,
                             const std::byte* send, std::byte* recv, const Combiner& combine,
                             std::size_t elem) {
  SmallRun(comm, prepared, send, recv, combine, elem).run();
}

}  // namespace lanes::detail
