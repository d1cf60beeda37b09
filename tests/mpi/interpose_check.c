/* An ordinary MPI program (it knows nothing of lanes) that checks MPI_Bcast, MPI_Scatter,
 * MPI_Gather, MPI_Alltoall, MPI_Allgather, MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block and
 * MPI_Barrier on several communicators (world, split halves, reversed order, a dup), with every
 * root, counts from 0 to large, MPI_IN_PLACE, a contiguous derived datatype and a strided one, and
 * ranks that describe the same data with different datatypes. Every expected value is computed
 * here, never asked of MPI. Also creates and frees hundreds of short-lived communicators, and makes
 * calls on an inter-communicator.
 *
 * Prints on rank 0: "expect: bcast=N scatter=N alltoall=N allgather=N gather=N reduce=N
 * allreduce=N reduce_scatter_block=N barrier=N inter=N" (calls summed over ranks; inter: calls
 * that must go to the MPI library: on inter-communicators, and reductions with MPI_MAXLOC or a
 * user-defined operation) and
 * "checksum: X" over every result, so that runs with and without liblanes_mpi can be compared.
 * Exits 1 on any wrong value.
 *
 *   interpose_check [--large N] (ints in the large bcast; default 1048576) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
  BCAST,
  SCATTER,
  ALLTOALL,
  ALLGATHER,
  GATHER,
  REDUCE,
  ALLREDUCE,
  REDUCE_SCATTER_BLOCK,
  BARRIER,
  INTER,
  NCOUNTS
};
static long long calls[NCOUNTS];
static uint64_t checksum = 1469598103934665603ull;
static long errors;
static const char* where = "";

/* The value element i of the data that `owner` contributes to call `tag` holds. */
static int value(int tag, int owner, long i) {
  return (int)((tag * 7919L + owner * 104729L + i * 31L) % 2147483647L) ^ 0x5a5a;
}

static void expect(int got, int want, long i) {
  checksum = (checksum ^ (uint32_t)got) * 1099511628211ull;
  if (got != want && errors++ < 10) {
    int r;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    fprintf(stderr, "rank %d: %s: element %ld is %d, expected %d\n", r, where, i, got, want);
  }
}

/* Datatypes: plain MPI_INT; a contiguous derived type of 3 ints; a strided "int" whose extent
 * is two ints (element i at buf[2 * i]). `scale` ints of data per element, `stride` ints of
 * buffer per element. */
typedef struct {
  const char* name;
  MPI_Datatype type;
  int scale;  /* ints of data per element */
  int stride; /* ints of buffer between consecutive data ints */
} Kind;

static Kind kinds[3];

static void make_kinds(void) {
  kinds[0] = (Kind){"int", MPI_INT, 1, 1};
  MPI_Type_contiguous(3, MPI_INT, &kinds[1].type);
  MPI_Type_commit(&kinds[1].type);
  kinds[1].name = "contiguous3";
  kinds[1].scale = 3;
  kinds[1].stride = 1;
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &kinds[2].type);
  MPI_Type_commit(&kinds[2].type);
  kinds[2].name = "strided";
  kinds[2].scale = 1;
  kinds[2].stride = 2;
}

/* Buffers: malloc, or MPI_Alloc_mem during the sweep over the duplicate of MPI_COMM_WORLD (lanes'
 * shared heap under liblanes_mpi). alloc_mem_blocks counts the blocks MPI_Alloc_mem gave,
 * heap_blocks those that lie in a mapping of lanes' heap ("memfd:lanes-heap"). */
static int use_alloc_mem;
static long alloc_mem_blocks, heap_blocks;

static int in_lanes_heap(const void* p) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  if (!f) return 0;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (strstr(line, "lanes-heap") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
      found = (unsigned long)p >= lo && (unsigned long)p < hi;
  }
  fclose(f);
  return found;
}

