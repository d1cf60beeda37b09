// Bootstrap from an MPI communicator (built when MPI is found). Uses PMPI_* so that an MPI
// interposition library routing collectives through lanes never recurses into itself.
#pragma once

#include <mpi.h>

#include <memory>

#include "transport/bootstrap/bootstrap.hpp"

namespace lanes::transport {

// True when MPI_Init has been called and MPI_Finalize has not.
bool mpi_active();

// Duplicates `comm` (so lanes' bootstrap traffic never mixes with the application's) and takes
// nodes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
std::unique_ptr<Bootstrap> make_mpi_bootstrap(MPI_Comm comm);

}  // namespace lanes::transport
