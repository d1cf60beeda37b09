#include "mpi/staging.hpp"

#include "mpi/datatypes.hpp"

#include <algorithm>
#include <climits>
#include <lanes/error.hpp>
#include <string>

namespace lanes::mpi_interpose {

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS)
    throw lanes::Error(lanes::Errc::invalid_argument, std::string(what) + " failed");
}

using Shape = TypeShape;

// The callers have checked the arguments (mpi/arguments.hpp); a negative count or a size beyond
// an address is still refused here rather than turned into a huge span.
std::size_t total_bytes(const TypedBuffer& b, const Shape& s) {
  MPI_Count per_block = 0, all = 0;
  if (b.count < 0 || s.size < 0 || b.blocks < 0 ||
      __builtin_mul_overflow(b.count, s.size, &per_block) ||
      __builtin_mul_overflow(per_block, static_cast<MPI_Count>(b.blocks), &all)) {
    throw lanes::Error(lanes::Errc::invalid_argument,
                       "count " + std::to_string(b.count) + " of " + std::to_string(s.size) +
                           "-byte elements in " + std::to_string(b.blocks) +
                           " blocks is not a size");
  }
  return static_cast<std::size_t>(all);
}

// MPI_Pack/MPI_Unpack take int counts: walk a block in runs of elements below INT_MAX bytes.
template <class Fn>
void for_each_run(const TypedBuffer& b, const Shape& s, Fn fn) {
  const MPI_Count per_run = std::max<MPI_Count>(1, INT_MAX / std::max<MPI_Count>(1, s.size));
  std::size_t packed = 0;
  for (int blk = 0; blk < b.blocks; ++blk) {
    const MPI_Count block_start = static_cast<MPI_Count>(blk) * b.count * s.extent;
    for (MPI_Count done = 0; done < b.count; done += per_run) {
      const MPI_Count n = std::min(per_run, b.count - done);
      fn(block_start + done * s.extent, static_cast<int>(n), packed, static_cast<int>(n * s.size));
      packed += static_cast<std::size_t>(n * s.size);
    }
  }
}

}  // namespace

const void* block_address(const void* base, MPI_Count count, MPI_Datatype type, int i) {
  return static_cast<const std::byte*>(base) +
         static_cast<MPI_Count>(i) * count * usable_shape(type).extent;
}

SendBytes::SendBytes(const TypedBuffer& b, MPI_Comm comm) {
  const Shape s = usable_shape(b.type);
  const std::size_t bytes = total_bytes(b, s);
  const auto* base = static_cast<const std::byte*>(b.base);
  if (s.contiguous() || bytes == 0) {
    view_ = std::span(bytes == 0 ? nullptr : base + s.true_lb, bytes);
    return;
  }
  staged_.resize(bytes);
  for_each_run(b, s, [&](MPI_Count offset, int n, std::size_t out, int out_bytes) {
    int position = 0;
    check(PMPI_Pack(base + offset, n, b.type, staged_.data() + out, out_bytes, &position, comm),
          "MPI_Pack");
  });
  view_ = staged_;
}

RecvBytes::RecvBytes(const TypedBuffer& b, MPI_Comm comm) : buffer_(b), comm_(comm) {
  const Shape s = usable_shape(b.type);
  const std::size_t bytes = total_bytes(b, s);
  auto* base = static_cast<std::byte*>(const_cast<void*>(b.base));
  if (s.contiguous() || bytes == 0) {
    view_ = std::span(bytes == 0 ? nullptr : base + s.true_lb, bytes);
    return;
  }
  staged_.resize(bytes);
  view_ = staged_;
}

void RecvBytes::finish() {
  if (staged_.empty()) return;
  const Shape s = usable_shape(buffer_.type);
  auto* base = static_cast<std::byte*>(const_cast<void*>(buffer_.base));
  for_each_run(buffer_, s, [&](MPI_Count offset, int n, std::size_t in, int in_bytes) {
    int position = 0;
    check(PMPI_Unpack(staged_.data() + in, in_bytes, &position, base + offset, n, buffer_.type,
                      comm_),
          "MPI_Unpack");
  });
}

}  // namespace lanes::mpi_interpose
