#include "lib/executor.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <utility>

#include "lib/comm_impl.hpp"
#include "lib/local_ops.hpp"
#include "lib/node_copy.hpp"
#include "lib/runtime_impl.hpp"
#include "transport/stripe.hpp"
#include "transport/xfer.hpp"

namespace lanes::detail {

using algos::Buffer;
using algos::Op;
using algos::OpId;
using algos::OpKind;

std::shared_ptr<const PreparedSchedule> prepare(const CommImpl& comm, algos::Schedule schedule,
                                                std::string algorithm, int first_rail,
                                                bool reduce) {
  auto p = std::make_shared<PreparedSchedule>();
  p->algorithm = std::move(algorithm);
  p->first_rail = first_rail;
  const auto& layout = comm.layout();
  const std::size_t n = schedule.ops.size();
  p->dependents.resize(n);
  p->dep_counts.resize(n);
  std::map<int, std::uint32_t> sends, recvs;
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = schedule.ops[i];
    for (OpId d : op.deps) {
      if (d >= i) throw Error(Errc::internal, p->algorithm + ": op depends on a later op");
      p->dependents[d].push_back(static_cast<OpId>(i));
    }
    p->dep_counts[i] = static_cast<std::uint32_t>(op.deps.size());
    if (op.kind == OpKind::copy || op.kind == OpKind::combine) continue;
    if (op.peer < 0 || op.peer >= layout.size || op.peer == comm.rank()) {
      throw Error(Errc::internal,
                  p->algorithm + ": op with invalid peer " + std::to_string(op.peer));
    }
    if (op.msg >= transport::kMaxTagMessages) {
      throw Error(Errc::internal,
                  p->algorithm + ": more messages between two ranks than a tag " + "can number");
    }
    if (layout.same_node(op.peer, comm.rank())) {
      auto& counts = op.kind == OpKind::send ? sends : recvs;
      ++counts[layout.local_rank_of[static_cast<std::size_t>(op.peer)]];
    }
  }
  p->node_copy =
      node_copy_of(schedule, layout, comm.rank(), comm.cma(), reduce, comm.cma_slowdown());
  p->node_receiver_busy = node_receiver_busy(schedule, layout, comm.rank());
  p->fusions = fusable_receives(schedule, layout, comm.rank(), p->dependents);
  p->node_sends.assign(sends.begin(), sends.end());
  p->node_recvs.assign(recvs.begin(), recvs.end());
  p->small_node = is_small_node_schedule(schedule, layout, comm.rank()) &&
                  p->node_sends.size() <= kMaxSmallOps && p->node_recvs.size() <= kMaxSmallOps;
  p->schedule = std::move(schedule);
  return p;
}

Execution::Execution(std::shared_ptr<CommImpl> comm,
                     std::shared_ptr<const PreparedSchedule> prepared, const std::byte* send,
                     std::byte* recv, Combiner combine, std::size_t elem) {
  restart(std::move(comm), std::move(prepared), send, recv, std::move(combine), elem);
}

