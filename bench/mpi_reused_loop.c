/* mpi-reused-loop: a plain MPI program (it knows nothing of lanes) timing MPI_Bcast,
 * MPI_Scatter, MPI_Gather, MPI_Alltoall and MPI_Allgather the way OSU's benchmarks do: one send
 * and one receive buffer allocated once and reused by every call; each repetition MPI_Wtime
 * around one call, then an MPI_Barrier (not timed); the time per call is the average over
 * repetitions and then over ranks (OSU's "Avg Latency").
 * Run it as it is and with liblanes_mpi preloaded (bench/preload_sweep.sh does both):
 *   mpirun -np 2 --bind-to core ./mpi-reused-loop [--max-bytes 4194304]
 * Prints "collective bytes us_per_call", one line per collective and size (bytes per block:
 * every rank's block for scatter, gather, alltoall and allgather), 1 B to --max-bytes by 4x.
 * --alloc-mem 1: the two buffers come from MPI_Alloc_mem (lanes' shared heap under
 * liblanes_mpi, the MPI library's memory without it) rather than malloc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iterations(long bytes) {
  if (bytes <= 4096) return 2000;
  if (bytes <= 65536) return 500;
  if (bytes <= 1048576) return 100;
  return 30;
}

int main(int argc, char** argv) {
  long max_bytes = 4L << 20;
  int alloc_mem = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--max-bytes") == 0) max_bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "--alloc-mem") == 0) alloc_mem = atoi(argv[i + 1]);
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t total_bytes = (size_t)max_bytes * (size_t)size;
  unsigned char *send = NULL, *recv = NULL;
  if (alloc_mem) {
    MPI_Alloc_mem((MPI_Aint)total_bytes, MPI_INFO_NULL, &send);
    MPI_Alloc_mem((MPI_Aint)total_bytes, MPI_INFO_NULL, &recv);
  } else {
    send = malloc(total_bytes);
    recv = malloc(total_bytes);
  }
  if (send == NULL || recv == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(send, rank + 1, total_bytes);
  memset(recv, 0, total_bytes);
  const char* names[] = {"bcast", "scatter", "gather", "alltoall", "allgather"};
  for (int coll = 0; coll < 5; ++coll) {
    for (long bytes = 1; bytes <= max_bytes; bytes *= 4) {
      const int n = (int)bytes, iters = iterations(bytes);
      double total = 0;
      for (int i = -iters / 10 - 1; i < iters; ++i) { /* warm-up first, untimed */
        const double t0 = MPI_Wtime();
        switch (coll) {
          case 0:
            MPI_Bcast(send, n, MPI_BYTE, 0, MPI_COMM_WORLD);
            break;
          case 1:
            MPI_Scatter(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
            break;
          case 2:
            MPI_Gather(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
            break;
          case 3:
            MPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, MPI_COMM_WORLD);
            break;
          default:
            MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, MPI_COMM_WORLD);
            break;
        }
        if (i >= 0) total += MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
      }
      const double mine = total / iters;
      double sum = 0;
      MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      const double average = sum / size;
      if (rank == 0) printf("%s %ld %.3f\n", names[coll], bytes, average * 1e6);
    }
  }
  if (alloc_mem) {
    MPI_Free_mem(send);
    MPI_Free_mem(recv);
  } else {
    free(send);
    free(recv);
  }
  MPI_Finalize();
  return 0;
}
