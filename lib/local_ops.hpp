// What a rank's copy and combine ops do, on the three buffers its schedule refers to: shared by
// the executor and the runner of small node schedules.
#pragma once

#include <cstddef>
#include <cstring>
#include <exception>
#include <lanes/error.hpp>
#include <string>

#include "algos/schedule.hpp"
#include "lib/combine.hpp"

namespace lanes::detail {

struct ScheduleBuffers {
  std::byte* send = nullptr;
  std::byte* recv = nullptr;
  std::byte* scratch = nullptr;

  std::byte* at(const algos::Region& r) const {
    switch (r.buffer) {
      case algos::Buffer::send:
        return send == nullptr ? nullptr : send + r.offset;
      case algos::Buffer::recv:
        return recv == nullptr ? nullptr : recv + r.offset;
      case algos::Buffer::scratch:
        return scratch + r.offset;
    }
    return nullptr;
  }
};

// dst = acc (+) src over `count` elements (src (+) acc with `src_first`). Returns why it failed
// (a user operation that threw), empty when it did not.
inline std::string run_combine(const Combiner& combine, std::byte* dst, const std::byte* acc,
                               const std::byte* src, std::size_t count, bool src_first) {
  try {
    combine(dst, acc, src, count, src_first);
  } catch (const std::exception& e) {  // only a user operation throws
    return std::string("the user operation threw: ") + e.what();
  } catch (...) {
    return "the user operation threw";
  }
  return {};
}

// Runs a copy or combine op (elements of `elem` bytes). Returns why it failed (a user operation
// that threw), empty when it did not.
inline std::string run_local_op(const algos::Op& op, const ScheduleBuffers& b,
                                const Combiner& combine, std::size_t elem) {
  if (op.kind == algos::OpKind::copy) {
    if (op.src.bytes > 0 && b.at(op.src) != b.at(op.dst)) {
      std::memmove(b.at(op.dst), b.at(op.src), op.src.bytes);
    }
    return {};
  }
  if (!combine) throw Error(Errc::internal, "a combine without a reduction kernel");
  std::byte* dst = b.at(op.dst);
  const std::byte* acc = op.acc.bytes > 0 ? b.at(op.acc) : dst;
  return run_combine(combine, dst, acc, b.at(op.src), op.src.bytes / elem, op.src_first);
}

}  // namespace lanes::detail
