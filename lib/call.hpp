// A collective call as the public API receives it, and the checks every call passes before
// anything moves: sizes, roots, null and overlapping buffers, reduction types and operations.
#pragma once

#include <cstddef>
#include <lanes/communicator.hpp>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "algos/schedule.hpp"
#include "lib/call_cache.hpp"

namespace lanes::detail {

// `send`/`recv` as in algos::Buffer.
struct Call {
  algos::Collective coll = algos::Collective::bcast;
  int root = 0;
  std::span<const std::byte> send;
  std::span<std::byte> recv;
  CallOptions options;
  Datatype type = Datatype::uint8;  // reductions
  Op op = Op::sum;
  std::shared_ptr<const UserOpBytes> user_op = nullptr;  // reductions: a user one, not type/op
  std::size_t unit = 1;  // typed alltoall: the element size its blocks hold whole
};

struct CallCheck {
  std::size_t block = 0;  // the bytes a schedule is built for (per block, or the vector)
  std::string error;      // empty when the call is valid; else "<collective>: what is wrong"
};

// Checks `call` made by `rank` of a communicator of `size` ranks. Local: no communication.
CallCheck check_call(const Call& call, int rank, int size);

// Which of its buffers (send, recv) a rank uses in a call of `coll`.
std::pair<bool, bool> buffers_used(algos::Collective coll, bool at_root);

// A reduction's element size.
std::size_t elem_of(const Call& call);

// What the algorithm and schedule of a call of `block` bytes depend on (CallCache's key).
CallShape shape_of(const Call& call, std::size_t block);

}  // namespace lanes::detail
