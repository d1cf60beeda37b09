// Contiguous byte views of MPI buffers. A buffer of `blocks` blocks, each `count` elements of an
// MPI datatype (block i at base + i * count * extent, as MPI's collectives lay them out), is
// used in place when the datatype is contiguous; otherwise it is packed into (or unpacked from)
// a staging buffer with MPI_Pack / MPI_Unpack, on this rank alone. Packing locally, rather than
// forwarding such calls to MPI, keeps the decision to serve a call identical on every rank even
// when ranks describe the same data with different datatypes (a root scattering matrix columns
// with a vector type to ranks that receive plain MPI_INT).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

namespace lanes::mpi_interpose {

struct TypedBuffer {
  const void* base = nullptr;
  MPI_Count count = 0;  // elements per block
  MPI_Datatype type = MPI_BYTE;
  int blocks = 1;
};

// Where block i of a buffer of `count`-element blocks starts.
const void* block_address(const void* base, MPI_Count count, MPI_Datatype type, int i);

// Data to send: a view of the buffer's bytes, packed when the datatype is not contiguous.
class SendBytes {
 public:
  SendBytes(const TypedBuffer& buffer, MPI_Comm comm);
  std::span<const std::byte> bytes() const { return view_; }

 private:
  std::vector<std::byte> staged_;
  std::span<const std::byte> view_;
};

// Space to receive into: a view of the buffer's bytes, or a staging buffer whose contents
// finish() unpacks into the user's buffer when the datatype is not contiguous.
class RecvBytes {
 public:
  RecvBytes(const TypedBuffer& buffer, MPI_Comm comm);
  std::span<std::byte> bytes() { return view_; }
  void finish();

 private:
  TypedBuffer buffer_;
  MPI_Comm comm_;
  std::vector<std::byte> staged_;
  std::span<std::byte> view_;
};

}  // namespace lanes::mpi_interpose
