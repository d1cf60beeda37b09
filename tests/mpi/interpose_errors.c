/* An erroneous MPI program, run with liblanes_mpi and LANES_CHECK=1.
 *
 * 1. The ranks disagree on a broadcast's size, then name a root that does not exist: each call
 *    must return an error code (never crash or hang) and the communicator's error handler must
 *    have been called.
 * 2. Every rank passes the same invalid argument to each collective lanes serves (a negative
 *    count, MPI_DATATYPE_NULL, an uncommitted derived datatype, a root outside the communicator,
 *    MPI_OP_NULL, a null or MPI_IN_PLACE buffer where MPI allows none, a count whose bytes no
 *    address reaches), on MPI_COMM_WORLD with MPI_ERRORS_RETURN and on a split communicator
 *    whose error handler records what it is called with. Each call must return the MPI error
 *    class for that argument, call the communicator's error handler exactly once with it, and
 *    print one lanes-mpi line on stderr that names the call, the rank and the argument (so the
 *    error came from lanes, before any communication: the other ranks never wait for it).
 * 3. Afterwards every collective, called correctly on both communicators, gives the right data.
 *
 * Prints "interpose_errors: ok" on rank 0 when every rank saw all of this. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int handler_calls;
static int handler_code;

static void count_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  handler_code = *code;
}

static int rank, failures;

static void fail(const char* what, const char* detail) {
  if (failures++ < 20) printf("rank %d: %s: %s\n", rank, what, detail);
}

/* stderr (fd 2) goes to a temporary file while a call runs, then is read back. */
static char captured[8192];
static int saved_stderr = -1;
static FILE* capture_file;

static void capture_begin(void) {
  fflush(stderr);
  capture_file = tmpfile();
  saved_stderr = dup(2);
  dup2(fileno(capture_file), 2);
}

static void capture_end(void) {
  fflush(stderr);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  rewind(capture_file);
  const size_t n = fread(captured, 1, sizeof captured - 1, capture_file);
  captured[n] = '\0';
  fclose(capture_file);
}

/* Buffers large enough for every call below (at most 4 ranks x 4 ints per block). */
static int sbuf[64], rbuf[64];
static MPI_Datatype uncommitted; /* 2 contiguous ints, never committed */
static MPI_Datatype huge;        /* 2^30 doubles, committed: 2^31 - 1 of them overflow */

enum { WORLD_RETURNS, HANDLER_RECORDS };

typedef int (*call_fn)(MPI_Comm comm, int size);

struct bad_call {
  const char* name;
  const char* function; /* as the lanes-mpi line names it */
  int error_class;
  const char* says; /* what the lanes-mpi line must say about the argument */
  call_fn call;
};

static int bcast_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Bcast(sbuf, -1, MPI_INT, 0, c);
}
static int bcast_type_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Bcast(sbuf, 1, MPI_DATATYPE_NULL, 0, c);
}
static int bcast_uncommitted(MPI_Comm c, int n) {
  (void)n;
  return MPI_Bcast(sbuf, 1, uncommitted, 0, c);
}
static int bcast_root_size(MPI_Comm c, int n) {
  return MPI_Bcast(sbuf, 1, MPI_INT, n, c);
}
static int bcast_root_negative(MPI_Comm c, int n) {
  (void)n;
  return MPI_Bcast(sbuf, 1, MPI_INT, -1, c);
}
static int bcast_null_buffer(MPI_Comm c, int n) {
  (void)n;
  return MPI_Bcast(NULL, 4, MPI_INT, 0, c);
}
static int bcast_in_place(MPI_Comm c, int n) {
  (void)n;
  return MPI_Bcast(MPI_IN_PLACE, 4, MPI_INT, 0, c);
}
static int bcast_overflow(MPI_Comm c, int n) {
  (void)n;
  return MPI_Bcast(sbuf, 2147483647, huge, 0, c);
}
static int scatter_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Scatter(sbuf, 1, MPI_INT, rbuf, -1, MPI_INT, 0, c);
}
static int scatter_type_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Scatter(sbuf, 1, MPI_INT, rbuf, 1, MPI_DATATYPE_NULL, 0, c);
}
static int scatter_root(MPI_Comm c, int n) {
  return MPI_Scatter(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, n, c);
}
static int gather_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Gather(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, 0, c);
}
static int gather_uncommitted(MPI_Comm c, int n) {
  (void)n;
  return MPI_Gather(sbuf, 1, uncommitted, rbuf, 2, MPI_INT, 0, c);
}
static int gather_root(MPI_Comm c, int n) {
  (void)n;
  return MPI_Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, -1, c);
}
static int alltoall_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Alltoall(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, c);
}
static int alltoall_type_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_DATATYPE_NULL, c);
}
static int alltoall_in_place(MPI_Comm c, int n) {
  (void)n;
  return MPI_Alltoall(sbuf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, c);
}
static int allgather_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Allgather(sbuf, 1, MPI_INT, rbuf, -1, MPI_INT, c);
}
static int allgather_uncommitted(MPI_Comm c, int n) {
  (void)n;
  return MPI_Allgather(sbuf, 1, uncommitted, rbuf, 2, MPI_INT, c);
}
static int allgather_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Allgather(sbuf, 1, MPI_INT, NULL, 1, MPI_INT, c);
}
static int reduce_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Reduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, 0, c);
}
static int reduce_op_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, 0, c);
}
static int reduce_root(MPI_Comm c, int n) {
  return MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, n, c);
}
static int reduce_type_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Reduce(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, c);
}
static int allreduce_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Allreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, c);
}
static int allreduce_op_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, c);
}
static int allreduce_uncommitted(MPI_Comm c, int n) {
  (void)n;
  return MPI_Allreduce(sbuf, rbuf, 1, uncommitted, MPI_SUM, c);
}
static int allreduce_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Allreduce(NULL, rbuf, 4, MPI_INT, MPI_SUM, c);
}
static int rsb_count(MPI_Comm c, int n) {
  (void)n;
  return MPI_Reduce_scatter_block(sbuf, rbuf, -1, MPI_INT, MPI_SUM, c);
}
static int rsb_op_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Reduce_scatter_block(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, c);
}
static int rsb_type_null(MPI_Comm c, int n) {
  (void)n;
  return MPI_Reduce_scatter_block(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, c);
}

