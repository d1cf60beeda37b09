#include "mpi/requests.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <string>
#include <thread>

#include "mpi/state.hpp"

namespace lanes::mpi_interpose {

namespace {

struct Tracked {
  Started started;
  MPI_Comm comm = MPI_COMM_NULL;
  const char* function = "";
  MPI_Request handle = MPI_REQUEST_NULL;
  bool done = false;  // the collective finished and the generalized request was completed
  int error_class = MPI_SUCCESS;
};

std::map<MPI_Request, Tracked*>& tracked() {
  static std::map<MPI_Request, Tracked*> all;
  return all;
}

Tracked* find(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return nullptr;
  auto& all = tracked();
  const auto it = all.find(r);
  return it == all.end() ? nullptr : it->second;
}

// The generalized request's callbacks: the status of a completed collective carries no source,
// tag or count; lanes' errors are raised when the collective fails (see settle()).
int query(void* extra, MPI_Status* status) {
  (void)extra;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  return MPI_SUCCESS;
}

int release(void* extra) {
  auto* t = static_cast<Tracked*>(extra);
  tracked().erase(t->handle);
  delete t;
  return MPI_SUCCESS;
}

int cancel(void* /*extra*/, int /*complete*/) {
  return MPI_SUCCESS;  // a collective cannot be cancelled; MPI_Cancel on one is erroneous
}

// Completes the generalized request of a finished collective: receive data unpacked, buffers
// let go, a failure raised through the communicator's error handler.
void settle(Tracked& t, const std::exception_ptr& failure) {
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (...) {
      t.error_class = raise_error(t.comm, t.function);
    }
  } else if (t.started.finish) {
    try {
      t.started.finish();
    } catch (...) {
      t.error_class = raise_error(t.comm, t.function);
    }
  }
  t.started = {};
  t.done = true;
  PMPI_Grequest_complete(t.handle);
}

// Progresses a lanes request once; true when it has finished.
bool progress(Tracked& t) {
  if (t.done) return true;
  std::exception_ptr failure;
  try {
    if (!t.started.request.test()) return false;
  } catch (...) {
    failure = std::current_exception();
  }
  settle(t, failure);
  return true;
}

// Progresses every outstanding lanes request once, completing those that finished (their
// generalized requests stay until the MPI library frees them).
void progress_outstanding() {
  for (auto& [handle, t] : tracked()) {
    if (!t->done) progress(*t);
  }
}

bool none_outstanding() {
  return tracked().empty();
}

int error_of(MPI_Request r) {
  const Tracked* t = find(r);
  return t != nullptr ? t->error_class : MPI_SUCCESS;
}

std::vector<int> errors_of(int count, const MPI_Request* requests) {
  std::vector<int> out(static_cast<std::size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = error_of(requests[i]);
  return out;
}

int first_error(const std::vector<int>& errors) {
  for (int e : errors) {
    if (e != MPI_SUCCESS) return e;
  }
  return MPI_SUCCESS;
}

// The first error among the requests reported complete at `indices`.
int error_among(const std::vector<int>& errors, int outcount, const int* indices) {
  if (outcount == MPI_UNDEFINED) return MPI_SUCCESS;
  for (int k = 0; k < outcount; ++k) {
    if (errors[static_cast<std::size_t>(indices[k])] != MPI_SUCCESS) {
      return errors[static_cast<std::size_t>(indices[k])];
    }
  }
  return MPI_SUCCESS;
}

// The MPI library's result, or the error of a lanes collective that failed in it.
int result(int rc, int lanes_error) {
  return rc != MPI_SUCCESS ? rc : lanes_error;
}

}  // namespace

void track(Started started, MPI_Comm comm, const char* function, MPI_Request* request) {
  auto t = std::make_unique<Tracked>();
  t->started = std::move(started);
  t->comm = comm;
  t->function = function;
  const int rc = PMPI_Grequest_start(&query, &release, &cancel, t.get(), request);
  if (rc != MPI_SUCCESS) {
    t->started.request.wait();  // nothing can wait for it later
    throw lanes::Error(lanes::Errc::internal, "MPI_Grequest_start failed");
  }
  t->handle = *request;
  tracked()[*request] = t.get();
  t.release();
}

}  // namespace lanes::mpi_interpose

