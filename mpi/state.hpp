// The process-wide state of liblanes_mpi: the lanes runtime over MPI_COMM_WORLD (started in
// MPI_Init, finalized in MPI_Finalize), one lanes communicator per MPI communicator (cached as an
// MPI attribute, released by the attribute's delete callback), and the call counters.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <lanes/lanes.hpp>

#include "mpi/settings.hpp"

namespace lanes::mpi_interpose {

// After PMPI_Init(_thread): reads the settings and starts lanes over MPI_COMM_WORLD (collective).
// A failure leaves lanes off for the whole run (every call goes to MPI) and says why on rank 0.
void start(int thread_level);

// Before PMPI_Finalize: prints the statistics line (collective) and releases everything lanes
// holds, so nothing is left in /dev/shm.
void stop();

// The lanes communicator serving `coll` on `comm`, created on first use (collective over comm),
// or nullptr when the call must go to MPI. The answer is the same on every rank of comm.
lanes::Communicator* serving(Coll coll, MPI_Comm comm);

// Counts a call lanes served or one forwarded to MPI.
void count_served(Coll coll);
void count_fallback();

// Turns an exception from lanes into an MPI error code raised through comm's error handler.
int raise_error(MPI_Comm comm, const char* function);

}  // namespace lanes::mpi_interpose