static const struct bad_call bad_calls[] = {
    {"bcast count -1", "MPI_Bcast", MPI_ERR_COUNT, "count is -1", bcast_count},
    {"bcast MPI_DATATYPE_NULL", "MPI_Bcast", MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL",
     bcast_type_null},
    {"bcast uncommitted type", "MPI_Bcast", MPI_ERR_TYPE,
     "datatype is a derived datatype that is not committed", bcast_uncommitted},
    {"bcast root = size", "MPI_Bcast", MPI_ERR_ROOT, "is not a rank of the communicator",
     bcast_root_size},
    {"bcast root -1", "MPI_Bcast", MPI_ERR_ROOT, "root -1 is not a rank", bcast_root_negative},
    {"bcast null buffer", "MPI_Bcast", MPI_ERR_BUFFER, "buffer is a null pointer",
     bcast_null_buffer},
    {"bcast MPI_IN_PLACE", "MPI_Bcast", MPI_ERR_BUFFER, "buffer is MPI_IN_PLACE", bcast_in_place},
    {"bcast bytes beyond an address", "MPI_Bcast", MPI_ERR_COUNT,
     "count 2147483647 of datatype (8589934592 bytes", bcast_overflow},
    {"scatter recvcount -1", "MPI_Scatter", MPI_ERR_COUNT, "recvcount is -1", scatter_count},
    {"scatter recvtype MPI_DATATYPE_NULL", "MPI_Scatter", MPI_ERR_TYPE,
     "recvtype is MPI_DATATYPE_NULL", scatter_type_null},
    {"scatter root = size", "MPI_Scatter", MPI_ERR_ROOT, "is not a rank", scatter_root},
    {"gather sendcount -1", "MPI_Gather", MPI_ERR_COUNT, "sendcount is -1", gather_count},
    {"gather uncommitted sendtype", "MPI_Gather", MPI_ERR_TYPE, "sendtype is a derived datatype",
     gather_uncommitted},
    {"gather root -1", "MPI_Gather", MPI_ERR_ROOT, "root -1 is not a rank", gather_root},
    {"alltoall sendcount -1", "MPI_Alltoall", MPI_ERR_COUNT, "sendcount is -1", alltoall_count},
    {"alltoall recvtype MPI_DATATYPE_NULL", "MPI_Alltoall", MPI_ERR_TYPE,
     "recvtype is MPI_DATATYPE_NULL", alltoall_type_null},
    {"alltoall recvbuf MPI_IN_PLACE", "MPI_Alltoall", MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE",
     alltoall_in_place},
    {"allgather recvcount -1", "MPI_Allgather", MPI_ERR_COUNT, "recvcount is -1", allgather_count},
    {"allgather uncommitted sendtype", "MPI_Allgather", MPI_ERR_TYPE,
     "sendtype is a derived datatype", allgather_uncommitted},
    {"allgather null recvbuf", "MPI_Allgather", MPI_ERR_BUFFER, "recvbuf is a null pointer",
     allgather_null},
    {"reduce count -1", "MPI_Reduce", MPI_ERR_COUNT, "count is -1", reduce_count},
    {"reduce MPI_OP_NULL", "MPI_Reduce", MPI_ERR_OP, "op is MPI_OP_NULL", reduce_op_null},
    {"reduce root = size", "MPI_Reduce", MPI_ERR_ROOT, "is not a rank", reduce_root},
    {"reduce MPI_DATATYPE_NULL", "MPI_Reduce", MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL",
     reduce_type_null},
    {"allreduce count -1", "MPI_Allreduce", MPI_ERR_COUNT, "count is -1", allreduce_count},
    {"allreduce MPI_OP_NULL", "MPI_Allreduce", MPI_ERR_OP, "op is MPI_OP_NULL", allreduce_op_null},
    {"allreduce uncommitted type", "MPI_Allreduce", MPI_ERR_TYPE, "datatype is a derived datatype",
     allreduce_uncommitted},
    {"allreduce null sendbuf", "MPI_Allreduce", MPI_ERR_BUFFER, "sendbuf is a null pointer",
     allreduce_null},
    {"reduce_scatter_block recvcount -1", "MPI_Reduce_scatter_block", MPI_ERR_COUNT,
     "recvcount is -1", rsb_count},
    {"reduce_scatter_block MPI_OP_NULL", "MPI_Reduce_scatter_block", MPI_ERR_OP,
     "op is MPI_OP_NULL", rsb_op_null},
    {"reduce_scatter_block MPI_DATATYPE_NULL", "MPI_Reduce_scatter_block", MPI_ERR_TYPE,
     "datatype is MPI_DATATYPE_NULL", rsb_type_null},
};

