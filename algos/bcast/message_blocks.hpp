// The broadcasts that cut the message into blocks (scatter + allgather, full-lane) share these.
#pragma once

#include <algorithm>
#include <cstddef>

#include "algos/cost_model.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

// Offset of block i of `bytes` cut into q blocks (the first bytes mod q blocks are one larger).
inline std::size_t block_offset(std::size_t bytes, int q, int i) {
  const auto n = static_cast<std::size_t>(q);
  const auto u = static_cast<std::size_t>(i);
  return u * (bytes / n) + std::min(u, bytes % n);
}

// Blocks [first, last) of the receive buffer (empty when first >= last).
inline Region blocks(std::size_t bytes, int q, int first, int last) {
  if (first >= last) return {Buffer::recv, 0, 0};
  const std::size_t begin = block_offset(bytes, q, first);
  return {Buffer::recv, begin, block_offset(bytes, q, last) - begin};
}

}  // namespace lanes::algos
