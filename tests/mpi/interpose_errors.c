/* An erroneous MPI program, run with liblanes_mpi and LANES_CHECK=1: the ranks disagree on a
 * broadcast's size, then name a root that does not exist. With MPI_ERRORS_RETURN set on the
 * communicator each call must return an error code (never crash or hang), and the communicator's
 * error handler must have been called; afterwards MPI itself still works.
 * Prints "interpose_errors: ok" on rank 0 when every rank saw both errors. */
#include <mpi.h>
#include <stdio.h>

static int handler_calls;

static void count_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  (void)code;
  ++handler_calls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(count_error, &eh);
  MPI_Comm_set_errhandler(comm, eh);

  int data[8] = {0};
  /* Rank 0 broadcasts 8 ints, the others expect 4. */
  const int rc1 = MPI_Bcast(data, rank == 0 ? 8 : 4, MPI_INT, 0, comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int rc2 = MPI_Bcast(data, 1, MPI_INT, size, comm);
  int ok = rc1 != MPI_SUCCESS && rc2 != MPI_SUCCESS && handler_calls == 1;
  if (!ok) {
    printf("rank %d: first call %d, second call %d, handler called %d times\n", rank, rc1, rc2,
           handler_calls);
  }
  int all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("interpose_errors: %s\n", all ? "ok" : "FAIL");
  MPI_Errhandler_free(&eh);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return all ? 0 : 1;
}