using namespace lanes::mpi_interpose;

// While lanes requests are outstanding, every member of the family progresses them, and the
// waiting ones poll (lanes, then the MPI library through the matching test) until done: a rank
// waiting for a point-to-point request still moves the collectives its peers wait for, and a
// rank waiting for a collective still moves its point-to-point traffic.
extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (none_outstanding()) return PMPI_Wait(request, status);
  for (;;) {
    progress_outstanding();
    const int lanes_error = error_of(*request);
    int flag = 0;
    const int rc = PMPI_Test(request, &flag, status);
    if (rc != MPI_SUCCESS || flag) return result(rc, lanes_error);
    std::this_thread::yield();
  }
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (none_outstanding()) return PMPI_Test(request, flag, status);
  progress_outstanding();
  const int lanes_error = error_of(*request);
  const int rc = PMPI_Test(request, flag, status);
  return result(rc, *flag ? lanes_error : MPI_SUCCESS);
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  progress_outstanding();
  return PMPI_Request_get_status(request, flag, status);
}

// Freeing an active collective's request: lanes finishes it first (its buffers must stay valid
// until then in any case).
int MPI_Request_free(MPI_Request* request) {
  while (find(*request) != nullptr && !find(*request)->done) {
    progress_outstanding();
    int flag = 0;
    PMPI_Request_get_status(*request, &flag, MPI_STATUS_IGNORE);  // the MPI library's progress
    std::this_thread::yield();
  }
  return PMPI_Request_free(request);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (none_outstanding()) return PMPI_Waitall(count, requests, statuses);
  for (;;) {
    progress_outstanding();
    const std::vector<int> errors = errors_of(count, requests);
    // A Testall that finds an unfinished request changes none.
    int flag = 0;
    const int rc = PMPI_Testall(count, requests, &flag, statuses);
    if (rc != MPI_SUCCESS || flag) return result(rc, first_error(errors));
    std::this_thread::yield();
  }
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (none_outstanding()) return PMPI_Testall(count, requests, flag, statuses);
  progress_outstanding();
  const std::vector<int> errors = errors_of(count, requests);
  const int rc = PMPI_Testall(count, requests, flag, statuses);
  return result(rc, *flag ? first_error(errors) : MPI_SUCCESS);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (none_outstanding()) return PMPI_Waitany(count, requests, index, status);
  for (;;) {
    progress_outstanding();
    const std::vector<int> errors = errors_of(count, requests);
    int flag = 0;
    const int rc = PMPI_Testany(count, requests, index, &flag, status);
    if (rc != MPI_SUCCESS || flag) {
      const bool picked = rc == MPI_SUCCESS && *index != MPI_UNDEFINED;
      return result(rc, picked ? errors[static_cast<std::size_t>(*index)] : MPI_SUCCESS);
    }
    std::this_thread::yield();
  }
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (none_outstanding()) return PMPI_Testany(count, requests, index, flag, status);
  progress_outstanding();
  const std::vector<int> errors = errors_of(count, requests);
  const int rc = PMPI_Testany(count, requests, index, flag, status);
  const bool picked = rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED;
  return result(rc, picked ? errors[static_cast<std::size_t>(*index)] : MPI_SUCCESS);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (none_outstanding()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  for (;;) {
    progress_outstanding();
    const std::vector<int> errors = errors_of(incount, requests);
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) {
      return result(rc, rc == MPI_SUCCESS ? error_among(errors, *outcount, indices) : rc);
    }
    std::this_thread::yield();
  }
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (none_outstanding()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  progress_outstanding();
  const std::vector<int> errors = errors_of(incount, requests);
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  return result(rc, rc == MPI_SUCCESS ? error_among(errors, *outcount, indices) : rc);
}

}  // extern "C"