void Execution::restart(std::shared_ptr<CommImpl> comm,
                        std::shared_ptr<const PreparedSchedule> prepared, const std::byte* send,
                        std::byte* recv, Combiner combine, std::size_t elem) {
  comm_ = std::move(comm);
  prepared_ = std::move(prepared);
  send_ = const_cast<std::byte*>(send);
  recv_ = recv;
  combine_ = std::move(combine);
  elem_ = elem;
  failed_ = false;
  error_code_ = Errc::internal;
  error_.clear();
  const auto& sched = prepared_->schedule;
  // A restarted execution keeps its scratch while it is large enough.
  if (sched.scratch_bytes > scratch_.capacity() || scratch_.pool() != &comm_->scratch_pool()) {
    scratch_ = comm_->scratch_pool().take(sched.scratch_bytes);
  }
  seq_ = comm_->next_seq();
  const auto local = static_cast<std::size_t>(comm_->layout().node_size_of(comm_->rank()));
  node_send_base_.assign(local, 0);
  node_recv_base_.assign(local, 0);
  for (auto [peer, count] : prepared_->node_sends) {
    node_send_base_[static_cast<std::size_t>(peer)] = comm_->claim_node_sends(peer, count);
  }
  for (auto [peer, count] : prepared_->node_recvs) {
    node_recv_base_[static_cast<std::size_t>(peer)] = comm_->claim_node_recvs(peer, count);
  }
  waiting_.assign(prepared_->dep_counts.begin(), prepared_->dep_counts.end());
  fused_.start(sched, prepared_->fusions, buffers(), combine_, elem_);
  transfers_.resize(sched.ops.size());  // all empty: completion and failure empty them
  remaining_ = sched.ops.size();
  running_.clear();
  ready_.clear();
  // Messages start before local copies and combines, so that peers' data flows while this rank
  // copies; each kind in program order (ready_ is a stack).
  for (const bool messages : {false, true}) {
    for (std::size_t i = sched.ops.size(); i-- > 0;) {
      const OpKind kind = sched.ops[i].kind;
      const bool message = kind == OpKind::send || kind == OpKind::recv;
      if (waiting_[i] == 0 && message == messages) ready_.push_back(static_cast<OpId>(i));
    }
  }
}

void Execution::recycle() noexcept {
  combine_ = Combiner();
  prepared_.reset();
  comm_.reset();
}

void Execution::start(OpId id) {
  try {
    start_op(id);
  } catch (const Error& e) {
    abort(e.code(), e.what());
  } catch (const std::exception& e) {
    abort(Errc::internal, e.what());
  }
}

void Execution::start_op(OpId id) {
  const Op& op = prepared_->schedule.ops[id];
  const auto& layout = comm_->layout();
  if (op.kind == OpKind::copy || op.kind == OpKind::combine) {
    const std::string why = run_local_op(op, buffers(), combine_, elem_);
    if (!why.empty()) {
      abort(Errc::invalid_argument, why);
      return;
    }
    complete(id);
    return;
  }
  const bool is_send = op.kind == OpKind::send;
  std::byte* data = buffers().at(is_send ? op.src : op.dst);
  const std::size_t bytes = is_send ? op.src.bytes : op.dst.bytes;
  if (layout.same_node(op.peer, comm_->rank())) {
    const int peer = layout.local_rank_of[static_cast<std::size_t>(op.peer)];
    transport::NodeChannels* ch = comm_->channels();
    if (ch == nullptr) {
      abort(Errc::internal, "no node channels for an on-node message");
      return;
    }
    transfers_[id] =
        is_send ? ch->send(peer, node_send_base_[static_cast<std::size_t>(peer)] + op.msg, data,
                           bytes, prepared_->node_copy)
                : ch->recv(peer, node_recv_base_[static_cast<std::size_t>(peer)] + op.msg, data,
                           bytes, fused_.sink_for(id, waiting_for_fusion(id), *ch, bytes),
                           prepared_->node_receiver_busy);
  } else {
    transfers_[id] = start_off_node(op, data, bytes);
  }
  // A message that fits a slot, or one that UCX sent in place, is done already.
  std::string why;
  if (test(transfers_[id], why) == transport::XferState::done) {
    complete_transfer(id);
    return;
  }
  running_.push_back(id);
}

transport::XferState Execution::test(Transfer& t, std::string& why) {
  if (auto* r = std::get_if<transport::RailRequest>(&t)) return r->test(why);
  if (auto* s = std::get_if<transport::ShmTransfer>(&t)) return s->test(why);
  if (auto* parts = std::get_if<Striped>(&t)) {
    transport::XferState st = transport::XferState::done;
    for (auto& part : *parts) {
      const transport::XferState one = part.test(why);
      if (one == transport::XferState::failed) return one;
      if (one == transport::XferState::pending) st = one;
    }
    return st;
  }
  return transport::XferState::pending;
}

