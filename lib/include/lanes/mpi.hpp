// Bootstrap lanes from an MPI communicator (installed when lanes was built with MPI).
#pragma once

#include <mpi.h>

#include <lanes/lanes.hpp>

namespace lanes::mpi {

// Collective over `comm`: the world communicator of the returned runtime holds the processes of
// `comm` in the same rank order; nodes come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
Runtime init(MPI_Comm comm);

}  // namespace lanes::mpi
