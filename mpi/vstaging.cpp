#include "mpi/vstaging.hpp"

#include <algorithm>
#include <cstring>
#include <lanes/error.hpp>
#include <limits>
#include <string>

#include "mpi/datatypes.hpp"
#include "mpi/staging.hpp"

namespace lanes::mpi_interpose {

namespace {

// Where block i starts (its first data byte for a contiguous datatype), relative to the base.
MPI_Count block_offset(const VTypedBuffer& b, const TypeShape& s, int i) {
  return static_cast<MPI_Count>(b.displs[i]) * s.extent;
}

const std::byte* address(const VTypedBuffer& b, MPI_Count offset) {
  return static_cast<const std::byte*>(b.base) + offset;
}

// Blocks in the user's memory (contiguous datatype): the span from the lowest block to the end
// of the highest, and each block's place in it. Empty blocks take no part.
std::span<const std::byte> in_place(const VTypedBuffer& b, const TypeShape& s, VBlocks& out) {
  MPI_Count low = std::numeric_limits<MPI_Count>::max(), high = 0;
  bool any = false;
  for (int i = 0; i < b.blocks; ++i) {
    if (b.counts[i] <= 0 || s.size == 0) continue;
    const MPI_Count start = block_offset(b, s, i) + s.true_lb;
    const MPI_Count end = start + static_cast<MPI_Count>(b.counts[i]) * s.size;
    low = any ? std::min(low, start) : start;
    high = any ? std::max(high, end) : end;
    any = true;
  }
  out.counts.assign(static_cast<std::size_t>(b.blocks), 0);
  out.displs.assign(static_cast<std::size_t>(b.blocks), 0);
  if (!any) return {};
  for (int i = 0; i < b.blocks; ++i) {
    if (b.counts[i] <= 0) continue;
    const auto k = static_cast<std::size_t>(i);
    out.counts[k] = static_cast<std::size_t>(b.counts[i]) * static_cast<std::size_t>(s.size);
    out.displs[k] = static_cast<std::size_t>(block_offset(b, s, i) + s.true_lb - low);
  }
  return std::span(address(b, low), static_cast<std::size_t>(high - low));
}

// Packed back to back in rank order: each block's place in the staging buffer.
std::size_t packed(const VTypedBuffer& b, const TypeShape& s, VBlocks& out) {
  out.counts.assign(static_cast<std::size_t>(b.blocks), 0);
  out.displs.assign(static_cast<std::size_t>(b.blocks), 0);
  std::size_t at = 0;
  for (int i = 0; i < b.blocks; ++i) {
    const auto k = static_cast<std::size_t>(i);
    out.counts[k] =
        static_cast<std::size_t>(std::max(0, b.counts[i])) * static_cast<std::size_t>(s.size);
    out.displs[k] = at;
    at += out.counts[k];
  }
  return at;
}

}  // namespace

VSendBytes::VSendBytes(const VTypedBuffer& b, MPI_Comm comm) {
  const TypeShape s = usable_shape(b.type);
  if (s.contiguous()) {
    view_ = in_place(b, s, blocks_);
    return;
  }
  staged_.resize(packed(b, s, blocks_));
  for (int i = 0; i < b.blocks; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (blocks_.counts[k] == 0) continue;
    const SendBytes one({address(b, block_offset(b, s, i)), b.counts[i], b.type, 1}, comm);
    std::memcpy(staged_.data() + blocks_.displs[k], one.bytes().data(), blocks_.counts[k]);
  }
  view_ = staged_;
}

VRecvBytes::VRecvBytes(const VTypedBuffer& b, MPI_Comm comm) : buffer_(b), comm_(comm) {
  const TypeShape s = usable_shape(b.type);
  if (s.contiguous()) {
    const std::span<const std::byte> v = in_place(b, s, blocks_);
    view_ = std::span(const_cast<std::byte*>(v.data()), v.size());
    return;
  }
  counts_.assign(b.counts, b.counts + b.blocks);
  displs_.assign(b.displs, b.displs + b.blocks);
  buffer_.counts = counts_.data();
  buffer_.displs = displs_.data();
  staged_.resize(packed(b, s, blocks_));
  view_ = staged_;
}

void VRecvBytes::finish() {
  if (staged_.empty()) return;
  const TypeShape s = usable_shape(buffer_.type);
  for (int i = 0; i < buffer_.blocks; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (blocks_.counts[k] == 0) continue;
    RecvBytes one(
        {address(buffer_, block_offset(buffer_, s, i)), buffer_.counts[i], buffer_.type, 1}, comm_);
    std::memcpy(one.bytes().data(), staged_.data() + blocks_.displs[k], blocks_.counts[k]);
    one.finish();
  }
}

}  // namespace lanes::mpi_interpose