Execution::Transfer Execution::start_off_node(const Op& op, std::byte* data, std::size_t bytes) {
  transport::Rails& rails = comm_->runtime().rails();
  const algos::Layout& layout = comm_->layout();
  const bool is_send = op.kind == OpKind::send;
  transport::MessageKey key;
  key.comm = comm_->id();
  key.seq = seq_;
  key.src = static_cast<std::uint32_t>(is_send ? comm_->rank() : op.peer);
  key.index = op.msg;
  const std::uint64_t tag = transport::make_tag(key);
  const int world_peer = comm_->world_rank(op.peer);
  const auto post = [&](std::size_t rail, std::byte* at, std::size_t n) {
    return is_send ? rails.send(rail, world_peer, tag, at, n)
                   : rails.recv(rail, world_peer, tag, at, n);
  };
  // The distinct rails behind the lanes, in lane order. Parts on different rails share the tag:
  // every rail has its own worker, so they cannot match each other.
  std::array<std::size_t, algos::kMaxLanes> rail_of{};
  std::array<std::uint32_t, algos::kMaxLanes> weight{};
  std::size_t n = 0;
  op.lanes.each([&](int lane) {
    const std::size_t rail = static_cast<std::size_t>(prepared_->first_rail + lane) % rails.count();
    if (std::find(rail_of.begin(), rail_of.begin() + static_cast<std::ptrdiff_t>(n), rail) !=
        rail_of.begin() + static_cast<std::ptrdiff_t>(n)) {
      return;
    }
    rail_of[n] = rail;
    weight[n] = layout.rail_weights[rail % layout.rail_weights.size()];
    ++n;
  });
  if (n <= 1 || static_cast<double>(bytes) < comm_->runtime().machine().stripe_threshold()) {
    // A small message goes whole on one of the rails, the next message between the pair (or the
    // next collective) on the next one, so that back-to-back small messages use every rail, as a
    // stream of striped ones would. Both sides know the sequence and message numbers.
    return post(rail_of[(seq_ + op.msg) % n], data, bytes);
  }
  Striped parts;
  parts.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const transport::StripePart part =
        transport::stripe_part(bytes, std::span(weight.data(), n), i);
    if (part.bytes > 0) parts.push_back(post(rail_of[i], data + part.offset, part.bytes));
  }
  return parts;
}

void Execution::complete_transfer(OpId id) {
  const auto* shm = std::get_if<transport::ShmTransfer>(&transfers_[id]);
  const bool sunk = shm != nullptr && shm->sunk();
  transfers_[id] = std::monostate{};
  complete(id);
  if (sunk) {  // its combine is done too: never run it
    const OpId c = prepared_->fusions[id].combine;
    std::erase(ready_, c);
    complete(c);
  }
}

std::uint32_t Execution::waiting_for_fusion(OpId recv) const {
  const OpId c = prepared_->fusions[recv].combine;
  return c == kNoFusion ? 0 : waiting_[c];
}

void Execution::complete(OpId id) {
  --remaining_;
  for (OpId next : prepared_->dependents[id]) {
    if (--waiting_[next] == 0) ready_.push_back(next);
  }
}

void Execution::drain_transfers() {
  // A matched receive cannot be cancelled: UCX goes on writing its message into the caller's
  // buffer; nor can a send, whose buffer UCX reads as the socket drains (with small socket
  // buffers, a large message's tail waits in UCX). Cancel the other receives and wait for
  // the rest (bounded: a dead peer fails them) so that nothing reads or writes the caller's
  // buffers once the call has returned. On the node, a receive takes back the
  // destination it offered single-copy senders, or waits for the write one of them started.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<transport::RailRequest*> pending;
  for (auto& t : transfers_) {
    if (auto* shm = std::get_if<transport::ShmTransfer>(&t)) {
      shm->withdraw(deadline);
    } else if (auto* r = std::get_if<transport::RailRequest>(&t)) {
      if (r->cancel()) pending.push_back(r);
    } else if (auto* parts = std::get_if<Striped>(&t)) {
      for (auto& part : *parts) {
        if (part.cancel()) pending.push_back(&part);
      }
    }
  }
  if (pending.empty()) return;
  transport::Rails& rails = comm_->runtime().rails();
  std::string ignored;
  while (std::chrono::steady_clock::now() < deadline) {
    rails.progress();
    std::erase_if(pending, [&](transport::RailRequest* r) {
      return r->test(ignored) != transport::XferState::pending;
    });
    if (pending.empty()) return;
    sched_yield();
  }
}

