/* A plain MPI program that knows nothing of lanes: times MPI_Bcast, MPI_Scatter and
 * MPI_Alltoall (each repetition: MPI_Barrier, then MPI_Wtime around one call; the slowest rank
 * counts) and checks the data. Run it as it is, then with liblanes_mpi preloaded:
 *   mpirun -np 4 ./mpi_timing --bytes 16777216
 *   mpirun -np 4 -x LD_PRELOAD=/usr/local/lib/x86_64-linux-gnu/liblanes_mpi.so ./mpi_timing ...
 * --bytes is the broadcast size, and the scatter's and alltoall's buffer size per process. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double slowest(double t) {
  double max = 0;
  MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

int main(int argc, char** argv) {
  long bytes = 16L << 20;
  int reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--bytes") == 0) bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int block = (int)(bytes / size);
  unsigned char* a = malloc((size_t)bytes);
  unsigned char* b = malloc((size_t)bytes);
  const char* names[] = {"MPI_Bcast", "MPI_Scatter", "MPI_Alltoall"};
  int bad = 0;
  for (int coll = 0; coll < 3; ++coll) {
    double sum = 0, min = 1e30;
    for (int r = -3; r < reps; ++r) { /* three warm-up calls */
      for (long i = 0; i < bytes; ++i) a[i] = (unsigned char)(i * 7 + rank + r);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (coll == 0) MPI_Bcast(a, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      if (coll == 1) MPI_Scatter(a, block, MPI_BYTE, b, block, MPI_BYTE, 0, MPI_COMM_WORLD);
      if (coll == 2) MPI_Alltoall(a, block, MPI_BYTE, b, block, MPI_BYTE, MPI_COMM_WORLD);
      const double t = slowest(MPI_Wtime() - t0);
      if (r >= 0) {
        sum += t;
        if (t < min) min = t;
      }
      /* What each rank must hold, computed here (rank s's byte i was i * 7 + s + r). */
      for (long i = 0; i < (coll == 0 ? bytes : (long)block * size); ++i) {
        unsigned char want;
        if (coll == 0)
          want = (unsigned char)(i * 7 + 0 + r);
        else if (coll == 1)
          want = (unsigned char)((rank * (long)block + i) * 7 + 0 + r);
        else
          want = (unsigned char)((rank * (long)block + i % block) * 7 + i / block + r);
        if ((coll == 0 ? a[i] : b[i]) != want) bad = 1;
        if (coll == 1 && i + 1 == block) break;
      }
    }
    if (rank == 0) {
      printf("%-12s %10ld bytes  avg %10.1f us  min %10.1f us\n", names[coll], bytes,
             sum / reps * 1e6, min * 1e6);
    }
  }
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("data %s\n", any_bad ? "WRONG" : "ok");
  free(a);
  free(b);
  MPI_Finalize();
  return any_bad;
}
