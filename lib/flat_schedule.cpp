// The smallest schedules run here without an Execution: every op may start at once (no
// dependencies), only copies and messages to ranks of this node, a handful of them (two or a
// few ranks of one node: bcast, scatter, gather, alltoall, allgather of small blocks). The call
// copies, writes its peers' slots and polls its own, so a collective of a few bytes costs little
// more than those slot writes.
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "lib/comm_impl.hpp"
#include "lib/executor.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes::detail {

using algos::Buffer;
using algos::Op;
using algos::OpKind;
using transport::XferState;

bool is_flat_node_schedule(const algos::Schedule& schedule, const algos::Layout& layout, int rank) {
  if (schedule.ops.empty() || schedule.ops.size() > kMaxFlatOps || schedule.scratch_bytes != 0) {
    return false;
  }
  for (const Op& op : schedule.ops) {
    if (!op.deps.empty() || op.kind == OpKind::combine) return false;
    if (op.kind != OpKind::copy && !layout.same_node(op.peer, rank)) return false;
  }
  return true;
}

namespace {

// The first message number of this call to or from `peer`, claimed per (peer, count) entry.
std::uint64_t base_of(const std::vector<std::pair<int, std::uint32_t>>& entries,
                      const std::array<std::uint64_t, kMaxFlatOps>& bases, int peer) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].first == peer) return bases[i];
  }
  return 0;  // not reached: prepare() counted every message
}

}  // namespace

void run_flat_node_schedule(CommImpl& comm, const PreparedSchedule& prepared, const std::byte* send,
                            std::byte* recv) {
  const auto& ops = prepared.schedule.ops;
  const auto address = [&](const algos::Region& r) -> std::byte* {
    std::byte* base = r.buffer == Buffer::send ? const_cast<std::byte*>(send) : recv;
    return base == nullptr ? nullptr : base + r.offset;
  };
  // Claimed as an Execution would: one sequence number, each peer's message numbers.
  (void)comm.next_seq();
  std::array<std::uint64_t, kMaxFlatOps> send_base, recv_base;
  for (std::size_t i = 0; i < prepared.node_sends.size(); ++i) {
    const auto [peer, count] = prepared.node_sends[i];
    send_base[i] = comm.claim_node_sends(peer, count);
  }
  for (std::size_t i = 0; i < prepared.node_recvs.size(); ++i) {
    const auto [peer, count] = prepared.node_recvs[i];
    recv_base[i] = comm.claim_node_recvs(peer, count);
  }

  // Null when this rank is alone on its node: its schedule then holds copies only.
  transport::NodeChannels* channels = comm.channels();
  // Reused from call to call: an array of kMaxFlatOps fresh transfers would cost more to clear
  // than the messages take.
  std::vector<transport::ShmTransfer>& transfers = comm.flat_transfers();
  transfers.clear();
  transfers.resize(ops.size());
  std::array<std::uint8_t, kMaxFlatOps> pending;  // indices into ops
  std::size_t pending_count = 0;
  std::string why;
  std::size_t failed = kMaxFlatOps;  // the op that failed, if any
  // Messages first, so that peers' data flows while this rank copies.
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::copy) continue;
    const int peer = comm.layout().local_rank_of[static_cast<std::size_t>(op.peer)];
    transfers[i] =
        op.kind == OpKind::send
            ? channels->send(peer, base_of(prepared.node_sends, send_base, peer) + op.msg,
                             address(op.src), op.src.bytes)
            : channels->recv(peer, base_of(prepared.node_recvs, recv_base, peer) + op.msg,
                             address(op.dst), op.dst.bytes);
    const XferState st = transfers[i].test(why);
    if (st == XferState::failed) {
      failed = i;
      break;
    }
    if (st == XferState::pending) pending[pending_count++] = static_cast<std::uint8_t>(i);
  }

  if (failed == kMaxFlatOps) {
    for (const Op& op : ops) {
      if (op.kind == OpKind::copy && op.src.bytes > 0 && address(op.src) != address(op.dst)) {
        std::memmove(address(op.dst), address(op.src), op.src.bytes);
      }
    }
  }
  const auto fail = [&](std::size_t i, Errc code, const std::string& text) {
    const Op& op = ops[i];
    const std::string message = "rank " + std::to_string(comm.rank()) + ": " +
                                (op.kind == OpKind::send ? "send to rank " : "receive from rank ") +
                                std::to_string(op.peer) + " (" + prepared.algorithm + "): " + text;
    comm.revoke(code, message);
    throw Error(code, message);
  };
  if (failed == kMaxFlatOps && pending_count > 0) {
    comm.runtime().wait_until(
        [&] {
          for (std::size_t k = 0; k < pending_count;) {
            const XferState st = transfers[pending[k]].test(why);
            if (st == XferState::pending) {
              ++k;
            } else if (st == XferState::failed) {
              failed = pending[k];
              return true;
            } else {
              pending[k] = pending[--pending_count];
            }
          }
          return pending_count == 0;
        },
        [&](bool timed_out) {
          Errc code = Errc::peer_failure;
          std::string revoked;
          if (comm.revoked_by_peer(code, revoked)) {
            throw Error(code, "rank " + std::to_string(comm.rank()) + " (" + prepared.algorithm +
                                  "): " + revoked);
          }
          for (std::size_t k = 0; k < pending_count; ++k) {
            const int peer = transfers[pending[k]].peer();
            if (!channels->peer_alive(peer)) {
              fail(pending[k], Errc::peer_failure,
                   "the process (pid " + std::to_string(channels->pid_of(peer)) +
                       ") of this node's local rank " + std::to_string(peer) + " has exited");
            }
          }
          if (timed_out) fail(pending[0], Errc::timeout, comm.runtime().timeout_message());
        },
        true);
  }
  if (failed != kMaxFlatOps) {
    const transport::ShmTransfer& t = transfers[failed];
    const Errc code = t.peer_gone() || !channels->peer_alive(t.peer()) ? Errc::peer_failure
                      : t.size_mismatch()                              ? Errc::mismatch
                                                                       : Errc::transport;
    fail(failed, code, why);
  }
}

}  // namespace lanes::detail
