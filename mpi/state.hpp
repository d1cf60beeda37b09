// The process-wide state of liblanes_mpi: the lanes runtime over MPI_COMM_WORLD (started in
// MPI_Init, finalized in MPI_Finalize), one lanes communicator per MPI communicator (cached as an
// MPI attribute, released by the attribute's delete callback), and the call counters.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <lanes/lanes.hpp>
#include <optional>
#include <string>

#include "mpi/settings.hpp"

namespace lanes::mpi_interpose {

// After PMPI_Init(_thread): reads the settings and starts lanes over MPI_COMM_WORLD (collective).
// A failure leaves lanes off for the whole run (every call goes to MPI) and says why on rank 0.
void start(int thread_level);

// Before PMPI_Finalize: prints the statistics line (collective) and releases everything lanes
// holds, so nothing is left in /dev/shm.
void stop();

// MPI_Alloc_mem while lanes is on: `bytes` from lanes' shared heap, or nullptr (lanes off, or
// no heap: the MPI library's memory then). Thread-safe.
void* allocate_memory(std::size_t bytes);
// MPI_Free_mem: gives back a block allocate_memory() returned; false when `p` is not one.
bool free_memory(void* p);

// Whether lanes may serve `coll` on `comm` (lanes on, the collective enabled, comm an
// intra-communicator): local, no communication. The same answer on every rank of comm.
bool routed(Coll coll, MPI_Comm comm);

// The lanes communicator serving `coll` on `comm`, created on first use (collective over comm),
// or nullptr when the call must go to MPI. The answer is the same on every rank of comm.
lanes::Communicator* serving(Coll coll, MPI_Comm comm);

// The communicator of the previous call lanes served, known without asking MPI: when `comm` is
// that one (an intra-communicator that has its lanes communicator) and `coll` is enabled, its
// lanes communicator and this process's rank and size in it; nullopt otherwise. Freeing the
// communicator forgets it (the attribute's delete callback).
struct KnownComm {
  lanes::Communicator* lanes_comm;
  int rank;
  int size;
};
std::optional<KnownComm> known(Coll coll, MPI_Comm comm);

// A private duplicate of MPI_COMM_SELF whose error handler is MPI_ERRORS_RETURN, for asking the
// MPI library about a datatype without raising an error on the program's communicators.
// MPI_COMM_NULL while lanes is off.
MPI_Comm quiet_self();

// Counts a call lanes served or one forwarded to MPI.
void count_served(Coll coll);
void count_fallback();

// Turns an exception from lanes into an MPI error code raised through comm's error handler.
int raise_error(MPI_Comm comm, const char* function);

// Raises `error_class` (MPI_ERR_COUNT, ...) through comm's error handler after a lanes-mpi line
// on stderr naming the call, the rank and `what`; returns error_class.
int raise_error_class(MPI_Comm comm, const char* function, int error_class,
                      const std::string& what);

}  // namespace lanes::mpi_interpose
