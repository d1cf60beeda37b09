// LaneSet: the lanes an off-node transfer may use, as a bit set over lanes 0..63. A transfer on
// one lane names it alone (LaneSet::one); a transfer on the lanes its sender drives carries that
// set, and the executor stripes it over the rails behind those lanes.
#pragma once

#include <bit>
#include <cstdint>
#include <string>

namespace lanes::algos {

constexpr int kMaxLanes = 64;

struct LaneSet {
  std::uint64_t bits = 0;

  static constexpr LaneSet one(int lane) { return LaneSet{std::uint64_t{1} << lane}; }
  // Lanes 0..k-1.
  static constexpr LaneSet first(int k) {
    return LaneSet{k >= kMaxLanes ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1};
  }

  constexpr bool empty() const { return bits == 0; }
  constexpr bool contains(int lane) const { return (bits >> lane & 1U) != 0; }
  constexpr int count() const { return std::popcount(bits); }
  constexpr int lowest() const { return std::countr_zero(bits); }
  constexpr bool subset_of(LaneSet other) const { return (bits & ~other.bits) == 0; }
  constexpr void add(int lane) { bits |= std::uint64_t{1} << lane; }
  constexpr bool operator==(const LaneSet&) const = default;

  // Calls f(lane) for every lane in increasing order.
  template <class F>
  constexpr void each(F&& f) const {
    for (std::uint64_t b = bits; b != 0; b &= b - 1) f(std::countr_zero(b));
  }

  std::string text() const {  // "0" or "0,2"
    std::string out;
    each([&](int lane) { out += (out.empty() ? "" : ",") + std::to_string(lane); });
    return out.empty() ? "none" : out;
  }
};

}  // namespace lanes::algos
