// Contiguous byte views of a v-collective's MPI buffers: block i is counts[i] elements of an MPI
// datatype at displs[i] * extent from the base (MPI's layout; displacements may be negative or
// out of order). With a contiguous datatype the view is the user's memory from the lowest block
// to the highest, each block at its byte offset in it; otherwise the blocks are packed back to
// back into a staging buffer (and unpacked from it by finish()), on this rank alone.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

namespace lanes::mpi_interpose {

struct VTypedBuffer {
  const void* base = nullptr;
  const int* counts = nullptr;  // per block, in elements
  const int* displs = nullptr;  // per block, in extents
  MPI_Datatype type = MPI_BYTE;
  int blocks = 0;
};

// The view and each block's bytes and offset in it, as lanes' v-collectives take them.
struct VBlocks {
  std::vector<std::size_t> counts;
  std::vector<std::size_t> displs;
};

class VSendBytes {
 public:
  VSendBytes(const VTypedBuffer& buffer, MPI_Comm comm);
  std::span<const std::byte> bytes() const { return view_; }
  const VBlocks& blocks() const { return blocks_; }

 private:
  std::vector<std::byte> staged_;
  std::span<const std::byte> view_;
  VBlocks blocks_;
};

class VRecvBytes {
 public:
  VRecvBytes(const VTypedBuffer& buffer, MPI_Comm comm);
  std::span<std::byte> bytes() { return view_; }
  const VBlocks& blocks() const { return blocks_; }
  void finish();

 private:
  VTypedBuffer buffer_;
  std::vector<int> counts_, displs_;  // the caller's arrays may go before finish()
  MPI_Comm comm_;
  std::vector<std::byte> staged_;
  std::span<std::byte> view_;
  VBlocks blocks_;
};

}  // namespace lanes::mpi_interpose
