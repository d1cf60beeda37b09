// Bootstrap lanes from an MPI communicator (installed when lanes was built with MPI).
#pragma once

#include <mpi.h>

#include <lanes/lanes.hpp>

namespace lanes::mpi {

// Collective over `comm`: the world communicator of the returned runtime holds the processes of
// `comm` in the same rank order; nodes come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
Runtime init(MPI_Comm comm);

// Collective over `comm` only, an intra-communicator whose processes all belong to `parent`: a
// communicator of comm's processes in comm's rank order that shares parent's rails (two small
// allgathers over comm, no new UCX contexts). Throws lanes::Error for an inter-communicator.
Communicator communicator(const Communicator& parent, MPI_Comm comm);

}  // namespace lanes::mpi
