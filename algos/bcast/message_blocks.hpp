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

// Cost of a binomial scatter of p blocks of `block` bytes: the root's child 2^j ranks away gets
// min(2^j, p - 2^j) blocks; partners n or more ranks apart are on different nodes, and in those
// rounds one rank per node sends (one flow).
inline double binomial_scatter_time(double block, const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  double t = 0;
  for (long long dist = 1; dist < p; dist *= 2) {
    const double bytes = static_cast<double>(std::min(dist, p - dist)) * block;
    t += in.nodes > 1 && dist >= in.ppn ? rail_time(bytes, 1.0, in, m) : shm_time(bytes, m);
  }
  return t;
}

}  // namespace lanes::algos