static void* buffer(size_t bytes) {
  if (!use_alloc_mem) return malloc(bytes);
  void* p = NULL;
  MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &p);
  ++alloc_mem_blocks;
  heap_blocks += in_lanes_heap(p);
  return p;
}

static void release(void* p) {
  if (use_alloc_mem)
    MPI_Free_mem(p);
  else
    free(p);
}

/* A buffer of n data ints laid out for kind k (holes filled with a marker). */
static int* alloc_ints(long n, const Kind* k) {
  long len = n * k->stride + 1;
  int* b = buffer((size_t)len * sizeof(int));
  for (long i = 0; i < len; ++i) b[i] = -7;
  return b;
}
#define AT(buf, k, i) (buf)[(long)(i) * (k)->stride]

static void check_holes(const int* b, long n, const Kind* k) {
  for (long i = 0; i < n * k->stride; ++i) {
    if (k->stride > 1 && i % k->stride != 0) expect(b[i], -7, i);
  }
}

static int tag_counter;

static void test_bcast(MPI_Comm comm, const Kind* k, long count, int root) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const long n = count * k->scale;
  const int tag = ++tag_counter;
  int* b = alloc_ints(n, k);
  if (rank == root) {
    for (long i = 0; i < n; ++i) AT(b, k, i) = value(tag, root, i);
  }
  where = "MPI_Bcast";
  MPI_Bcast(b, (int)count, k->type, root, comm);
  ++calls[BCAST];
  for (long i = 0; i < n; ++i) expect(AT(b, k, i), value(tag, root, i), i);
  check_holes(b, n, k);
  release(b);
}

/* send kind ks at the root, receive kind kr everywhere (the same data in other layouts). */
static void test_scatter(MPI_Comm comm, const Kind* ks, const Kind* kr, long count, int root,
                         int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long n = count * kr->scale; /* ints per block */
  const long scount = n / ks->scale;
  const int tag = ++tag_counter;
  int* send = NULL;
  if (rank == root) {
    send = alloc_ints(n * size, ks);
    for (long i = 0; i < n * size; ++i)
      AT(send, ks, i) = value(tag, (int)(i / (n ? n : 1)), i % (n ? n : 1));
  }
  int* recv = alloc_ints(n, kr);
  where = "MPI_Scatter";
  if (rank == root && in_place) {
    MPI_Scatter(send, (int)scount, ks->type, MPI_IN_PLACE, (int)count, kr->type, root, comm);
    for (long i = 0; i < n * size; ++i) expect(AT(send, ks, i), value(tag, (int)(i / n), i % n), i);
  } else {
    MPI_Scatter(send, (int)scount, ks->type, recv, (int)count, kr->type, root, comm);
    for (long i = 0; i < n; ++i) expect(AT(recv, kr, i), value(tag, rank, i), i);
    check_holes(recv, n, kr);
  }
  ++calls[SCATTER];
  release(send);
  release(recv);
}

static void test_gather(MPI_Comm comm, const Kind* ks, const Kind* kr, long count, int root,
                        int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long n = count * ks->scale;
  const long rcount = n / kr->scale;
  const int tag = ++tag_counter;
  int* send = alloc_ints(n, ks);
  for (long i = 0; i < n; ++i) AT(send, ks, i) = value(tag, rank, i);
  int* recv = NULL;
  if (rank == root) recv = alloc_ints(n * size, kr);
  where = "MPI_Gather";
  if (rank == root && in_place) {
    for (long i = 0; i < n; ++i) AT(recv, kr, root * n + i) = value(tag, root, i);
    MPI_Gather(MPI_IN_PLACE, (int)count, ks->type, recv, (int)rcount, kr->type, root, comm);
  } else {
    MPI_Gather(send, (int)count, ks->type, recv, (int)rcount, kr->type, root, comm);
  }
  ++calls[GATHER];
  if (rank == root) {
    for (long i = 0; i < n * size; ++i) expect(AT(recv, kr, i), value(tag, (int)(i / n), i % n), i);
    check_holes(recv, n * size, kr);
  }
  release(send);
  release(recv);
}

