// An MPI program that hands its communicator to lanes: lanes bootstraps from MPI_COMM_WORLD
// (MPI_Allgather, nodes from MPI_Comm_split_type) and then moves the data itself.
//   mpirun -np 4 ./mpi_collectives
#include <mpi.h>

#include <cstdio>
#include <lanes/mpi.hpp>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    lanes::Runtime rt = lanes::mpi::init(MPI_COMM_WORLD);
    lanes::Communicator comm = rt.world();
    const int me = comm.rank();
    const auto p = static_cast<std::size_t>(comm.size());

    std::vector<double> values(1 << 18, me == 0 ? 2.5 : 0.0);
    comm.bcast(values, 0);

    std::vector<int> send(p * 2), recv(p * 2);
    for (std::size_t j = 0; j < p; ++j)
      send[2 * j] = send[2 * j + 1] = me * 100 + static_cast<int>(j);
    comm.alltoall(send, recv);

    bool ok = values.back() == 2.5;
    for (std::size_t j = 0; j < p; ++j) ok = ok && recv[2 * j] == static_cast<int>(j) * 100 + me;
    // The MPI library and lanes live side by side: compare notes through MPI.
    int all_ok = 0, mine = ok ? 1 : 0;
    MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me == 0)
      std::printf("mpi_collectives: %zu ranks (bootstrap %s): %s\n", p, rt.bootstrap_name().c_str(),
                  all_ok ? "correct" : "WRONG");
    status = all_ok ? 0 : 1;
  }  // lanes finalizes before MPI does
  MPI_Finalize();
  return status;
}
