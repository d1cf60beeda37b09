/* An MPI program whose ranks pass different counts to one collective, run with liblanes_mpi and
 * without LANES_CHECK: bcast with the root's count larger and smaller, scatter with the root's
 * count smaller, gather, alltoall and allgather with the last rank's count larger. Each case runs
 * on a fresh duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN, followed by a barrier on it:
 * every rank must get an error code from one of the two (lanes revokes the communicator) within
 * 5 s, never crash or hang, and the program goes on to the next case and to MPI_Finalize.
 *
 * Prints "interpose_mismatch: ok" on rank 0 when every rank saw all of this. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1000 };

static int run_case(int which, MPI_Comm comm, int rank, int size, int* buf, int* out) {
  const int last = rank == size - 1;
  switch (which) {
    case 0:
      return MPI_Bcast(buf, rank == 0 ? 2 * N : N, MPI_INT, 0, comm);
    case 1:
      return MPI_Bcast(buf, rank == 0 ? N / 2 : N, MPI_INT, 0, comm);
    case 2: {
      const int mine = rank == 0 ? N / 2 : N;
      return MPI_Scatter(buf, mine, MPI_INT, out, mine, MPI_INT, 0, comm);
    }
    case 3:
      return MPI_Gather(buf, last ? 2 * N : N, MPI_INT, out, N, MPI_INT, 0, comm);
    case 4:
      return MPI_Alltoall(buf, last ? 2 * N : N, MPI_INT, out, last ? 2 * N : N, MPI_INT, comm);
    default:
      return MPI_Allgather(buf, last ? 2 * N : N, MPI_INT, out, last ? 2 * N : N, MPI_INT, comm);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* buf = calloc((size_t)(4 * N * size), sizeof(int));
  int* out = calloc((size_t)(4 * N * size), sizeof(int));
  const char* names[] = {"bcast, root larger",        "bcast, root smaller",
                         "scatter, root smaller",     "gather, one rank larger",
                         "alltoall, one rank larger", "allgather, one rank larger"};
  int failures = 0;
  for (int which = 0; which < 6; ++which) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const double start = MPI_Wtime();
    const int rc1 = run_case(which, comm, rank, size, buf, out);
    const int rc2 = rc1 == MPI_SUCCESS ? MPI_Barrier(comm) : MPI_SUCCESS;
    const double took = MPI_Wtime() - start;
    if ((rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS) || took > 5.0) {
      printf("rank %d: FAIL %s: call %d, barrier %d after %.2f s\n", rank, names[which], rc1, rc2,
             took);
      ++failures;
    }
    MPI_Comm_free(&comm);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(total == 0 ? "interpose_mismatch: ok\n" : "interpose_mismatch: FAIL\n");
  free(buf);
  free(out);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
