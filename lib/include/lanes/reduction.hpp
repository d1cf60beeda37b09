// Reduction operations and element types of reduce and allreduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace lanes {

// Bitwise operations (band, bor, bxor) apply to integer types only; logical ones (land, lor,
// lxor) treat nonzero as true and give 1 or 0.
enum class Op : std::uint8_t { sum, prod, min, max, band, bor, bxor, land, lor, lxor };

// A 16-bit brain float (the upper half of an IEEE float32), as ML frameworks exchange gradients.
// Reductions accumulate each pair in float and round to nearest even.
struct bfloat16 {
  std::uint16_t bits = 0;
};

enum class Datatype : std::uint8_t {
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float32,
  float64,
  bfloat16,
};

const char* to_string(Op op);
const char* to_string(Datatype type);
std::size_t size_of(Datatype type);

template <class T>
constexpr bool is_reducible_v =
    std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, bfloat16> ||
    std::is_same_v<T, char> || std::is_same_v<T, long long> ||
    std::is_same_v<T, unsigned long long> || std::is_same_v<T, long> ||
    std::is_same_v<T, unsigned long>;

// The Datatype of an element type (char counts as int8 or uint8 as the platform's char is).
template <class T>
constexpr Datatype datatype_of() {
  static_assert(is_reducible_v<T>, "lanes: reductions take integers, float, double or bfloat16");
  if constexpr (std::is_same_v<T, float>) {
    return Datatype::float32;
  } else if constexpr (std::is_same_v<T, double>) {
    return Datatype::float64;
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return Datatype::bfloat16;
  } else if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1   ? Datatype::int8
           : sizeof(T) == 2 ? Datatype::int16
           : sizeof(T) == 4 ? Datatype::int32
                            : Datatype::int64;
  } else {
    return sizeof(T) == 1   ? Datatype::uint8
           : sizeof(T) == 2 ? Datatype::uint16
           : sizeof(T) == 4 ? Datatype::uint32
                            : Datatype::uint64;
  }
}

}  // namespace lanes
