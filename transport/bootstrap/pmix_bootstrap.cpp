// Bootstrap from the PMIx server of the launcher (mpirun, prterun, srun --mpi=pmix).
#include <pmix.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "lanes/error.hpp"
#include "transport/bootstrap/bootstrap.hpp"

namespace lanes::transport {

namespace {

constexpr const char* kWhatToDo =
    "; launch the program with mpirun, prterun or srun --mpi=pmix so that a working PMIx server "
    "is present, or unset the PMIX_* environment variables to run without PMIx";

[[noreturn]] void fail(const std::string& call, pmix_status_t rc, const std::string& detail = "") {
  throw Error(Errc::bootstrap,
              "PMIx bootstrap: " + call + " failed: " + PMIx_Error_string(rc) + detail + kWhatToDo);
}

struct ValueDeleter {
  void operator()(pmix_value_t* v) const noexcept { PMIX_VALUE_RELEASE(v); }
};
using ValuePtr = std::unique_ptr<pmix_value_t, ValueDeleter>;

// Null when the server does not know the key; throws on any other failure.
ValuePtr get_value(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* raw = nullptr;
  const pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &raw);
  ValuePtr value(raw);
  if (rc == PMIX_ERR_NOT_FOUND) return nullptr;
  if (rc != PMIX_SUCCESS) fail(std::string("PMIx_Get(") + key + ")", rc);
  return value;
}

std::optional<std::int64_t> as_integer(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_INT:
      return v.data.integer;
    case PMIX_INT8:
      return v.data.int8;
    case PMIX_INT16:
      return v.data.int16;
    case PMIX_INT32:
      return v.data.int32;
    case PMIX_INT64:
      return v.data.int64;
    case PMIX_UINT:
      return v.data.uint;
    case PMIX_UINT8:
      return v.data.uint8;
    case PMIX_UINT16:
      return v.data.uint16;
    case PMIX_UINT32:
      return v.data.uint32;
    case PMIX_PROC_RANK:
      return v.data.rank;
    case PMIX_UINT64:
      if (v.data.uint64 > INT64_MAX) return std::nullopt;
      return static_cast<std::int64_t>(v.data.uint64);
    case PMIX_SIZE:
      if (v.data.size > INT64_MAX) return std::nullopt;
      return static_cast<std::int64_t>(v.data.size);
    default:
      return std::nullopt;
  }
}

// An int-sized value of `key`, or nullopt when absent or not an integer in [0, INT_MAX].
std::optional<int> get_int(const pmix_proc_t& proc, const char* key) {
  const ValuePtr v = get_value(proc, key);
  if (!v) return std::nullopt;
  const auto n = as_integer(*v);
  if (!n || *n < 0 || *n > INT_MAX) return std::nullopt;
  return static_cast<int>(*n);
}

// PMIx_Init and PMIx_Finalize, paired. PMIx counts initialisations, so this coexists with an MPI
// library (or a second bootstrap) that also initialises PMIx.
class PmixSession {
 public:
  PmixSession() {
    PMIX_PROC_CONSTRUCT(&self_);
    // A URI that points at a live socket of something other than a PMIx server blocks here;
    // PMIX_MCA_ptl_base_handshake_wait_time=<seconds> bounds that wait.
    const pmix_status_t rc = PMIx_Init(&self_, nullptr, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
  }
  ~PmixSession() {
    const pmix_status_t rc = PMIx_Finalize(nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      std::fprintf(stderr, "lanes: PMIx bootstrap: PMIx_Finalize failed: %s\n",
                   PMIx_Error_string(rc));
    }
  }
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;

  const pmix_proc_t& self() const { return self_; }

 private:
  pmix_proc_t self_;
};

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap() {
    const pmix_proc_t& self = session_.self();
    PMIX_PROC_LOAD(&job_, self.nspace, PMIX_RANK_WILDCARD);
    const std::string where =
        " (namespace " + std::string(self.nspace) + ", rank " + std::to_string(self.rank) + ")";

    if (self.rank > static_cast<pmix_rank_t>(INT_MAX)) {
      throw Error(Errc::bootstrap, "PMIx bootstrap: PMIx_Init returned rank " +
                                       std::to_string(self.rank) + ", not a job rank" + where +
                                       kWhatToDo);
    }
    rank_ = static_cast<int>(self.rank);

    const auto size = get_int(job_, PMIX_JOB_SIZE);
    if (!size || *size < 1 || rank_ >= *size) {
      throw Error(Errc::bootstrap, "PMIx bootstrap: the PMIx server gives no usable " +
                                       std::string(PMIX_JOB_SIZE) + " for the job" + where +
                                       kWhatToDo);
    }
    size_ = *size;

    placement_.local_rank = get_int(self, PMIX_LOCAL_RANK).value_or(-1);
    auto local_size = get_int(self, PMIX_LOCAL_SIZE);
    if (!local_size) local_size = get_int(job_, PMIX_LOCAL_SIZE);  // usually a job-level key
    placement_.local_size = local_size.value_or(-1);
    if (placement_.local_rank < 0 || placement_.local_size < 1 ||
        placement_.local_rank >= placement_.local_size) {
      placement_.local_rank = -1;
      placement_.local_size = -1;
    }

    const ValuePtr host = get_value(self, PMIX_HOSTNAME);
    if (host && host->type == PMIX_STRING && host->data.string != nullptr &&
        host->data.string[0] != '\0') {
      placement_.node_key = host->data.string;
    } else {
      placement_.node_key = this_host_name();
    }
  }

