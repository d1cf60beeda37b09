// lanes::mpi::communicator: a lanes communicator for the processes of an MPI communicator.
#include <lanes/mpi.hpp>

#include <string>
#include <vector>

namespace lanes::mpi {

namespace {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  PMPI_Error_string(rc, text, &len);
  throw Error(Errc::bootstrap, std::string(what) + " failed: " + text);
}

}  // namespace

Communicator communicator(const Communicator& parent, MPI_Comm comm) {
  int inter = 0;
  check_mpi(PMPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter != 0) {
    throw Error(Errc::invalid_argument, "an MPI inter-communicator has no lanes counterpart");
  }
  int size = 0;
  check_mpi(PMPI_Comm_size(comm, &size), "MPI_Comm_size");
  // PMPI_*: the exchange must not come back through an interposed MPI_Allgather.
  const Communicator::Exchange exchange = [comm](const void* mine, void* all, std::size_t bytes) {
    check_mpi(PMPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes),
                             MPI_BYTE, comm),
              "MPI_Allgather");
  };
  const int mine = parent.rank();
  std::vector<int> ranks(static_cast<std::size_t>(size));
  exchange(&mine, ranks.data(), sizeof mine);
  return parent.group(ranks, exchange);
}

}  // namespace lanes::mpi