static void test_alltoall(MPI_Comm comm, const Kind* k, long count, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long n = count * k->scale; /* ints per block */
  const int tag = ++tag_counter;
  /* Block d of rank s holds value(tag, s, d * n + i). */
  int* send = alloc_ints(n * size, k);
  int* recv = alloc_ints(n * size, k);
  int* src = in_place ? recv : send;
  for (long d = 0; d < size; ++d) {
    for (long i = 0; i < n; ++i) AT(src, k, d * n + i) = value(tag, rank, d * n + i);
  }
  where = "MPI_Alltoall";
  MPI_Alltoall(in_place ? MPI_IN_PLACE : send, (int)count, k->type, recv, (int)count, k->type,
               comm);
  ++calls[ALLTOALL];
  for (long s = 0; s < size; ++s) {
    for (long i = 0; i < n; ++i)
      expect(AT(recv, k, s * n + i), value(tag, (int)s, rank * n + i), i);
  }
  check_holes(recv, n * size, k);
  release(send);
  release(recv);
}

static void test_allgather(MPI_Comm comm, const Kind* k, long count, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long n = count * k->scale;
  const int tag = ++tag_counter;
  int* send = alloc_ints(n, k);
  int* recv = alloc_ints(n * size, k);
  for (long i = 0; i < n; ++i) {
    AT(send, k, i) = value(tag, rank, i);
    if (in_place) AT(recv, k, rank * n + i) = value(tag, rank, i);
  }
  where = "MPI_Allgather";
  MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int)count, k->type, recv, (int)count, k->type,
                comm);
  ++calls[ALLGATHER];
  for (long i = 0; i < n * size; ++i) expect(AT(recv, k, i), value(tag, (int)(i / n), i % n), i);
  check_holes(recv, n * size, k);
  release(send);
  release(recv);
}

/* Reductions, every expected value computed here: int sums (in place every other call), double
 * sums of small integers (exact in any order), unsigned bitwise or, float min, long max,
 * int64 products; MPI_Reduce at every root. 8-bit sums are left out: this MPI library's own
 * 8-bit MPI_SUM is wrong with its AVX component, and the run without lanes must pass too. */
