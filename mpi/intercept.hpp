// What every interposed MPI collective does (intercept) and the small helpers the blocking and
// nonblocking entry points share.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

#include "mpi/arguments.hpp"
#include "mpi/staging.hpp"
#include "mpi/state.hpp"

namespace lanes::mpi_interpose {

// One interposed call. When lanes may serve it, `check(args)` first records this rank's
// erroneous arguments (local, before any communication), which become an MPI error class raised
// through comm's error handler; then `serve(lanes_comm)` runs it, or `forward()` (PMPI_*) when
// lanes does not serve such a call (`supported` false) or the collective is not routed to lanes.
// An exception becomes an MPI error raised through comm's error handler.
template <class Check, class Serve, class Forward>
int intercept(Coll coll, MPI_Comm comm, const char* function, Check check, Serve serve,
              Forward forward, bool supported = true) {
  try {
    // A repeated call on the communicator served last: nothing to ask MPI about it.
    if (const auto k = known(coll, comm)) {
      Arguments args(k->rank, k->size);
      check(args);
      if (const auto& bad = args.error()) {
        return raise_error_class(comm, function, bad->error_class, bad->what);
      }
      if (!supported) {
        count_fallback();
        return forward();
      }
      serve(*k->lanes_comm);
      count_served(coll);
      return MPI_SUCCESS;
    }
    if (routed(coll, comm)) {
      Arguments args(comm);
      check(args);
      if (const auto& bad = args.error()) {
        return raise_error_class(comm, function, bad->error_class, bad->what);
      }
    }
    lanes::Communicator* lc = supported ? serving(coll, comm) : nullptr;
    if (lc == nullptr) {
      count_fallback();
      return forward();
    }
    serve(*lc);
    count_served(coll);
    return MPI_SUCCESS;
  } catch (...) {
    return raise_error(comm, function);
  }
}

// A private copy of bytes that may alias the receive buffer (MPI_IN_PLACE).
inline std::vector<std::byte> copy_of(std::span<const std::byte> b) {
  return std::vector<std::byte>(b.begin(), b.end());
}

// The bytes of this rank's own block of a receive buffer laid out by (count, type).
inline std::vector<std::byte> own_block(const void* recvbuf, int count, MPI_Datatype type, int rank,
                                        MPI_Comm comm) {
  const void* own = lanes::mpi_interpose::block_address(recvbuf, count, type, rank);
  return copy_of(SendBytes({own, count, type, 1}, comm).bytes());
}

}  // namespace lanes::mpi_interpose