void Execution::fail(OpId id, Errc code, const std::string& why) {
  if (failed_) return;
  drain_transfers();
  failed_ = true;
  error_code_ = code;
  const Op& op = prepared_->schedule.ops[id];
  error_ = "rank " + std::to_string(comm_->rank()) + ": " +
           (op.kind == OpKind::send ? "send to rank " : "receive from rank ") +
           std::to_string(op.peer) + " (" + prepared_->algorithm + "): " + why;
  for (auto& t : transfers_) t = std::monostate{};  // cancels what still runs
  running_.clear();
  ready_.clear();
}

void Execution::abort(Errc code, std::string why) {
  if (failed_) return;
  drain_transfers();
  failed_ = true;
  error_code_ = code;
  error_ = "rank " + std::to_string(comm_->rank()) + " (" + prepared_->algorithm + "): " + why;
  for (auto& t : transfers_) t = std::monostate{};
  running_.clear();
  ready_.clear();
}

bool Execution::advance(bool& progressed) {
  if (failed_) return true;
  // Start everything that is ready; local copies complete at once and may free more ops.
  while (!ready_.empty()) {
    const OpId id = ready_.back();
    ready_.pop_back();
    start(id);
    progressed = true;
  }
  std::string why;
  for (std::size_t i = 0; i < running_.size();) {
    const OpId id = running_[i];
    const transport::XferState st = test(transfers_[id], why);
    if (st == transport::XferState::pending) {
      ++i;
      continue;
    }
    if (st == transport::XferState::failed) {
      if (!fused_.error().empty()) {
        abort(Errc::invalid_argument, fused_.error());
        return true;
      }
      const int peer = prepared_->schedule.ops[id].peer;
      bool dead = false, mismatch = false;
      if (const auto* s = std::get_if<transport::ShmTransfer>(&transfers_[id])) {
        dead = s->peer_gone() || !comm_->channels()->peer_alive(s->peer());
        mismatch = s->size_mismatch();
      } else {
        dead = comm_->runtime().rails().peer_failed(comm_->world_rank(peer));
        if (const auto* r = std::get_if<transport::RailRequest>(&transfers_[id])) {
          mismatch = r->size_mismatch();
        } else if (const auto* parts = std::get_if<Striped>(&transfers_[id])) {
          mismatch = std::any_of(parts->begin(), parts->end(),
                                 [](const transport::RailRequest& p) { return p.size_mismatch(); });
        }
      }
      fail(id, dead ? Errc::peer_failure : mismatch ? Errc::mismatch : Errc::transport, why);
      return true;
    }
    running_[i] = running_.back();
    running_.pop_back();
    complete_transfer(id);
    progressed = true;
    // Completions may have made ops ready: start them right away.
    while (!ready_.empty()) {
      const OpId next = ready_.back();
      ready_.pop_back();
      start(next);
    }
  }
  return finished();
}

bool Execution::waits_on_node() const {
  return std::any_of(running_.begin(), running_.end(), [&](OpId id) {
    return std::holds_alternative<transport::ShmTransfer>(transfers_[id]);
  });
}

void Execution::check_peers() {
  Errc code = Errc::peer_failure;
  std::string why;
  if (comm_->revoked_by_peer(code, why)) {
    abort(code, why);
    return;
  }
  for (OpId id : running_) {
    const auto* s = std::get_if<transport::ShmTransfer>(&transfers_[id]);
    if (s != nullptr && !comm_->channels()->peer_alive(s->peer())) {
      fail(id, Errc::peer_failure,
           "the process (pid " + std::to_string(comm_->channels()->pid_of(s->peer())) +
               ") of this node's local rank " + std::to_string(s->peer()) + " has exited");
      return;
    }
  }
}

}  // namespace lanes::detail
