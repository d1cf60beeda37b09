// The element-wise kernels of reductions for every element type and operation lanes serves:
// dst = dst (+) src, or dst = src (+) dst with `src_first` (the order matters to floats and to
// min/max with NaNs). dst and src do not overlap.
#pragma once

#include <cstddef>

#include <lanes/reduction.hpp>

namespace lanes::detail {

using CombineFn = void (*)(std::byte* dst, const std::byte* src, std::size_t count, bool src_first);

// nullptr when the operation does not apply to the type (bitwise operations on floating point).
CombineFn combine_fn(Datatype type, Op op);

}  // namespace lanes::detail