static void test_reductions(MPI_Comm comm, long n, int root) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int tag = ++tag_counter;
  int* in = buffer((size_t)(n + 1) * sizeof(int));
  int* out = buffer((size_t)(n + 1) * sizeof(int));
  for (long i = 0; i < n; ++i) in[i] = value(tag, rank, i) % 1000;
  where = "MPI_Allreduce(MPI_INT, MPI_SUM)";
  MPI_Allreduce(in, out, (int)n, MPI_INT, MPI_SUM, comm);
  ++calls[ALLREDUCE];
  for (long i = 0; i < n; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += value(tag, r, i) % 1000;
    expect(out[i], want, i);
  }
  where = "MPI_Allreduce(MPI_IN_PLACE, MPI_INT, MPI_SUM)";
  for (long i = 0; i < n; ++i) out[i] = in[i];
  MPI_Allreduce(MPI_IN_PLACE, out, (int)n, MPI_INT, MPI_SUM, comm);
  ++calls[ALLREDUCE];
  for (long i = 0; i < n; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += value(tag, r, i) % 1000;
    expect(out[i], want, i);
  }
  where = "MPI_Reduce(MPI_INT, MPI_SUM)";
  for (long i = 0; i < n; ++i) out[i] = rank == root ? (tag % 2 ? in[i] : -7) : -7;
  MPI_Reduce(rank == root && tag % 2 ? MPI_IN_PLACE : in, rank == root ? out : NULL, (int)n,
             MPI_INT, MPI_SUM, root, comm);
  ++calls[REDUCE];
  for (long i = 0; rank == root && i < n; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += value(tag, r, i) % 1000;
    expect(out[i], want, i);
  }
  double* din = buffer((size_t)(n + 1) * sizeof(double));
  double* dout = buffer((size_t)(n + 1) * sizeof(double));
  for (long i = 0; i < n; ++i) din[i] = (double)(in[i] - 500);
  where = "MPI_Allreduce(MPI_DOUBLE, MPI_SUM)";
  MPI_Allreduce(din, dout, (int)n, MPI_DOUBLE, MPI_SUM, comm);
  ++calls[ALLREDUCE];
  for (long i = 0; i < n; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += value(tag, r, i) % 1000 - 500;
    expect((int)dout[i], want, i);
  }
  unsigned* uin = buffer((size_t)(n + 1) * sizeof(unsigned));
  unsigned* uout = buffer((size_t)(n + 1) * sizeof(unsigned));
  for (long i = 0; i < n; ++i) uin[i] = 1u << ((rank + i) % 31);
  where = "MPI_Allreduce(MPI_UNSIGNED, MPI_BOR)";
  MPI_Allreduce(uin, uout, (int)n, MPI_UNSIGNED, MPI_BOR, comm);
  ++calls[ALLREDUCE];
  for (long i = 0; i < n; ++i) {
    unsigned want = 0;
    for (int r = 0; r < size; ++r) want |= 1u << ((r + i) % 31);
    expect((int)uout[i], (int)want, i);
  }
  float* fin = buffer((size_t)(n + 1) * sizeof(float));
  float* fout = buffer((size_t)(n + 1) * sizeof(float));
  for (long i = 0; i < n; ++i) fin[i] = (float)(in[i] - 300) / 4.0f;
  where = "MPI_Reduce(MPI_FLOAT, MPI_MIN)";
  MPI_Reduce(fin, fout, (int)n, MPI_FLOAT, MPI_MIN, root, comm);
  ++calls[REDUCE];
  for (long i = 0; rank == root && i < n; ++i) {
    float want = 1e30f;
    for (int r = 0; r < size; ++r) {
      const float x = (float)(value(tag, r, i) % 1000 - 300) / 4.0f;
      if (x < want) want = x;
    }
    expect((int)(fout[i] * 4.0f), (int)(want * 4.0f), i);
  }
  long lin = (long)rank * 1000 + n, lout = 0;
  where = "MPI_Allreduce(MPI_LONG, MPI_MAX)";
  MPI_Allreduce(&lin, &lout, 1, MPI_LONG, MPI_MAX, comm);
  ++calls[ALLREDUCE];
  expect((int)lout, (int)((long)(size - 1) * 1000 + n), 0);
  int64_t pin = (rank % 3) + 1, pout = 0;
  where = "MPI_Allreduce(MPI_INT64_T, MPI_PROD)";
  MPI_Allreduce(&pin, &pout, 1, MPI_INT64_T, MPI_PROD, comm);
  ++calls[ALLREDUCE];
  int64_t want_prod = 1;
  for (int r = 0; r < size; ++r) want_prod *= (r % 3) + 1;
  expect((int)pout, (int)want_prod, 0);
  /* MPI_MAXLOC pairs: the MPI library's. */
  struct {
    int v, r;
  } loc = {3 * rank + 1, rank}, best = {0, 0};
  where = "MPI_Allreduce(MPI_2INT, MPI_MAXLOC)";
  MPI_Allreduce(&loc, &best, 1, MPI_2INT, MPI_MAXLOC, comm);
  ++calls[INTER];
  expect(best.v, 3 * (size - 1) + 1, 0);
  expect(best.r, size - 1, 1);
  release(in);
  release(out);
  release(din);
  release(dout);
  release(uin);
  release(uout);
  release(fin);
  release(fout);
}

