// The element-wise kernels of reductions for every element type and operation lanes serves:
// dst = acc (+) src, or dst = src (+) acc with `src_first` (the order matters to floats and to
// min/max with NaNs). acc is dst itself or does not overlap it; src overlaps neither.
#pragma once

#include <cstddef>
#include <memory>

#include <lanes/reduction.hpp>

namespace lanes {
struct UserOpBytes;
}

namespace lanes::detail {

using CombineFn = void (*)(std::byte* dst, const std::byte* acc, const std::byte* src,
                           std::size_t count, bool src_first);

// nullptr when the operation does not apply to the type (bitwise operations on floating point).
CombineFn combine_fn(Datatype type, Op op);

// What a reduction's combine ops call, with the kernels' contract. A predefined operation is its
// kernel, called directly; a user operation is `user` called with its `context`, which every
// holder of the combiner keeps alive (a nonblocking call or a plan outlives the caller's op).
struct Combiner {
  using UserFn = void (*)(const void* context, std::byte* dst, const std::byte* acc,
                          const std::byte* src, std::size_t count, bool src_first);
  CombineFn kernel = nullptr;
  UserFn user = nullptr;
  std::shared_ptr<const void> context;

  explicit operator bool() const { return kernel != nullptr || user != nullptr; }
  void operator()(std::byte* dst, const std::byte* acc, const std::byte* src, std::size_t count,
                  bool src_first) const {
    if (kernel != nullptr) {
      kernel(dst, acc, src, count, src_first);
    } else {
      user(context.get(), dst, acc, src, count, src_first);
    }
  }
};

// The combiner of a user operation (which it owns a share of): calls op.fn(in, inout, count),
// inout = in (+) inout, so that dst = acc (+) src or src (+) acc; copies through a bounded
// thread-local buffer where the callback's in-place form needs one, never writing into src.
Combiner user_combiner(std::shared_ptr<const UserOpBytes> op);

}  // namespace lanes::detail
