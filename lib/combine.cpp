#include "lib/combine.hpp"

#include <algorithm>
#include <cstring>
#include <lanes/communicator.hpp>
#include <utility>

#include "lib/combine_kernels.hpp"

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

CombineFn combine_fn(Datatype type, Op op) {
  static const kernels::Isa isa = kernels::widest_supported();
  return kernels::for_isa(isa, type, op);
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
