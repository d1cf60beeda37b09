/* An ordinary MPI program (it knows nothing of lanes) that checks the vector collectives
 * MPI_Scatterv, MPI_Gatherv, MPI_Allgatherv and MPI_Alltoallv and the nonblocking collectives
 * MPI_Ibcast, MPI_Iscatter, MPI_Igather, MPI_Ialltoall, MPI_Iallgather, MPI_Iscatterv,
 * MPI_Igatherv, MPI_Iallgatherv and MPI_Ialltoallv on several communicators (world, split halves,
 * reversed order), with every root, counts that differ per rank (zero for some ranks, and zero for
 * every rank), displacements with gaps and in decreasing order, MPI_IN_PLACE wherever the standard
 * allows it, a strided datatype on one side of a call and plain ints on the other, and from a few
 * ints to about 100000. Every byte of a receive buffer outside the blocks must stay as it was.
 *
 * The nonblocking calls run many at a time, on one communicator and on two at once, mixed with
 * point-to-point requests around a ring and MPI_REQUEST_NULL, and with blocking calls made while
 * they are outstanding; they complete through MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testall,
 * MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome and MPI_Request_get_status + MPI_Wait.
 * Each completion must be reported exactly once, every request must be MPI_REQUEST_NULL
 * afterwards, and the statuses of receives (source, tag, count) and of MPI_REQUEST_NULL (empty)
 * must be right. Every expected value is computed here, never asked of MPI.
 *
 * Prints on rank 0: "expect: scatterv=N gatherv=N allgatherv=N alltoallv=N ibcast=N iscatter=N
 * igather=N ialltoall=N iallgather=N iscatterv=N igatherv=N iallgatherv=N ialltoallv=N reduce=N
 * inter=N" (calls summed over ranks; reduce: the final tallies; inter: calls that must go to the
 * MPI library, here an MPI_Ibcast on an inter-communicator), "checksum: X" over every result and
 * every checked request state, so that runs with and without liblanes_mpi can be compared, and
 * "interpose_v_check: N processes: all values correct" (or "WRONG VALUES").
 * Exits 1 on any wrong value or wrong request state. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  SCATTERV,
  GATHERV,
  ALLGATHERV,
  ALLTOALLV,
  IBCAST,
  ISCATTER,
  IGATHER,
  IALLTOALL,
  IALLGATHER,
  ISCATTERV,
  IGATHERV,
  IALLGATHERV,
  IALLTOALLV,
  REDUCE,
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

static int comm_rank(MPI_Comm comm) {
  int r;
  MPI_Comm_rank(comm, &r);
  return r;
}

static int comm_size(MPI_Comm comm) {
  int s;
  MPI_Comm_size(comm, &s);
  return s;
}

/* Datatypes: plain MPI_INT, and a strided "int" whose extent is two ints (element i at
 * buf[2 * i]); both carry one int per element, so either side of a call may use either. */
typedef struct {
  const char* name;
  MPI_Datatype type;
  int stride; /* ints of buffer between consecutive data ints */
} Kind;

static Kind int_kind, strided;

static void make_kinds(void) {
  int_kind = (Kind){"int", MPI_INT, 1};
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &strided.type);
  MPI_Type_commit(&strided.type);
  strided.name = "strided";
  strided.stride = 2;
}

/* A buffer of n data ints laid out for kind k (holes, and one int past the end, hold a marker). */
static int* alloc_ints(long n, const Kind* k) {
  long len = n * k->stride + 1;
  int* b = malloc((size_t)len * sizeof(int));
  for (long i = 0; i < len; ++i) b[i] = -7;
  return b;
}
#define AT(buf, k, i) (buf)[(long)(i) * (k)->stride]

/* Counts per rank (or per pair of ranks, `key`): ZERO for every rank; SAME: `base` for every
 * rank; MIXED: zero for about a third of the ranks, and different counts for the others; VARIED:
 * different counts, none zero. */
enum { ZERO, SAME, MIXED, VARIED };
static const char* const pattern_name[] = {"zero", "same", "mixed", "varied"};

static int count_for(int pattern, int tag, long key, int base) {
  if (pattern == ZERO) return 0;
  if (pattern == SAME) return base;
  if (pattern == MIXED && (key + tag) % 3 == 1) return 0;
  return base + (int)((key * 5 + tag) % 7);
}

/* Displacements: PACKED, in rank order without gaps; GAPS, in rank order with 1 to 3 unused
 * elements before each block and one after the last; REVERSED, with gaps and the last rank's block
 * first, so that displacements decrease with the rank. Returns the elements the layout spans. */
enum { PACKED, GAPS, REVERSED };
static const char* const layout_name[] = {"packed", "gaps", "reversed"};

static long layout(int lay, const int* counts, int n, int* displs) {
  long at = 0;
  for (int k = 0; k < n; ++k) {
    const int j = lay == REVERSED ? n - 1 - k : k;
    if (lay != PACKED) at += j % 3 + 1;
    displs[j] = (int)at;
    at += counts[j];
  }
  return at + (lay != PACKED);
}