  const char* name() const override { return "pmix"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Placement placement() const override { return placement_; }

  void allgather(const void* mine, void* all, std::size_t bytes) override {
    // Every call publishes under a new key, so no rank can read a previous round's value.
    const std::string key = "lanes.ag." + std::to_string(round_++);
    auto* out = static_cast<unsigned char*>(all);

    if (bytes > 0) {
      pmix_value_t value;
      PMIX_VALUE_CONSTRUCT(&value);
      value.type = PMIX_BYTE_OBJECT;
      // PMIx_Put copies the bytes; it never writes through this pointer.
      value.data.bo.bytes = const_cast<char*>(static_cast<const char*>(mine));
      value.data.bo.size = bytes;
      pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
      if (rc != PMIX_SUCCESS) fail("PMIx_Put(" + key + ")", rc);
      rc = PMIx_Commit();
      if (rc != PMIX_SUCCESS) fail("PMIx_Commit", rc);
    }

    // A zero-byte round still fences, so allgather keeps its barrier meaning.
    fence(bytes > 0);
    if (bytes == 0) return;

    for (int r = 0; r < size_; ++r) {
      unsigned char* dst = out + static_cast<std::size_t>(r) * bytes;
      if (r == rank_) {
        if (dst != mine) std::memmove(dst, mine, bytes);
        continue;
      }
      pmix_proc_t peer;
      PMIX_PROC_LOAD(&peer, job_.nspace, static_cast<pmix_rank_t>(r));
      const ValuePtr v = get_value(peer, key.c_str());
      if (!v) fail("PMIx_Get(" + key + ") of rank " + std::to_string(r), PMIX_ERR_NOT_FOUND);
      if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != bytes) {
        throw Error(
            Errc::bootstrap,
            "PMIx bootstrap: rank " + std::to_string(r) + " published " +
                (v->type == PMIX_BYTE_OBJECT ? std::to_string(v->data.bo.size) : "non-byte") +
                " data for allgather round " + key + " but rank " + std::to_string(rank_) +
                " expected " + std::to_string(bytes) +
                " bytes; every rank must pass the same size to allgather");
      }
      std::memcpy(dst, v->data.bo.bytes, bytes);
    }
  }

 private:
  void fence(bool collect) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);  // a bool: nothing to free
    const pmix_status_t rc = PMIx_Fence(&job_, 1, &info, 1);
    if (rc != PMIX_SUCCESS) fail("PMIx_Fence over namespace " + std::string(job_.nspace), rc);
  }

  PmixSession session_;  // first: initialised before, finalised after everything below
  pmix_proc_t job_;      // our namespace with the wildcard rank
  int rank_ = 0;
  int size_ = 0;
  Placement placement_;
  std::uint64_t round_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmix_bootstrap() {
  return std::make_unique<PmixBootstrap>();
}

}  // namespace lanes::transport
