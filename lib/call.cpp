#include "lib/call.hpp"

#include <string>

#include "lib/combine.hpp"

namespace lanes::detail {

using algos::Collective;

namespace {

// The type, operation and sizes of a reduction; empty when they are fine.
std::string reduction_error(const Call& call, bool uses_recv) {
  const std::size_t elem = elem_of(call);
  if (call.user_op && !call.user_op->fn) {
    return "the user operation has no function (its fn is empty)";
  }
  if (call.user_op && elem == 0) return "the user operation's elements have 0 bytes";
  if (!call.user_op && combine_fn(call.type, call.op) == nullptr) {
    return std::string("operation ") + to_string(call.op) + " does not apply to " +
           to_string(call.type) + " (bitwise operations take integers)";
  }
  const std::size_t whole =
      call.coll == algos::Collective::reduce_scatter_block ? call.recv.size() : call.send.size();
  if (whole % elem != 0) {
    return (call.coll == algos::Collective::reduce_scatter_block ? "recv holds " : "send holds ") +
           std::to_string(whole) + " bytes, not a whole number of " +
           (call.user_op ? std::to_string(elem) + "-byte" : std::string(to_string(call.type))) +
           " elements";
  }
  if (uses_recv && call.recv.size() != call.send.size()) {
    return "recv holds " + std::to_string(call.recv.size()) + " bytes but send holds " +
           std::to_string(call.send.size()) + ": both hold the vector";
  }
  return {};
}

std::string range_error(int root, int size) {
  return "root " + std::to_string(root) + " is out of range for a communicator of size " +
         std::to_string(size) + " (valid: 0.." + std::to_string(size - 1) + ")";
}

std::string null_error(const char* name, std::size_t bytes) {
  return std::string(name) + " is null but its size is " + std::to_string(bytes) + " bytes";
}

// `whole` must hold p blocks of `block` bytes.
std::string blocks_error(const char* whole_name, std::size_t whole, const char* block_name,
                         std::size_t block, std::size_t p) {
  std::size_t expected = 0;
  if (!__builtin_mul_overflow(p, block, &expected) && whole == expected) return {};
  return std::string(whole_name) + " must hold size() * " + block_name +
         ".size() = " + std::to_string(p) + " * " + std::to_string(block) + " bytes but holds " +
         std::to_string(whole);
}

}  // namespace

std::size_t elem_of(const Call& call) {
  return call.user_op ? call.user_op->elem_size : size_of(call.type);
}

std::pair<bool, bool> buffers_used(Collective coll, bool at_root) {
  switch (coll) {
    case Collective::bcast:
      return {false, true};
    case Collective::scatter:
      return {at_root, true};
    case Collective::gather:
    case Collective::reduce:
      return {true, at_root};
    case Collective::barrier:
      return {false, false};
    default:
      return {true, true};
  }
}

CallCheck check_call(const Call& call, int rank, int size) {
  const auto p = static_cast<std::size_t>(size);
  const bool rooted = algos::is_rooted(call.coll);
  const bool reduction = algos::is_reduction(call.coll);
  const bool at_root = rooted && call.root == rank;
  const auto& send = call.send;
  const auto& recv = call.recv;
  std::string err;
  std::size_t block = 0;
  const auto [uses_send, uses_recv] = buffers_used(call.coll, at_root);
  if (rooted && (call.root < 0 || call.root >= size)) {
    err = range_error(call.root, size);
  } else {
    switch (call.coll) {
      case Collective::bcast:
        block = recv.size();
        break;
      case Collective::scatter:
        block = recv.size();
        if (at_root) err = blocks_error("at the root, send", send.size(), "recv", block, p);
        break;
      case Collective::gather:
        block = send.size();
        if (at_root) err = blocks_error("at the root, recv", recv.size(), "send", block, p);
        break;
      case Collective::allgather:
        block = send.size();
        err = blocks_error("recv", recv.size(), "send", block, p);
        break;
      case Collective::alltoall:
        block = send.size() / p;
        if (send.size() != recv.size()) {
          err = "send holds " + std::to_string(send.size()) + " bytes but recv holds " +
                std::to_string(recv.size()) + ": both must hold size() equal blocks";
        } else if (send.size() % p != 0) {
          err = "send holds " + std::to_string(send.size()) +
                " bytes, not divisible into size() = " + std::to_string(p) + " equal blocks";
        } else if (block % call.unit != 0) {
          err = "send holds " + std::to_string(send.size() / call.unit) + " elements of " +
                std::to_string(call.unit) +
                " bytes, not divisible into size() = " + std::to_string(p) +
                " blocks of whole elements";
        }
        break;
      case Collective::reduce:
      case Collective::allreduce:
        block = send.size();
        err = reduction_error(call, uses_recv);
        break;
      case Collective::barrier:
        break;
      case Collective::reduce_scatter_block:
        block = recv.size();
        err = blocks_error("send", send.size(), "recv", block, p);
        if (err.empty()) err = reduction_error(call, false);
        break;
    }
  }
  if (err.empty() && uses_send && send.data() == nullptr && !send.empty()) {
    err = null_error(call.coll == Collective::bcast ? "data" : "send", send.size());
  }
  if (err.empty() && uses_recv && recv.data() == nullptr && !recv.empty()) {
    err = null_error(call.coll == Collective::bcast ? "data" : "recv", recv.size());
  }
  // A reduction in place passes one buffer as both; any other overlap is an error.
  const bool in_place = reduction && send.data() == recv.data() && send.size() == recv.size();
  if (err.empty() && uses_send && uses_recv && !send.empty() && !recv.empty() && !in_place &&
      send.data() < recv.data() + recv.size() && recv.data() < send.data() + send.size()) {
    err = reduction ? "send and recv overlap: pass separate buffers, or the same span for in place"
                    : "send and recv overlap: pass separate buffers";
  }
  if (!err.empty()) err = std::string(algos::to_string(call.coll)) + ": " + err;

  return {block, err};
}

CallShape shape_of(const Call& call, std::size_t block) {
  const bool reduction = algos::is_reduction(call.coll);
  return CallShape{static_cast<int>(call.coll),
                   algos::is_rooted(call.coll) ? call.root : 0,
                   block,
                   call.options.lanes,
                   call.options.first_rail,
                   reduction ? elem_of(call) : 1,
                   !(reduction && call.user_op) ? 0
                   : call.user_op->commutative  ? 1
                                                : 2};
}

}  // namespace lanes::detail