/* One call to check: `got` (len ints, holes included) must end up equal to `want`. The buffers
 * and the count and displacement arrays live until then: MPI may read and write them until a
 * nonblocking call completes. */
enum { COLL, RECV, SEND, NONE };
typedef struct {
  char where[128];
  int role;
  int* send;
  int* recv;
  int* want;
  const int* got;
  long len;
  int* arrays;
  int source, tag, count; /* what a receive's status must say */
} Op;

enum { MAXREQ = 24 };
typedef struct {
  int n;
  MPI_Request req[MAXREQ];
  Op op[MAXREQ];
} Batch;

/* The next entry of batch b; without a batch (a blocking call) one that is checked at once. */
static Op blocking_op;
static Op* new_op(Batch* b, MPI_Request** req) {
  Op* op = &blocking_op;
  *req = NULL;
  if (b) {
    if (b->n == MAXREQ) {
      fprintf(stderr, "interpose_v_check: more than %d requests in a batch\n", MAXREQ);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *req = &b->req[b->n];
    op = &b->op[b->n++];
  }
  memset(op, 0, sizeof *op);
  return op;
}

/* got must hold n data ints of kind k, and markers elsewhere: returns want, all markers, for the
 * caller to fill in. */
static int* expect_into(Op* op, const int* got, long n, const Kind* k) {
  op->got = got;
  op->len = n * k->stride + 1;
  op->want = alloc_ints(n, k);
  return op->want;
}

/* buf (n ints of kind k) must stay as it is now: a send buffer, or an in-place root's buffer. */
static void expect_unchanged(Op* op, const int* buf, long n, const Kind* k) {
  op->got = buf;
  op->len = n * k->stride + 1;
  op->want = malloc((size_t)op->len * sizeof(int));
  memcpy(op->want, buf, (size_t)op->len * sizeof(int));
}

static int tag_counter;

static void describe(Op* op, const char* call, int tag, const Kind* ks, const Kind* kr,
                     const char* counts, int root, int in_place) {
  char r[24] = "";
  if (root >= 0) snprintf(r, sizeof r, "root %d, ", root);
  snprintf(op->where, sizeof op->where, "%s (call %d, %s%s, %s to %s%s)", call, tag, r, counts,
           ks->name, kr->name, in_place ? ", in place" : "");
}

static void describe_v(Op* op, const char* call, int tag, const Kind* ks, const Kind* kr,
                       int pattern, int lay, int root, int in_place) {
  char c[48];
  snprintf(c, sizeof c, "%s counts, %s", pattern_name[pattern], layout_name[lay]);
  describe(op, call, tag, ks, kr, c, root, in_place);
}

static void describe_n(Op* op, const char* call, int tag, const Kind* ks, const Kind* kr, long n,
                       int root, int in_place) {
  char c[48];
  snprintf(c, sizeof c, "%ld ints per block", n);
  describe(op, call, tag, ks, kr, c, root, in_place);
}

static void finish(Op* op, const char* how) {
  char w[200];
  snprintf(w, sizeof w, "%s%s%s", op->where, how ? ", completed by " : "", how ? how : "");
  where = w;
  for (long i = 0; i < op->len; ++i) expect(op->got[i], op->want[i], i);
  where = "";
  free(op->send);
  free(op->recv);
  free(op->want);
  free(op->arrays);
  memset(op, 0, sizeof *op);
}

/* MPI_Scatterv (b NULL) or MPI_Iscatterv: block r, counts[r] elements of kind ks at displs[r] in
 * the root's buffer, goes to rank r, which receives it as kind kr. In place, the root's block
 * stays where it is, and nothing in the root's buffer may change. */
static void start_scatterv(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, int pattern,
                           int lay, int base, int root, int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  int* counts = op->arrays = malloc(2 * (size_t)size * sizeof(int));
  int* displs = counts + size;
  for (int r = 0; r < size; ++r) counts[r] = count_for(pattern, tag, r, base);
  const long span = layout(lay, counts, size, displs);
  const int root_in_place = rank == root && in_place;
  if (rank == root) {
    op->send = alloc_ints(span, ks);
    for (int r = 0; r < size; ++r) {
      for (long j = 0; j < counts[r]; ++j) AT(op->send, ks, displs[r] + j) = value(tag, r, j);
    }
  }
  op->recv = alloc_ints(counts[rank], kr);
  if (root_in_place) {
    expect_unchanged(op, op->send, span, ks);
  } else {
    int* want = expect_into(op, op->recv, counts[rank], kr);
    for (long j = 0; j < counts[rank]; ++j) AT(want, kr, j) = value(tag, rank, j);
  }
  describe_v(op, req ? "MPI_Iscatterv" : "MPI_Scatterv", tag, ks, kr, pattern, lay, root,
             root_in_place);
  /* The counts and displacements matter at the root only: every other call passes NULL
   * elsewhere, as programs may. */
  const int pass = rank == root || tag % 2 == 0;
  void* rbuf = root_in_place ? MPI_IN_PLACE : op->recv;
  if (req) {
    MPI_Iscatterv(op->send, pass ? counts : NULL, pass ? displs : NULL, ks->type, rbuf,
                  counts[rank], kr->type, root, comm, req);
  } else {
    MPI_Scatterv(op->send, pass ? counts : NULL, pass ? displs : NULL, ks->type, rbuf, counts[rank],
                 kr->type, root, comm);
  }
  ++calls[req ? ISCATTERV : SCATTERV];
  if (!b) finish(op, NULL);
}

/* MPI_Gatherv or MPI_Igatherv: rank r's counts[r] elements of kind ks land at displs[r] (kind kr)
 * in the root's buffer; in place, the root's block is already there. Ranks that receive nothing
 * check that their send buffer stays as it was. */
static void start_gatherv(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, int pattern,
                          int lay, int base, int root, int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  int* counts = op->arrays = malloc(2 * (size_t)size * sizeof(int));
  int* displs = counts + size;
  for (int r = 0; r < size; ++r) counts[r] = count_for(pattern, tag, r, base);
  const long span = layout(lay, counts, size, displs);
  const int root_in_place = rank == root && in_place;
  op->send = alloc_ints(counts[rank], ks);
  for (long j = 0; j < counts[rank]; ++j) AT(op->send, ks, j) = value(tag, rank, j);
  if (rank == root) {
    op->recv = alloc_ints(span, kr);
    int* want = expect_into(op, op->recv, span, kr);
    for (int r = 0; r < size; ++r) {
      for (long j = 0; j < counts[r]; ++j) AT(want, kr, displs[r] + j) = value(tag, r, j);
    }
    for (long j = 0; root_in_place && j < counts[root]; ++j)
      AT(op->recv, kr, displs[root] + j) = value(tag, root, j);
  } else {
    expect_unchanged(op, op->send, counts[rank], ks);
  }
  describe_v(op, req ? "MPI_Igatherv" : "MPI_Gatherv", tag, ks, kr, pattern, lay, root,
             root_in_place);
  const int pass = rank == root || tag % 2 == 0; /* the receive arrays: significant at the root */
  const void* sbuf = root_in_place ? MPI_IN_PLACE : op->send;
  if (req) {
    MPI_Igatherv(sbuf, counts[rank], ks->type, op->recv, pass ? counts : NULL, pass ? displs : NULL,
                 kr->type, root, comm, req);
  } else {
    MPI_Gatherv(sbuf, counts[rank], ks->type, op->recv, pass ? counts : NULL, pass ? displs : NULL,
                kr->type, root, comm);
  }
  ++calls[req ? IGATHERV : GATHERV];
  if (!b) finish(op, NULL);
}

/* MPI_Allgatherv or MPI_Iallgatherv: every rank's block at displs[r] of every receive buffer; in
 * place, each rank's own block is already in its receive buffer. */
static void start_allgatherv(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, int pattern,
                             int lay, int base, int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  int* counts = op->arrays = malloc(2 * (size_t)size * sizeof(int));
  int* displs = counts + size;
  for (int r = 0; r < size; ++r) counts[r] = count_for(pattern, tag, r, base);
  const long span = layout(lay, counts, size, displs);
  op->send = alloc_ints(counts[rank], ks);
  op->recv = alloc_ints(span, kr);
  for (long j = 0; j < counts[rank]; ++j) {
    AT(op->send, ks, j) = value(tag, rank, j);
    if (in_place) AT(op->recv, kr, displs[rank] + j) = value(tag, rank, j);
  }
  int* want = expect_into(op, op->recv, span, kr);
  for (int r = 0; r < size; ++r) {
    for (long j = 0; j < counts[r]; ++j) AT(want, kr, displs[r] + j) = value(tag, r, j);
  }
  describe_v(op, req ? "MPI_Iallgatherv" : "MPI_Allgatherv", tag, ks, kr, pattern, lay, -1,
             in_place);
  const void* sbuf = in_place ? MPI_IN_PLACE : op->send;
  if (req) {
    MPI_Iallgatherv(sbuf, counts[rank], ks->type, op->recv, counts, displs, kr->type, comm, req);
  } else {
    MPI_Allgatherv(sbuf, counts[rank], ks->type, op->recv, counts, displs, kr->type, comm);
  }
  ++calls[req ? IALLGATHERV : ALLGATHERV];
  if (!b) finish(op, NULL);
}

/* MPI_Alltoallv or MPI_Ialltoallv: the count from rank s to rank d derives from the pair; the send
 * layout is `lay` and the receive layout the next one. In place, what a rank sends to d comes
 * from its receive buffer, block d, so the counts are symmetric (s to d as d to s). */
static void start_alltoallv(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, int pattern,
                            int lay, int base, int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  int* scounts = op->arrays = malloc(4 * (size_t)size * sizeof(int));
  int *sdispls = scounts + size, *rcounts = scounts + 2 * size, *rdispls = scounts + 3 * size;
  for (int r = 0; r < size; ++r) {
    const int lo = rank < r ? rank : r, hi = rank < r ? r : rank;
    scounts[r] = count_for(pattern, tag, in_place ? lo * 31L + hi : rank * 31L + r, base);
    rcounts[r] = count_for(pattern, tag, in_place ? lo * 31L + hi : r * 31L + rank, base);
  }
  const long sspan = layout(lay, scounts, size, sdispls);
  const long rspan = layout((lay + 1) % 3, rcounts, size, rdispls);
  op->send = alloc_ints(sspan, ks);
  op->recv = alloc_ints(rspan, kr);
  for (int d = 0; d < size; ++d) {
    for (long j = 0; j < scounts[d]; ++j) {
      if (in_place) {
        AT(op->recv, kr, rdispls[d] + j) = value(tag, rank * 1024 + d, j);
      } else {
        AT(op->send, ks, sdispls[d] + j) = value(tag, rank * 1024 + d, j);
      }
    }
  }
  int* want = expect_into(op, op->recv, rspan, kr);
  for (int s = 0; s < size; ++s) {
    for (long j = 0; j < rcounts[s]; ++j)
      AT(want, kr, rdispls[s] + j) = value(tag, s * 1024 + rank, j);
  }
  describe_v(op, req ? "MPI_Ialltoallv" : "MPI_Alltoallv", tag, ks, kr, pattern, lay, -1, in_place);
  const void* sbuf = in_place ? MPI_IN_PLACE : op->send;
  if (req) {
    MPI_Ialltoallv(sbuf, scounts, sdispls, ks->type, op->recv, rcounts, rdispls, kr->type, comm,
                   req);
  } else {
    MPI_Alltoallv(sbuf, scounts, sdispls, ks->type, op->recv, rcounts, rdispls, kr->type, comm);
  }
  ++calls[req ? IALLTOALLV : ALLTOALLV];
  if (!b) finish(op, NULL);
}

/* MPI_Ibcast of n ints: kind ks at the root, kr elsewhere. */
static void start_ibcast(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, long n,
                         int root) {
  const int rank = comm_rank(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  const Kind* k = rank == root ? ks : kr;
  op->recv = alloc_ints(n, k);
  int* want = expect_into(op, op->recv, n, k);
  for (long i = 0; i < n; ++i) {
    if (rank == root) AT(op->recv, k, i) = value(tag, root, i);
    AT(want, k, i) = value(tag, root, i);
  }
  describe_n(op, "MPI_Ibcast", tag, ks, kr, n, root, 0);
  MPI_Ibcast(op->recv, (int)n, k->type, root, comm, req);
  ++calls[IBCAST];
}

/* MPI_Iscatter of n ints per rank: block r of the root's buffer (kind ks) to rank r (kind kr). */
static void start_iscatter(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, long n,
                           int root, int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  const int root_in_place = rank == root && in_place;
  if (rank == root) {
    op->send = alloc_ints(n * size, ks);
    for (long i = 0; i < n * size; ++i) AT(op->send, ks, i) = value(tag, (int)(i / n), i % n);
  }
  op->recv = alloc_ints(n, kr);
  if (root_in_place) {
    expect_unchanged(op, op->send, n * size, ks);
  } else {
    int* want = expect_into(op, op->recv, n, kr);
    for (long i = 0; i < n; ++i) AT(want, kr, i) = value(tag, rank, i);
  }
  describe_n(op, "MPI_Iscatter", tag, ks, kr, n, root, root_in_place);
  MPI_Iscatter(op->send, (int)n, ks->type, root_in_place ? MPI_IN_PLACE : op->recv, (int)n,
               kr->type, root, comm, req);
  ++calls[ISCATTER];
}

/* MPI_Igather of n ints per rank into block r of the root's buffer. */
static void start_igather(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, long n, int root,
                          int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  const int root_in_place = rank == root && in_place;
  op->send = alloc_ints(n, ks);
  for (long i = 0; i < n; ++i) AT(op->send, ks, i) = value(tag, rank, i);
  if (rank == root) {
    op->recv = alloc_ints(n * size, kr);
    int* want = expect_into(op, op->recv, n * size, kr);
    for (long i = 0; i < n * size; ++i) AT(want, kr, i) = value(tag, (int)(i / n), i % n);
    for (long i = 0; root_in_place && i < n; ++i)
      AT(op->recv, kr, root * n + i) = value(tag, root, i);
  } else {
    expect_unchanged(op, op->send, n, ks);
  }
  describe_n(op, "MPI_Igather", tag, ks, kr, n, root, root_in_place);
  MPI_Igather(root_in_place ? MPI_IN_PLACE : op->send, (int)n, ks->type, op->recv, (int)n, kr->type,
              root, comm, req);
  ++calls[IGATHER];
}

/* MPI_Ialltoall of n ints per block: block d of rank s holds value(tag, s, d * n + i). */
static void start_ialltoall(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, long n,
                            int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  op->send = alloc_ints(n * size, ks);
  op->recv = alloc_ints(n * size, kr);
  for (long i = 0; i < n * size; ++i) {
    if (in_place) {
      AT(op->recv, kr, i) = value(tag, rank, i);
    } else {
      AT(op->send, ks, i) = value(tag, rank, i);
    }
  }
  int* want = expect_into(op, op->recv, n * size, kr);
  for (long s = 0; s < size; ++s) {
    for (long i = 0; i < n; ++i) AT(want, kr, s * n + i) = value(tag, (int)s, rank * n + i);
  }
  describe_n(op, "MPI_Ialltoall", tag, ks, kr, n, -1, in_place);
  MPI_Ialltoall(in_place ? MPI_IN_PLACE : op->send, (int)n, ks->type, op->recv, (int)n, kr->type,
                comm, req);
  ++calls[IALLTOALL];
}

/* MPI_Iallgather of n ints per rank. */
static void start_iallgather(Batch* b, MPI_Comm comm, const Kind* ks, const Kind* kr, long n,
                             int in_place) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  op->send = alloc_ints(n, ks);
  op->recv = alloc_ints(n * size, kr);
  for (long i = 0; i < n; ++i) {
    AT(op->send, ks, i) = value(tag, rank, i);
    if (in_place) AT(op->recv, kr, rank * n + i) = value(tag, rank, i);
  }
  int* want = expect_into(op, op->recv, n * size, kr);
  for (long i = 0; i < n * size; ++i) AT(want, kr, i) = value(tag, (int)(i / n), i % n);
  describe_n(op, "MPI_Iallgather", tag, ks, kr, n, -1, in_place);
  MPI_Iallgather(in_place ? MPI_IN_PLACE : op->send, (int)n, ks->type, op->recv, (int)n, kr->type,
                 comm, req);
  ++calls[IALLGATHER];
}

/* Point-to-point around a ring on comm, among the collectives' requests: a receive from the left
 * neighbour (posted first) and a send to the right one, with counts that differ per sender, so
 * that the receive's status has a count to check. Returns the tag for add_ring_send. */
enum { RING_MAX = 100 };
static int ring_count(int tag, int sender) {
  return 1 + (tag + 13 * sender) % (RING_MAX - 3);
}

static int add_ring_recv(Batch* b, MPI_Comm comm) {
  const int rank = comm_rank(comm), size = comm_size(comm), tag = ++tag_counter;
  const int left = (rank + size - 1) % size;
  MPI_Request* req;
  Op* op = new_op(b, &req);
  op->role = RECV;
  op->source = left;
  op->tag = tag % 30000; /* within every MPI's MPI_TAG_UB */
  op->count = ring_count(tag, left);
  op->recv = alloc_ints(RING_MAX, &int_kind);
  int* want = expect_into(op, op->recv, RING_MAX, &int_kind);
  for (long i = 0; i < op->count; ++i) want[i] = value(tag, left, i);
  snprintf(op->where, sizeof op->where, "MPI_Irecv (tag %d, from %d)", op->tag, left);
  MPI_Irecv(op->recv, RING_MAX, MPI_INT, left, op->tag, comm, req);
  return tag;
}

static void add_ring_send(Batch* b, MPI_Comm comm, int tag) {
  const int rank = comm_rank(comm), size = comm_size(comm);
  MPI_Request* req;
  Op* op = new_op(b, &req);
  op->role = SEND;
  op->send = alloc_ints(RING_MAX, &int_kind);
  const int n = ring_count(tag, rank);
  for (long i = 0; i < n; ++i) op->send[i] = value(tag, rank, i);
  expect_unchanged(op, op->send, RING_MAX, &int_kind);
  snprintf(op->where, sizeof op->where, "MPI_Isend (tag %d, to %d)", tag % 30000,
           (rank + 1) % size);
  MPI_Isend(op->send, n, MPI_INT, (rank + 1) % size, tag % 30000, comm, req);
}

static void add_null(Batch* b) {
  MPI_Request* req;
  Op* op = new_op(b, &req);
  op->role = NONE;
  snprintf(op->where, sizeof op->where, "MPI_REQUEST_NULL");
  *req = MPI_REQUEST_NULL;
}

/* Completes every request of batch b with one member of the request family, checks that each was
 * reported complete exactly once (MPI_REQUEST_NULL: not at all by the -any and -some calls, which
 * skip it; with an empty status by the others), that every request is MPI_REQUEST_NULL afterwards
 * and the receives' statuses, then every value. */
enum { WAIT, TEST, WAITALL, TESTALL, WAITANY, TESTANY, WAITSOME, TESTSOME, GET_STATUS, NMETHODS };
static const char* const method_name[] = {"MPI_Wait",     "MPI_Test",     "MPI_Waitall",
                                          "MPI_Testall",  "MPI_Waitany",  "MPI_Testany",
                                          "MPI_Waitsome", "MPI_Testsome", "MPI_Request_get_status"};

static void complete(Batch* b, int method) {
  const int n = b->n;
  MPI_Status st[MAXREQ], some[MAXREQ];
  int reported[MAXREQ] = {0}, kept[MAXREQ] = {0}, idx[MAXREQ], left = n, flag;
  char w[200];
  snprintf(w, sizeof w, "%s: an index out of range", method_name[method]);
  where = w;
  switch (method) {
    case WAIT: /* the last one started first */
      for (int i = n - 1; i >= 0; --i) {
        MPI_Wait(&b->req[i], &st[i]);
        ++reported[i];
      }
      break;
    case TEST: /* round robin over those not yet complete */
    case GET_STATUS:
      while (left > 0) {
        for (int i = 0; i < n; ++i) {
          if (reported[i]) continue;
          if (method == TEST) {
            MPI_Test(&b->req[i], &flag, &st[i]);
          } else {
            MPI_Request_get_status(b->req[i], &flag, &st[i]);
          }
          if (!flag) continue;
          ++reported[i];
          --left;
          if (method == TEST) continue;
          /* MPI_Request_get_status leaves the request to be freed by MPI_Wait. (Checked below,
           * in index order: the checksum must not depend on the order of completion.) */
          kept[i] = b->req[i] != MPI_REQUEST_NULL;
          MPI_Wait(&b->req[i], MPI_STATUS_IGNORE);
        }
      }
      break;
    case WAITALL:
      MPI_Waitall(n, b->req, st);
      for (int i = 0; i < n; ++i) ++reported[i];
      break;
    case TESTALL:
      do MPI_Testall(n, b->req, &flag, st);
      while (!flag);
      for (int i = 0; i < n; ++i) ++reported[i];
      break;
    case WAITANY:
    case TESTANY:
      /* Until MPI says no active request is left, and at most n + 1 reports, so that a wrong
       * answer ends in an error rather than a loop. */
      for (int reports = 0; reports <= n;) {
        int i;
        MPI_Status s;
        flag = 1;
        if (method == WAITANY) {
          MPI_Waitany(n, b->req, &i, &s);
        } else {
          MPI_Testany(n, b->req, &i, &flag, &s);
        }
        if (!flag) continue;
        if (i == MPI_UNDEFINED) break;
        if (i < 0 || i >= n) {
          expect(i, 0, reports);
          break;
        }
        st[i] = s;
        ++reported[i];
        ++reports;
      }
      break;
    default: /* WAITSOME, TESTSOME */
      for (int reports = 0; reports <= n;) {
        int out;
        if (method == WAITSOME) {
          MPI_Waitsome(n, b->req, &out, idx, some);
        } else {
          MPI_Testsome(n, b->req, &out, idx, some);
        }
        if (out == MPI_UNDEFINED) break;
        for (int k = 0; k < out; ++k) {
          const int i = idx[k];
          if (i < 0 || i >= n) {
            expect(i, 0, reports);
            reports = n + 1;
            break;
          }
          st[i] = some[k];
          ++reported[i];
          ++reports;
        }
      }
      break;
  }
  const int reports_null =
      method != WAITANY && method != TESTANY && method != WAITSOME && method != TESTSOME;
  for (int i = 0; i < n; ++i) {
    const Op* op = &b->op[i];
    snprintf(w, sizeof w, "%s, completed by %s: request state", op->where, method_name[method]);
    where = w;
    expect(b->req[i] == MPI_REQUEST_NULL, 1, i);
    if (method == GET_STATUS) expect(kept[i], op->role != NONE, i);
    const int once = op->role != NONE || reports_null;
    expect(reported[i], once, i);
    if (op->role == RECV || (op->role == NONE && once)) {
      /* A receive's status, or the empty status of MPI_REQUEST_NULL. */
      int count = -1;
      MPI_Get_count(&st[i], MPI_INT, &count);
      snprintf(w, sizeof w, "%s, completed by %s: status source, tag, count", op->where,
               method_name[method]);
      expect(st[i].MPI_SOURCE, op->role == RECV ? op->source : MPI_ANY_SOURCE, i);
      expect(st[i].MPI_TAG, op->role == RECV ? op->tag : MPI_ANY_TAG, i);
      expect(count, op->role == RECV ? op->count : 0, i);
    }
  }
  where = "";
  for (int i = 0; i < n; ++i) finish(&b->op[i], method_name[method]);
  b->n = 0;
}

/* The blocking v-collectives on comm: every root, in place every other root, the strided type at
 * the root's side and at the other side, every count zero, and large blocks. */
static void blocking_sweep(MPI_Comm comm) {
  const int size = comm_size(comm);
  const Kind *i = &int_kind, *s = &strided;
  for (int root = 0; root < size; ++root) {
    const int odd = root % 2;
    start_scatterv(NULL, comm, i, i, MIXED, GAPS, 5, root, odd);
    start_scatterv(NULL, comm, s, i, MIXED, REVERSED, 7, root, 0);
    start_scatterv(NULL, comm, i, s, ZERO, PACKED, 0, root, !odd);
    start_gatherv(NULL, comm, i, i, MIXED, REVERSED, 6, root, odd);
    start_gatherv(NULL, comm, i, s, MIXED, GAPS, 4, root, 0);
    start_gatherv(NULL, comm, s, i, ZERO, GAPS, 0, root, !odd);
  }
  start_allgatherv(NULL, comm, i, i, MIXED, GAPS, 5, 0);
  start_allgatherv(NULL, comm, i, i, MIXED, REVERSED, 9, 1);
  start_allgatherv(NULL, comm, i, s, SAME, GAPS, 3, 0);
  start_allgatherv(NULL, comm, s, i, MIXED, PACKED, 4, 0);
  start_allgatherv(NULL, comm, i, i, ZERO, REVERSED, 0, 1);
  start_alltoallv(NULL, comm, i, i, MIXED, GAPS, 5, 0);
  start_alltoallv(NULL, comm, i, i, MIXED, REVERSED, 6, 1);
  start_alltoallv(NULL, comm, s, i, MIXED, REVERSED, 4, 0);
  start_alltoallv(NULL, comm, i, s, SAME, GAPS, 3, 0);
  start_alltoallv(NULL, comm, i, s, MIXED, PACKED, 5, 1);
  start_alltoallv(NULL, comm, i, i, ZERO, GAPS, 0, 0);
  /* About 100000 ints in all per call. */
  const int big = 100000 / size, big2 = 100000 / (size * size);
  start_scatterv(NULL, comm, s, i, MIXED, REVERSED, big, 0, 0);
  start_scatterv(NULL, comm, i, i, MIXED, GAPS, big, size - 1, 1);
  start_gatherv(NULL, comm, i, s, MIXED, GAPS, big, size - 1, 0);
  start_gatherv(NULL, comm, i, i, MIXED, REVERSED, big, 0, 1);
  start_allgatherv(NULL, comm, i, i, MIXED, REVERSED, big, 1);
  start_alltoallv(NULL, comm, i, i, MIXED, GAPS, big2, 0);
  start_alltoallv(NULL, comm, s, i, MIXED, REVERSED, big2, 0);
  start_alltoallv(NULL, comm, i, s, MIXED, REVERSED, big2, 1);
}

/* One batch of all nine nonblocking collectives on comm, outstanding at once and started in the
 * same order on every rank, with a ring exchange and MPI_REQUEST_NULL among them, completed by
 * method m. m also picks where the strided type is, in place or not, the count pattern and layout
 * (every count zero at m 4), and the size (about 100000 ints at m 7); the j-th batch on a
 * communicator has root j, so that a few batches go through every root of a small one. */
static void nonblocking_batch(MPI_Comm comm, int m, int j) {
  const int size = comm_size(comm), root = j % size, in_place = m % 2;
  const Kind* ks = m % 3 == 1 ? &strided : &int_kind;
  const Kind* kr = m % 3 == 2 ? &strided : &int_kind;
  const int pattern = m == 4 ? ZERO : m % 3 == 0 ? SAME : MIXED, lay = m / 3 % 3;
  const int large = m == 7;
  const int base = large ? 100000 / size : 2 + m;
  const long n = m == 4 ? 0 : large ? 100000 / size : 1 + 2 * m;
  Batch b = {.n = 0};
  start_ibcast(&b, comm, ks, kr, large ? 100000 : 3 * m, root);
  start_scatterv(&b, comm, ks, kr, pattern, lay, base, root, in_place);
  const int ring = add_ring_recv(&b, comm);
  start_gatherv(&b, comm, kr, ks, pattern, (lay + 1) % 3, base, (root + 1) % size, in_place);
  add_null(&b);
  start_allgatherv(&b, comm, ks, kr, pattern, (lay + 2) % 3, base, !in_place);
  start_iscatter(&b, comm, ks, kr, n, root, in_place);
  /* Large and in place, no pair count is zero: Open MPI 4.1's own MPI_Ialltoallv (libnbc) then
   * receives into a block while that block is still being sent, which corrupts blocks past the
   * eager size, and the run without lanes must pass too. Zero counts in place: the small calls. */
  start_alltoallv(&b, comm, ks, kr, large && in_place ? VARIED : pattern, lay,
                  large ? 100000 / (size * size) : base, in_place);
  start_igather(&b, comm, kr, ks, n, (root + 1) % size, !in_place);
  start_ialltoall(&b, comm, ks, kr, large ? n / size : n, !in_place);
  start_iallgather(&b, comm, kr, ks, n, in_place);
  add_ring_send(&b, comm, ring);
  complete(&b, m);
}

/* Nonblocking calls on two communicators at once, interleaved, each started in the same order on
 * every rank of its communicator, with a ring exchange on the first, completed by `method`. */
static void two_comm_batch(MPI_Comm a, MPI_Comm c, int method) {
  const int sa = comm_size(a), sc = comm_size(c);
  const Kind *i = &int_kind, *s = &strided;
  Batch b = {.n = 0};
  start_alltoallv(&b, a, i, s, MIXED, GAPS, 40, 0);
  start_alltoallv(&b, c, s, i, MIXED, REVERSED, 30, 1);
  const int ring = add_ring_recv(&b, a);
  start_gatherv(&b, c, s, i, MIXED, REVERSED, 50, sc - 1, 1);
  start_allgatherv(&b, a, i, i, MIXED, GAPS, 60, 1);
  start_ibcast(&b, c, i, s, 5000, 0);
  add_null(&b);
  start_scatterv(&b, a, i, s, MIXED, REVERSED, 70, sa - 1, 0);
  start_iallgather(&b, c, i, i, 11, 1);
  start_ialltoall(&b, a, s, i, 13, 0);
  start_igather(&b, c, i, i, 17, sc / 2, 0);
  start_iscatter(&b, a, i, i, 19, sa / 2, 1);
  add_ring_send(&b, a, ring);
  complete(&b, method);
}

/* Blocking calls on a communicator while nonblocking ones are outstanding on it: the standard
 * allows it, as long as every rank makes all of them in the same order. */
static void mixed_batch(MPI_Comm comm, int method) {
  const int size = comm_size(comm);
  const Kind *i = &int_kind, *s = &strided;
  Batch b = {.n = 0};
  start_ibcast(&b, comm, s, i, 300, size - 1);
  start_alltoallv(&b, comm, i, i, MIXED, REVERSED, 20, 0);
  start_gatherv(NULL, comm, i, s, MIXED, GAPS, 25, size - 1, 0);
  start_allgatherv(NULL, comm, s, i, MIXED, REVERSED, 15, 0);
  start_gatherv(&b, comm, i, i, MIXED, PACKED, 35, 0, 1);
  start_alltoallv(NULL, comm, i, i, MIXED, GAPS, 10, 1);
  start_iallgather(&b, comm, s, i, 9, 0);
  complete(&b, method);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = comm_rank(MPI_COMM_WORLD), size = comm_size(MPI_COMM_WORLD);
  make_kinds();

  MPI_Comm half, reversed;
  MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  const MPI_Comm comms[3] = {MPI_COMM_WORLD, half, reversed};
  for (int c = 0; c < 3; ++c) {
    tag_counter = (c + 1) * 100000; /* the same on every rank of comms[c], whatever came before */
    blocking_sweep(comms[c]);
    /* Every completion method on world; the even ones on the halves, the odd ones reversed. */
    for (int m = c == 2, j = 0; m < NMETHODS; m += c == 0 ? 1 : 2)
      nonblocking_batch(comms[c], m, j++);
    mixed_batch(comms[c], (c * 4 + 2) % NMETHODS);
  }
  /* Two communicators at once; half differs between ranks, so its calls are interleaved with
   * world's or reversed's at the same points on every rank. */
  tag_counter = 400000;
  two_comm_batch(MPI_COMM_WORLD, half, WAITALL);
  two_comm_batch(half, reversed, TESTSOME);
  two_comm_batch(reversed, MPI_COMM_WORLD, WAITANY);

  /* An inter-communicator between the halves: MPI serves the call. */
  if (size >= 2) {
    MPI_Comm inter;
    const int in_low = rank < size / 2;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, in_low ? size / 2 : 0, 99, &inter);
    enum { N = 1000 };
    int x[N];
    for (int i = 0; i < N; ++i) x[i] = rank == 0 ? value(500000, 0, i) : -7;
    const int root = in_low ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Request req;
    MPI_Ibcast(x, N, MPI_INT, root, inter, &req);
    ++calls[INTER];
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    where = "MPI_Ibcast (inter-communicator)";
    expect(req == MPI_REQUEST_NULL, 1, 0);
    for (int i = 0; i < N; ++i) expect(x[i], in_low && rank != 0 ? -7 : value(500000, 0, i), i);
    where = "";
    MPI_Comm_free(&inter);
  }

  MPI_Comm_free(&half);
  MPI_Comm_free(&reversed);
  MPI_Type_free(&strided.type);

  long long total[NCOUNTS];
  calls[REDUCE] += 3; /* the three tallies below */
  MPI_Reduce(calls, total, NCOUNTS, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  long all_errors = 0;
  MPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  unsigned long long sums[1] = {checksum}, xsum = 0;
  MPI_Reduce(sums, &xsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_BXOR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(
        "expect: scatterv=%lld gatherv=%lld allgatherv=%lld alltoallv=%lld ibcast=%lld "
        "iscatter=%lld igather=%lld ialltoall=%lld iallgather=%lld iscatterv=%lld igatherv=%lld "
        "iallgatherv=%lld ialltoallv=%lld reduce=%lld inter=%lld\n",
        total[SCATTERV], total[GATHERV], total[ALLGATHERV], total[ALLTOALLV], total[IBCAST],
        total[ISCATTER], total[IGATHER], total[IALLTOALL], total[IALLGATHER], total[ISCATTERV],
        total[IGATHERV], total[IALLGATHERV], total[IALLTOALLV], total[REDUCE], total[INTER]);
    printf("checksum: %016llx\n", xsum);
    printf("interpose_v_check: %d processes: %s\n", size,
           all_errors == 0 ? "all values correct" : "WRONG VALUES");
  }
  MPI_Finalize();
  return errors == 0 ? 0 : 1;
}