/* A user-defined operation (commutative): sums modulo a prime. The MPI library serves it. */
enum { MODULUS = 1000003 };
static void sum_mod(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in;
  int* b = inout;
  for (int i = 0; i < *len; ++i) b[i] = (int)(((long)a[i] + b[i]) % MODULUS);
}

/* MPI_Reduce_scatter_block: every rank's input holds `size` blocks of n elements, and rank r
 * receives the combination of every rank's block r. Element j of rank s's input derives from
 * value(tag, s, j); rank r checks its own block, j = r * n + i, and that the element after it in
 * the receive buffer stays untouched. MPI_INT sums (also MPI_IN_PLACE, where the input is the
 * receive buffer, size * n elements, and the result lands in its first block), MPI_DOUBLE sums of
 * small integers (exact in any order), MPI_UNSIGNED bitwise or, and a user-defined operation. */
static void test_reduce_scatter_block(MPI_Comm comm, long n) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int tag = ++tag_counter;
  const long all = n * size, mine = (long)rank * n;
  int* in = buffer((size_t)(all + 1) * sizeof(int));
  int* out = buffer((size_t)(all + 1) * sizeof(int));
  int* want = buffer((size_t)(n + 1) * sizeof(int));
  for (long j = 0; j < all; ++j) in[j] = value(tag, rank, j) % 1000;
  for (long i = 0; i < n; ++i) {
    want[i] = 0;
    for (int r = 0; r < size; ++r) want[i] += value(tag, r, mine + i) % 1000;
  }

  where = "MPI_Reduce_scatter_block(MPI_INT, MPI_SUM)";
  for (long i = 0; i <= n; ++i) out[i] = -7;
  MPI_Reduce_scatter_block(in, out, (int)n, MPI_INT, MPI_SUM, comm);
  ++calls[REDUCE_SCATTER_BLOCK];
  for (long i = 0; i < n; ++i) expect(out[i], want[i], i);
  expect(out[n], -7, n);

  where = "MPI_Reduce_scatter_block(MPI_IN_PLACE, MPI_INT, MPI_SUM)";
  for (long j = 0; j < all; ++j) out[j] = in[j];
  out[all] = -7;
  MPI_Reduce_scatter_block(MPI_IN_PLACE, out, (int)n, MPI_INT, MPI_SUM, comm);
  ++calls[REDUCE_SCATTER_BLOCK];
  for (long i = 0; i < n; ++i) expect(out[i], want[i], i);
  expect(out[all], -7, all);

  double* din = buffer((size_t)(all + 1) * sizeof(double));
  double* dout = buffer((size_t)(n + 1) * sizeof(double));
  for (long j = 0; j < all; ++j) din[j] = (double)(in[j] - 500);
  for (long i = 0; i <= n; ++i) dout[i] = -7.0;
  where = "MPI_Reduce_scatter_block(MPI_DOUBLE, MPI_SUM)";
  MPI_Reduce_scatter_block(din, dout, (int)n, MPI_DOUBLE, MPI_SUM, comm);
  ++calls[REDUCE_SCATTER_BLOCK];
  for (long i = 0; i < n; ++i) expect((int)dout[i], want[i] - 500 * size, i);
  expect((int)dout[n], -7, n);

  unsigned* uin = buffer((size_t)(all + 1) * sizeof(unsigned));
  unsigned* uout = buffer((size_t)(n + 1) * sizeof(unsigned));
  for (long j = 0; j < all; ++j) uin[j] = 1u << ((rank + j) % 31);
  for (long i = 0; i <= n; ++i) uout[i] = 7u << 29;
  where = "MPI_Reduce_scatter_block(MPI_UNSIGNED, MPI_BOR)";
  MPI_Reduce_scatter_block(uin, uout, (int)n, MPI_UNSIGNED, MPI_BOR, comm);
  ++calls[REDUCE_SCATTER_BLOCK];
  for (long i = 0; i < n; ++i) {
    unsigned w = 0;
    for (int r = 0; r < size; ++r) w |= 1u << ((r + mine + i) % 31);
    expect((int)uout[i], (int)w, i);
  }
  expect((int)uout[n], (int)(7u << 29), n);

  /* A user-defined operation: the MPI library's. */
  MPI_Op op;
  MPI_Op_create(sum_mod, 1, &op);
  for (long j = 0; j < all; ++j) in[j] = value(tag, rank, j) % MODULUS;
  for (long i = 0; i <= n; ++i) out[i] = -7;
  where = "MPI_Reduce_scatter_block(MPI_INT, user-defined sum modulo 1000003)";
  MPI_Reduce_scatter_block(in, out, (int)n, MPI_INT, op, comm);
  ++calls[INTER];
  for (long i = 0; i < n; ++i) {
    long w = 0;
    for (int r = 0; r < size; ++r) w += value(tag, r, mine + i) % MODULUS;
    expect(out[i], (int)(w % MODULUS), i);
  }
  expect(out[n], -7, n);
  MPI_Op_free(&op);
  release(in);
  release(out);
  release(want);
  release(din);
  release(dout);
  release(uin);
  release(uout);
}

