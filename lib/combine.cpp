#include "lib/combine.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <lanes/communicator.hpp>
#include <type_traits>
#include <utility>

namespace lanes {

const char* to_string(Op op) {
  switch (op) {
    case Op::sum:
      return "sum";
    case Op::prod:
      return "prod";
    case Op::min:
      return "min";
    case Op::max:
      return "max";
    case Op::band:
      return "band";
    case Op::bor:
      return "bor";
    case Op::bxor:
      return "bxor";
    case Op::land:
      return "land";
    case Op::lor:
      return "lor";
    case Op::lxor:
      return "lxor";
  }
  return "unknown";
}

const char* to_string(Datatype type) {
  switch (type) {
    case Datatype::int8:
      return "int8";
    case Datatype::int16:
      return "int16";
    case Datatype::int32:
      return "int32";
    case Datatype::int64:
      return "int64";
    case Datatype::uint8:
      return "uint8";
    case Datatype::uint16:
      return "uint16";
    case Datatype::uint32:
      return "uint32";
    case Datatype::uint64:
      return "uint64";
    case Datatype::float32:
      return "float32";
    case Datatype::float64:
      return "float64";
    case Datatype::bfloat16:
      return "bfloat16";
  }
  return "unknown";
}

std::size_t size_of(Datatype type) {
  switch (type) {
    case Datatype::int8:
    case Datatype::uint8:
      return 1;
    case Datatype::int16:
    case Datatype::uint16:
    case Datatype::bfloat16:
      return 2;
    case Datatype::int32:
    case Datatype::uint32:
    case Datatype::float32:
      return 4;
    case Datatype::int64:
    case Datatype::uint64:
    case Datatype::float64:
      return 8;
  }
  return 1;
}

}  // namespace lanes

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
  if ((u & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // NaN
  return static_cast<std::uint16_t>((u + 0x7fffU + ((u >> 16) & 1U)) >> 16);  // nearest even
}

// Element by element, so acc may be dst.
template <Op O>
void bf16_kernel(std::byte* dst, const std::byte* acc, const std::byte* src, std::size_t count,
                 bool src_first) {
  auto* d = reinterpret_cast<std::uint16_t*>(dst);
  const auto* a = reinterpret_cast<const std::uint16_t*>(acc);
  const std::uint16_t* __restrict s = reinterpret_cast<const std::uint16_t*>(src);
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

}  // namespace

CombineFn combine_fn(Datatype type, Op op) {
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

namespace {

// The buffer of a user operation's right operand: a thread's own, kUserBlock bytes (one element
// when elements are larger), aligned for any element.
constexpr std::size_t kUserBlock = 64 * 1024;

std::byte* user_buffer(std::size_t bytes) {
  thread_local std::unique_ptr<std::max_align_t[]> buffer;
  thread_local std::size_t capacity = 0;
  if (capacity < bytes) {
    const std::size_t n = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    buffer.reset(new std::max_align_t[n]);
    capacity = n * sizeof(std::max_align_t);
  }
  return reinterpret_cast<std::byte*>(buffer.get());
}

// The callback sets inout = in (+) inout, so the right operand must already be where the result
// goes: acc's or src's values are copied into dst first when dst is neither. When dst is acc and
// the right operand is src, src (never written: it may be the caller's send buffer) goes through
// the thread's buffer, block by block.
void user_combine(const void* context, std::byte* dst, const std::byte* acc, const std::byte* src,
                  std::size_t count, bool src_first) {
  const auto& op = *static_cast<const UserOpBytes*>(context);
  const std::size_t elem = op.elem_size;
  if (count == 0) return;
  if (src_first) {  // dst = src (+) acc
    if (acc != dst) std::memcpy(dst, acc, count * elem);
    op.fn(src, dst, count);
    return;
  }
  if (acc != dst) {  // dst = acc (+) src
    std::memcpy(dst, src, count * elem);
    op.fn(acc, dst, count);
    return;
  }
  // dst = dst (+) src
  const std::size_t per = std::max<std::size_t>(1, kUserBlock / elem);
  std::byte* right = user_buffer(std::min(per, count) * elem);
  for (std::size_t at = 0; at < count; at += per) {
    const std::size_t n = std::min(per, count - at);
    std::byte* d = dst + at * elem;
    std::memcpy(right, src + at * elem, n * elem);
    op.fn(d, right, n);
    std::memcpy(d, right, n * elem);
  }
}

}  // namespace

Combiner user_combiner(std::shared_ptr<const UserOpBytes> op) {
  Combiner c;
  c.user = user_combine;
  c.context = std::move(op);
  return c;
}

}  // namespace lanes::detail
