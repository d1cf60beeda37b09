// The smallest schedules, one message between two ranks of a node, run here without an
// Execution: the call writes the peer's slot or polls its own, and a broadcast of a few bytes
// costs little more than the slot write itself.
#include <string>

#include "lib/comm_impl.hpp"
#include "lib/executor.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes::detail {

using algos::Buffer;
using algos::Op;
using algos::OpKind;
using transport::XferState;

void run_lone_message(CommImpl& comm, const PreparedSchedule& prepared, const std::byte* send,
                      std::byte* recv) {
  const Op& op = prepared.schedule.ops.front();
  const bool is_send = op.kind == OpKind::send;
  const algos::Region& region = is_send ? op.src : op.dst;
  std::byte* base = region.buffer == Buffer::send ? const_cast<std::byte*>(send) : recv;
  std::byte* data = base == nullptr ? nullptr : base + region.offset;
  const int peer = comm.layout().local_rank_of[static_cast<std::size_t>(op.peer)];
  transport::NodeChannels& channels = *comm.channels();
  (void)comm.next_seq();  // every call claims one, as an Execution does
  transport::ShmTransfer t =
      is_send ? channels.send(peer, comm.claim_node_sends(peer, 1) + op.msg, data, region.bytes)
              : channels.recv(peer, comm.claim_node_recvs(peer, 1) + op.msg, data, region.bytes);

  const auto fail = [&](Errc code, const std::string& why) {
    const std::string text = "rank " + std::to_string(comm.rank()) + ": " +
                             (is_send ? "send to rank " : "receive from rank ") +
                             std::to_string(op.peer) + " (" + prepared.algorithm + "): " + why;
    comm.mark_broken(text);
    throw Error(code, text);
  };
  std::string why;
  XferState state = t.test(why);
  if (state == XferState::pending) {
    comm.runtime().wait_until(
        [&] {
          state = t.test(why);
          return state != XferState::pending;
        },
        [&](bool timed_out) {
          if (!channels.peer_alive(peer)) {
            fail(Errc::peer_failure, "the process (pid " + std::to_string(channels.pid_of(peer)) +
                                         ") of this node's local rank " + std::to_string(peer) +
                                         " has exited");
          }
          if (timed_out) fail(Errc::timeout, comm.runtime().timeout_message());
        },
        true);
  }
  if (state == XferState::failed) {
    fail(t.peer_gone() || !channels.peer_alive(peer) ? Errc::peer_failure : Errc::transport, why);
  }
}

}  // namespace lanes::detail