/* A barrier no rank may leave before the last one entered: each rank in turn arrives 20 ms late;
 * entry and exit times (one host: one monotonic clock) gathered at rank 0 must show every exit
 * after every entry. */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_barrier(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double* times = buffer(2 * (size_t)size * sizeof(double));
  for (int late = 0; late < size && late < 3; ++late) {
    if (rank == late) usleep(20000);
    double mine[2] = {now_s(), 0};
    where = "MPI_Barrier";
    MPI_Barrier(comm);
    ++calls[BARRIER];
    mine[1] = now_s();
    MPI_Gather(mine, 2, MPI_DOUBLE, times, 2, MPI_DOUBLE, 0, comm);
    ++calls[GATHER];
    if (rank != 0) continue;
    double last_in = 0, first_out = 1e300;
    for (int r = 0; r < size; ++r) {
      if (times[2 * r] > last_in) last_in = times[2 * r];
      if (times[2 * r + 1] < first_out) first_out = times[2 * r + 1];
    }
    expect(first_out >= last_in, 1, late);
  }
  release(times);
}

static void sweep(MPI_Comm comm, long large, int phase) {
  int size;
  tag_counter = phase * 100000; /* the same on every rank of comm, whatever came before */
  MPI_Comm_size(comm, &size);
  const long counts[] = {0, 1, 5, 1000};
  for (int c = 0; c < 4; ++c) {
    for (int kk = 0; kk < 3; ++kk) {
      const Kind* k = &kinds[kk];
      for (int root = 0; root < size; ++root) {
        test_bcast(comm, k, counts[c], root);
        test_scatter(comm, k, k, counts[c], root, root % 2);
        test_gather(comm, k, k, counts[c], root, root % 2);
      }
      test_alltoall(comm, k, counts[c], 0);
      test_alltoall(comm, k, counts[c], 1);
      test_allgather(comm, k, counts[c], 0);
      test_allgather(comm, k, counts[c], 1);
    }
    /* The root describes its blocks with the strided type, the others with plain ints. */
    for (int root = 0; root < size; ++root) {
      test_scatter(comm, &kinds[2], &kinds[0], counts[c], root, 0);
      test_gather(comm, &kinds[0], &kinds[2], counts[c], root, 0);
      test_reductions(comm, counts[c], root);
    }
    test_reduce_scatter_block(comm, counts[c]);
  }
  test_reductions(comm, large / 4, size / 2);
  test_reduce_scatter_block(comm, 100003); /* odd, and large: 100003 ints per block */
  test_barrier(comm);
  test_bcast(comm, &kinds[0], large, size - 1);
  test_bcast(comm, &kinds[2], large / 4, 0);
  test_scatter(comm, &kinds[0], &kinds[0], large / size, 0, 0);
  test_alltoall(comm, &kinds[0], large / (4 * size), 0);
  test_allgather(comm, &kinds[0], large / (4 * size), 0);
  test_gather(comm, &kinds[0], &kinds[0], large / (4 * size), 0, 0);
}

