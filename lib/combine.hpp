// The element-wise kernels of reductions for every element type and operation lanes serves:
// dst = acc (+) src, or dst = src (+) acc with `src_first` (the order matters to floats and to
// min/max with NaNs). acc is dst itself or does not overlap it; src overlaps neither.
#pragma once

#include <cstddef>

#include <lanes/reduction.hpp>

namespace lanes::detail {

using CombineFn = void (*)(std::byte* dst, const std::byte* acc, const std::byte* src,
                           std::size_t count, bool src_first);

// nullptr when the operation does not apply to the type (bitwise operations on floating point).
CombineFn combine_fn(Datatype type, Op op);

}  // namespace lanes::detail
