// The predefined reductions' element-wise kernels, as templates with internal linkage: every
// lib/combine_kernels_*.cpp includes this file once and compiles it for its own instruction set
// (combine_kernels.hpp), so that the same loops vectorize as wide as the machine allows. Not a
// header: it defines functions in an unnamed namespace. Nothing here may have external linkage
// (no inline function, no template outside the unnamed namespace): the linker could otherwise
// keep an AVX-512 copy of it for the whole library, which a CPU without AVX-512 cannot run.
#include <bit>
#include <cstdint>
#include <type_traits>

#include "lib/combine.hpp"

namespace lanes::detail {

namespace {

// Integer arithmetic wraps (done in an unsigned type at least as wide as unsigned int, so that
// neither overflow nor promotion is undefined).
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T, Op O>
T apply(T a, T b) {
  if constexpr (O == Op::sum) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
    } else {
      return a + b;
    }
  } else if constexpr (O == Op::prod) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
    } else {
      return a * b;
    }
  } else if constexpr (O == Op::min) {
    return b < a ? b : a;
  } else if constexpr (O == Op::max) {
    return a < b ? b : a;
  } else if constexpr (O == Op::band) {
    return static_cast<T>(a & b);
  } else if constexpr (O == Op::bor) {
    return static_cast<T>(a | b);
  } else if constexpr (O == Op::bxor) {
    return static_cast<T>(a ^ b);
  } else if constexpr (O == Op::land) {
    return static_cast<T>(a != T{} && b != T{});
  } else if constexpr (O == Op::lor) {
    return static_cast<T>(a != T{} || b != T{});
  } else {
    return static_cast<T>((a != T{}) != (b != T{}));
  }
}

// Plain loops over aligned, non-overlapping element arrays: the compiler vectorizes them. The
// accumulating form (acc is dst) is a separate loop, so that no pointer may alias another.
template <class T, Op O>
void accumulate(T* __restrict d, const T* __restrict s, std::size_t count, bool src_first) {
  if (src_first) {
    for (std::size_t i = 0; i < count; ++i) d[i] = apply<T, O>(s[i], d[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) d[i] = apply<T, O>(d[i], s[i]);
  }
}

template <class T, Op O>
void kernel(std::byte* dst, const std::byte* acc, const std::byte* src, std::size_t count,
            bool src_first) {
  T* __restrict d = reinterpret_cast<T*>(dst);
  const T* __restrict s = reinterpret_cast<const T*>(src);
  if (acc == dst) return accumulate<T, O>(d, s, count, src_first);
  const T* __restrict a = reinterpret_cast<const T*>(acc);
  if (src_first) {
    for (std::size_t i = 0; i < count; ++i) d[i] = apply<T, O>(s[i], a[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) d[i] = apply<T, O>(a[i], s[i]);
  }
}

float widen(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t narrow(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t nearest_even = (u + 0x7fffU + ((u >> 16) & 1U)) >> 16;
  const std::uint32_t quiet_nan = (u >> 16) | 0x40U;
  return static_cast<std::uint16_t>((u & 0x7fffffffU) > 0x7f800000U ? quiet_nan : nearest_even);
}

// bfloat16 accumulates in float and rounds once per combination. As for the other types, the
// accumulating form is its own loop: a loop whose acc may be dst vectorizes only after a run-time
// overlap check, which fails exactly when acc is dst.
template <Op O>
void bf16_accumulate(std::uint16_t* __restrict d, const std::uint16_t* __restrict s,
                     std::size_t count, bool src_first) {
  if (src_first) {
    for (std::size_t i = 0; i < count; ++i) d[i] = narrow(apply<float, O>(widen(s[i]), widen(d[i])));
  } else {
    for (std::size_t i = 0; i < count; ++i) d[i] = narrow(apply<float, O>(widen(d[i]), widen(s[i])));
  }
}

template <Op O>
void bf16_kernel(std::byte* dst, const std::byte* acc, const std::byte* src, std::size_t count,
                 bool src_first) {
  std::uint16_t* __restrict d = reinterpret_cast<std::uint16_t*>(dst);
  const std::uint16_t* __restrict s = reinterpret_cast<const std::uint16_t*>(src);
  if (acc == dst) return bf16_accumulate<O>(d, s, count, src_first);
  const std::uint16_t* __restrict a = reinterpret_cast<const std::uint16_t*>(acc);
  if (src_first) {
    for (std::size_t i = 0; i < count; ++i)
      d[i] = narrow(apply<float, O>(widen(s[i]), widen(a[i])));
  } else {
    for (std::size_t i = 0; i < count; ++i)
      d[i] = narrow(apply<float, O>(widen(a[i]), widen(s[i])));
  }
}

template <class T>
CombineFn for_type(Op op) {
  switch (op) {
    case Op::sum:
      return kernel<T, Op::sum>;
    case Op::prod:
      return kernel<T, Op::prod>;
    case Op::min:
      return kernel<T, Op::min>;
    case Op::max:
      return kernel<T, Op::max>;
    case Op::land:
      return kernel<T, Op::land>;
    case Op::lor:
      return kernel<T, Op::lor>;
    case Op::lxor:
      return kernel<T, Op::lxor>;
    case Op::band:
    case Op::bor:
    case Op::bxor:
      if constexpr (std::is_integral_v<T>) {
        return op == Op::band  ? kernel<T, Op::band>
               : op == Op::bor ? kernel<T, Op::bor>
                               : kernel<T, Op::bxor>;
      } else {
        return nullptr;
      }
  }
  return nullptr;
}

CombineFn for_bf16(Op op) {
  switch (op) {
    case Op::sum:
      return bf16_kernel<Op::sum>;
    case Op::prod:
      return bf16_kernel<Op::prod>;
    case Op::min:
      return bf16_kernel<Op::min>;
    case Op::max:
      return bf16_kernel<Op::max>;
    case Op::land:
      return bf16_kernel<Op::land>;
    case Op::lor:
      return bf16_kernel<Op::lor>;
    case Op::lxor:
      return bf16_kernel<Op::lxor>;
    case Op::band:
    case Op::bor:
    case Op::bxor:
      return nullptr;
  }
  return nullptr;
}

CombineFn kernel_for(Datatype type, Op op) {
  switch (type) {
    case Datatype::int8:
      return for_type<std::int8_t>(op);
    case Datatype::int16:
      return for_type<std::int16_t>(op);
    case Datatype::int32:
      return for_type<std::int32_t>(op);
    case Datatype::int64:
      return for_type<std::int64_t>(op);
    case Datatype::uint8:
      return for_type<std::uint8_t>(op);
    case Datatype::uint16:
      return for_type<std::uint16_t>(op);
    case Datatype::uint32:
      return for_type<std::uint32_t>(op);
    case Datatype::uint64:
      return for_type<std::uint64_t>(op);
    case Datatype::float32:
      return for_type<float>(op);
    case Datatype::float64:
      return for_type<double>(op);
    case Datatype::bfloat16:
      return for_bf16(op);
  }
  return nullptr;
}

}  // namespace

}  // namespace lanes::detail