static long mapped_segments(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[4096];
  long n = 0;
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "/lanes-")) ++n;
  }
  fclose(f);
  return n;
}

int main(int argc, char** argv) {
  long large = 1L << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--large") == 0) large = atol(argv[i + 1]);
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  make_kinds();

  MPI_Comm half, reversed, dup;
  MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  sweep(MPI_COMM_WORLD, large, 1);
  sweep(half, large / 2, 2);
  sweep(reversed, large / 2, 3);
  use_alloc_mem = 1;
  sweep(dup, large / 2, 4);
  use_alloc_mem = 0;

  /* Hundreds of short-lived communicators: no mapping may stay behind. */
  const long before = mapped_segments();
  for (int i = 0; i < 200; ++i) {
    MPI_Comm c;
    int csize;
    MPI_Comm_split(MPI_COMM_WORLD, i % 3 == 0 ? 0 : rank % 2, (i % 2) ? rank : -rank, &c);
    MPI_Comm_size(c, &csize);
    tag_counter = 1000000 + i * 10;
    test_bcast(c, &kinds[0], 16, i % csize);
    if (i % 5 == 0) test_allgather(c, &kinds[0], 4, 0);
    MPI_Comm_free(&c);
  }
  const long after = mapped_segments();
  if (after != before) {
    fprintf(stderr, "rank %d: %ld shared-memory mappings before 200 communicators, %ld after\n",
            rank, before, after);
    ++errors;
  }

  /* An inter-communicator between the halves: MPI serves these calls. */
  if (size >= 2) {
    MPI_Comm inter;
    const int remote_leader = rank < size / 2 ? size / 2 : 0;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 99, &inter);
    int x = rank < size / 2 ? 0 : -1;
    const int in_low = rank < size / 2;
    int root = in_low ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (rank == 0) x = 4242;
    where = "MPI_Bcast (inter-communicator)";
    MPI_Bcast(&x, 1, MPI_INT, root, inter);
    ++calls[INTER];
    if (!in_low) expect(x, 4242, 0);
    MPI_Comm_free(&inter);
  }

  MPI_Comm_free(&half);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&dup);
  MPI_Type_free(&kinds[1].type);
  MPI_Type_free(&kinds[2].type);

  long long total[NCOUNTS];
  calls[REDUCE] += 4; /* the four tallies below */
  MPI_Reduce(calls, total, NCOUNTS, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  long all_errors = 0;
  MPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  long blocks[2] = {alloc_mem_blocks, heap_blocks}, all_blocks[2] = {0, 0};
  MPI_Reduce(blocks, all_blocks, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  unsigned long long sums[1] = {checksum}, xsum = 0;
  MPI_Reduce(sums, &xsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_BXOR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(
        "expect: bcast=%lld scatter=%lld alltoall=%lld allgather=%lld gather=%lld reduce=%lld "
        "allreduce=%lld reduce_scatter_block=%lld barrier=%lld inter=%lld\n",
        total[BCAST], total[SCATTER], total[ALLTOALL], total[ALLGATHER], total[GATHER],
        total[REDUCE], total[ALLREDUCE], total[REDUCE_SCATTER_BLOCK], total[BARRIER], total[INTER]);
    printf("checksum: %016llx\n", xsum);
    printf("alloc_mem: %ld of %ld blocks in lanes' shared heap\n", all_blocks[1], all_blocks[0]);
    printf("interpose_check: %d processes: %s\n", size,
           all_errors == 0 ? "all values correct" : "WRONG VALUES");
  }
  MPI_Finalize();
  return errors == 0 ? 0 : 1;
}