/* Every bad call on `comm`; `mode` says how its errors come back. */
static void check_bad_calls(MPI_Comm comm, const char* comm_name, int mode) {
  int size, me;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  char line_start[128], detail[sizeof captured + 512];
  for (size_t i = 0; i < sizeof bad_calls / sizeof bad_calls[0]; ++i) {
    const struct bad_call* b = &bad_calls[i];
    const int calls_before = handler_calls;
    capture_begin();
    const int rc = b->call(comm, size);
    capture_end();
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
    snprintf(line_start, sizeof line_start, "lanes-mpi: %s on rank %d: ", b->function, me);
    const char* line = strstr(captured, line_start);
    snprintf(detail, sizeof detail, "on %s: returned class %d (expected %d), stderr '%s'",
             comm_name, error_class, b->error_class, captured);
    if (error_class != b->error_class || line == NULL || strstr(line, b->says) == NULL) {
      fail(b->name, detail);
    }
    if (mode == HANDLER_RECORDS && (handler_calls != calls_before + 1 || handler_code != rc)) {
      snprintf(detail, sizeof detail, "on %s: error handler called %d times, last with %d (rc %d)",
               comm_name, handler_calls - calls_before, handler_code, rc);
      fail(b->name, detail);
    }
  }
}

static void expect_int(const char* what, const char* comm_name, int i, int got, int want) {
  if (got != want) {
    char detail[256];
    snprintf(detail, sizeof detail, "on %s: element %d is %d, expected %d", comm_name, i, got,
             want);
    fail(what, detail);
  }
}

static void expect_ok(const char* what, const char* comm_name, int rc) {
  if (rc != MPI_SUCCESS) {
    char detail[128];
    snprintf(detail, sizeof detail, "on %s: returned %d", comm_name, rc);
    fail(what, detail);
  }
}

