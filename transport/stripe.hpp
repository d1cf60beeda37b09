// Striping: how one off-node message is cut into parts, one per rail, in proportion to the rails'
// bandwidths so that all parts finish together. Sender and receiver cut alike from the same
// inputs, so the j-th part on one side matches the j-th on the other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace lanes::transport {

// Part boundaries fall on multiples of this many bytes (whole cache lines on both sides).
constexpr std::size_t kStripeAlign = 64;

struct StripePart {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

// Part i of `bytes` cut over rails of the given weights (each >= 1, their sum below 2^32): it
// starts at the aligned share of the weights before it. The last part ends at `bytes`; parts may
// be empty when `bytes` is small.
inline StripePart stripe_part(std::size_t bytes, std::span<const std::uint32_t> weights,
                              std::size_t i) {
  std::uint64_t total = 0, before = 0;
  for (std::size_t j = 0; j < weights.size(); ++j) {
    total += weights[j];
    if (j < i) before += weights[j];
  }
  const auto boundary = [&](std::uint64_t w) -> std::size_t {
    if (w >= total) return bytes;
    // bytes * w / total without overflow: w and total are below 2^32.
    const std::uint64_t exact = bytes / total * w + bytes % total * w / total;
    return static_cast<std::size_t>(exact / kStripeAlign * kStripeAlign);
  };
  const std::size_t lo = boundary(before);
  const std::size_t hi = boundary(before + weights[i]);
  return {lo, hi - lo};
}

}  // namespace lanes::transport
