/* mpi-pair-bandwidth: point-to-point bandwidth of the MPI library between nodes, every pair at
 * once, to tell whether a (emulated) cluster delivers its links' rate to MPI processes.
 *
 *   mpirun -np P mpi-pair-bandwidth [--bytes 4000000] [--reps 20] [--bidir]
 *
 * Rank r of the first half pairs with rank r + P/2 (with P/2 processes on each of two nodes,
 * or one per node on 2 nodes, every pair crosses the nodes). Per repetition, after a barrier,
 * the first half sends one message of --bytes to its partner (with --bidir both send at once);
 * the time is the slowest rank's. Printed: the average and best time, the aggregate rate in
 * Gbit/s over all pairs and directions, from the average and from the best repetition, and how
 * many hosts the senders and the receivers of the first direction span. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  long bytes = 4000000;
  int reps = 20, bidir = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
      bytes = atol(argv[++i]);
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--bidir") == 0) {
      bidir = 1;
    } else {
      if (me == 0) fprintf(stderr, "usage: mpi-pair-bandwidth [--bytes N] [--reps N] [--bidir]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (p % 2 != 0 || bytes <= 0 || reps <= 0) {
    if (me == 0) fprintf(stderr, "mpi-pair-bandwidth: needs an even number of processes\n");
    MPI_Finalize();
    return 2;
  }
  const int half = p / 2;
  const int sender = me < half;
  const int partner = sender ? me + half : me - half;
  char* out = malloc((size_t)bytes);
  char* in = malloc((size_t)bytes);
  if (out == NULL || in == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(out, me & 0xff, (size_t)bytes);
  double sum = 0, best = 1e30;
  for (int rep = -2; rep < reps; ++rep) {  // two warm-up repetitions
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Request req[2];
    int n = 0;
    if (sender || bidir)
      MPI_Isend(out, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD, &req[n++]);
    if (!sender || bidir)
      MPI_Irecv(in, (int)bytes, MPI_BYTE, partner, 0, MPI_COMM_WORLD, &req[n++]);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rep >= 0) {
      sum += slowest;
      if (slowest < best) best = slowest;
    }
  }
  // Hosts of each half: the first rank of a host within its half counts it.
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  char* hosts = malloc((size_t)p * MPI_MAX_PROCESSOR_NAME);
  if (hosts == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  if (me == 0) {
    int spans[2] = {0, 0};
    for (int r = 0; r < p; ++r) {
      const int lo = r < half ? 0 : half;
      int first = 1;
      for (int q = lo; q < r; ++q) {
        if (strcmp(hosts + (size_t)q * MPI_MAX_PROCESSOR_NAME,
                   hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME) == 0) {
          first = 0;
        }
      }
      spans[r < half ? 0 : 1] += first;
    }
    const double bits = 8.0 * (double)bytes * half * (bidir ? 2 : 1);
    const double avg = sum / reps;
    printf(
        "pairs %d, %ld bytes, %s: avg %.3f ms (%.3f Gbit/s), best %.3f ms (%.3f Gbit/s), "
        "sender hosts %d, receiver hosts %d\n",
        half, bytes, bidir ? "both directions" : "one direction", avg * 1e3, bits / avg / 1e9,
        best * 1e3, bits / best / 1e9, spans[0], spans[1]);
  }
  free(hosts);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