/* Every collective, called correctly on `comm`, with the values checked. */
static void check_good_calls(MPI_Comm comm, const char* comm_name) {
  int n, me;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  const int root = n - 1, k = 2; /* k ints per block */

  for (int i = 0; i < 4; ++i) sbuf[i] = me == root ? 1000 + i : -1;
  expect_ok("good bcast", comm_name, MPI_Bcast(sbuf, 4, MPI_INT, root, comm));
  for (int i = 0; i < 4; ++i) expect_int("good bcast", comm_name, i, sbuf[i], 1000 + i);

  for (int i = 0; i < n * k; ++i) sbuf[i] = 10 * i;
  expect_ok("good scatter", comm_name, MPI_Scatter(sbuf, k, MPI_INT, rbuf, k, MPI_INT, 0, comm));
  for (int i = 0; i < k; ++i) expect_int("good scatter", comm_name, i, rbuf[i], 10 * (me * k + i));

  for (int i = 0; i < k; ++i) sbuf[i] = 100 * me + i;
  expect_ok("good gather", comm_name, MPI_Gather(sbuf, k, MPI_INT, rbuf, k, MPI_INT, root, comm));
  if (me == root) {
    for (int i = 0; i < n * k; ++i) {
      expect_int("good gather", comm_name, i, rbuf[i], 100 * (i / k) + i % k);
    }
  }

  for (int i = 0; i < n * k; ++i) sbuf[i] = 1000 * me + i;
  expect_ok("good alltoall", comm_name, MPI_Alltoall(sbuf, k, MPI_INT, rbuf, k, MPI_INT, comm));
  for (int i = 0; i < n * k; ++i) {
    expect_int("good alltoall", comm_name, i, rbuf[i], 1000 * (i / k) + me * k + i % k);
  }

  for (int i = 0; i < k; ++i) sbuf[i] = 7 * me + i;
  expect_ok("good allgather", comm_name, MPI_Allgather(sbuf, k, MPI_INT, rbuf, k, MPI_INT, comm));
  for (int i = 0; i < n * k; ++i) {
    expect_int("good allgather", comm_name, i, rbuf[i], 7 * (i / k) + i % k);
  }

  const int triangle = n * (n - 1) / 2; /* sum of the ranks */
  for (int i = 0; i < 3; ++i) sbuf[i] = me + i;
  expect_ok("good reduce", comm_name, MPI_Reduce(sbuf, rbuf, 3, MPI_INT, MPI_SUM, root, comm));
  if (me == root) {
    for (int i = 0; i < 3; ++i) expect_int("good reduce", comm_name, i, rbuf[i], triangle + n * i);
  }
  expect_ok("good allreduce", comm_name, MPI_Allreduce(sbuf, rbuf, 3, MPI_INT, MPI_MAX, comm));
  for (int i = 0; i < 3; ++i) expect_int("good allreduce", comm_name, i, rbuf[i], n - 1 + i);

  for (int i = 0; i < n * k; ++i) sbuf[i] = me + i;
  expect_ok("good reduce_scatter_block", comm_name,
            MPI_Reduce_scatter_block(sbuf, rbuf, k, MPI_INT, MPI_SUM, comm));
  for (int i = 0; i < k; ++i) {
    expect_int("good reduce_scatter_block", comm_name, i, rbuf[i], triangle + n * (me * k + i));
  }

  expect_ok("good barrier", comm_name, MPI_Barrier(comm));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(count_error, &eh);

  /* 1. Errors that lanes finds while it serves the call. */
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, eh);
  int data[8] = {0};
  /* Rank 0 broadcasts 8 ints, the others expect 4 (LANES_CHECK=1 finds the mismatch). */
  const int rc1 = MPI_Bcast(data, rank == 0 ? 8 : 4, MPI_INT, 0, comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int rc2 = MPI_Bcast(data, 1, MPI_INT, size, comm);
  if (rc1 == MPI_SUCCESS || rc2 == MPI_SUCCESS || handler_calls != 1) {
    char detail[128];
    snprintf(detail, sizeof detail, "first call %d, second call %d, handler called %d times", rc1,
             rc2, handler_calls);
    fail("mismatch and bad root on a dup", detail);
  }
  MPI_Comm_free(&comm);

  /* 2. Invalid arguments, the same on every rank. */
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &huge);
  MPI_Type_commit(&huge);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check_bad_calls(MPI_COMM_WORLD, "MPI_COMM_WORLD", WORLD_RETURNS);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Comm_set_errhandler(half, eh);
  handler_calls = 0;
  check_bad_calls(half, "a split communicator", HANDLER_RECORDS);

  /* 3. Correct calls still work, on both communicators. */
  check_good_calls(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  check_good_calls(half, "a split communicator");
  if (handler_calls != (int)(sizeof bad_calls / sizeof bad_calls[0])) {
    fail("correct calls", "called the error handler");
  }

  int ok = failures == 0, all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("interpose_errors: %s\n", all ? "ok" : "FAIL");
  MPI_Type_free(&uncommitted);
  MPI_Type_free(&huge);
  MPI_Comm_free(&half);
  MPI_Errhandler_free(&eh);
  MPI_Finalize();
  return all ? 0 : 1;
}
