// Bootstrap from the PMIx server of the launcher (mpirun, prterun, srun --mpi=pmix).
#include <pmix.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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

// PROC-ENTRY-NOT-FOUND is what a wildcard query of a per-process key returns.
bool is_not_found(pmix_status_t rc) {
  return rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND;
}

// Null when the server does not know the key. Other failures throw when the key is required and
// count as absent when it is not.
ValuePtr get_value(const pmix_proc_t& proc, const char* key, bool required) {
  pmix_value_t* raw = nullptr;
  const pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &raw);
  ValuePtr value(raw);
  if (rc == PMIX_SUCCESS) return value;
  if (!is_not_found(rc) && required) {
    fail(std::string("PMIx_Get(") + key + ")", rc);
  }
  return nullptr;
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
std::optional<int> get_int(const pmix_proc_t& proc, const char* key, bool required = false) {
  const ValuePtr v = get_value(proc, key, required);
  if (!v) return std::nullopt;
  const auto n = as_integer(*v);
  if (!n || *n < 0 || *n > INT_MAX) return std::nullopt;
  return static_cast<int>(*n);
}

// The ranks of a PMIX_LOCAL_PEERS list ("0,1,2" or with ranges "0-3,8"), or empty when it does
// not parse.
std::vector<int> parse_peers(std::string_view list) {
  std::vector<int> ranks;
  while (!list.empty()) {
    const std::string_view item = list.substr(0, list.find(','));
    list.remove_prefix(std::min(list.size(), item.size() + 1));
    int first = 0;
    const char* end = item.data() + item.size();
    auto parsed = std::from_chars(item.data(), end, first);
    if (parsed.ec != std::errc() || first < 0) return {};
    int last = first;
    if (parsed.ptr != end && *parsed.ptr == '-') {
      parsed = std::from_chars(parsed.ptr + 1, end, last);
      if (parsed.ec != std::errc() || last < first) return {};
    }
    if (parsed.ptr != end || last - first > (1 << 24)) return {};
    for (int r = first; r <= last; ++r) ranks.push_back(r);
  }
  return ranks;
}

// The PMIx variables that steer PMIx_Init, for its error message (URIs are long: names only).
std::string launcher_variables() {
  std::string names;
  for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
    const std::string_view entry(*env);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (name == "PMIX_NAMESPACE" || name == "PMIX_RANK") {
      names += (names.empty() ? "" : ", ") + std::string(entry);
    } else if (name.starts_with("PMIX_SERVER_URI")) {
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
  }
  return names.empty() ? " (no PMIX_NAMESPACE or PMIX_SERVER_URI* in the environment)"
                       : " (environment: " + names + ")";
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
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc, launcher_variables());
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

    const auto size = get_int(job_, PMIX_JOB_SIZE, true);
    if (!size || *size < 1 || rank_ >= *size) {
      throw Error(Errc::bootstrap, "PMIx bootstrap: the PMIx server gives no usable " +
                                       std::string(PMIX_JOB_SIZE) + " for the job" + where +
                                       kWhatToDo);
    }
    size_ = *size;
    placement_ = find_placement(self);
  }

  const char* name() const override { return "pmix"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Placement placement() const override { return placement_; }

  void allgather(const void* mine, void* all, std::size_t bytes) override {
    const std::uint64_t round = round_++;
    auto* out = static_cast<unsigned char*>(all);

    // A zero-byte round publishes nothing but still fences, so allgather keeps its barrier
    // meaning.
    if (bytes == 0) {
      fence(false);
      return;
    }
    if (bytes > SIZE_MAX - sizeof(BlockHeader)) {
      throw Error(Errc::invalid_argument, "PMIx bootstrap: allgather of " + std::to_string(bytes) +
                                              " bytes per rank is too large");
    }

    const BlockHeader header{instance_, round, static_cast<std::uint32_t>(rank_), 0};
    std::vector<char> block(sizeof(header) + bytes);
    std::memcpy(block.data(), &header, sizeof(header));
    std::memcpy(block.data() + sizeof(header), mine, bytes);

    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = block.data();  // PMIx_Put copies; `block` stays ours
    value.data.bo.size = block.size();
    const std::string my_key = key(round, rank_);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, my_key.c_str(), &value);
    if (rc != PMIX_SUCCESS) fail("PMIx_Put(" + my_key + ")", rc);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) fail("PMIx_Commit", rc);
    fence(true);

    for (int r = 0; r < size_; ++r) {
      unsigned char* dst = out + static_cast<std::size_t>(r) * bytes;
      if (r == rank_) {
        if (dst != mine) std::memmove(dst, mine, bytes);
      } else {
        fetch(r, round, dst, bytes);
      }
    }
  }

 private:
  // Local rank and size come from PMIX_LOCAL_RANK and PMIX_LOCAL_SIZE. A client that finalised
  // PMIx and initialised it again loses its per-process keys (PMIx 4.2 under Open MPI 4.1): the
  // job-level PMIX_LOCAL_PEERS then gives both.
  Placement find_placement(const pmix_proc_t& self) const {
    Placement p;
    std::optional<int> local_rank = get_int(self, PMIX_LOCAL_RANK);
    std::optional<int> local_size = get_int(self, PMIX_LOCAL_SIZE);
    if (!local_size) local_size = get_int(job_, PMIX_LOCAL_SIZE);  // usually a job-level key
    if (!local_rank || !local_size) {
      ValuePtr peers = get_value(self, PMIX_LOCAL_PEERS, false);
      if (!peers) peers = get_value(job_, PMIX_LOCAL_PEERS, false);
      if (peers && peers->type == PMIX_STRING && peers->data.string != nullptr) {
        const std::vector<int> ranks = parse_peers(peers->data.string);
        const auto me = std::find(ranks.begin(), ranks.end(), rank_);
        if (me != ranks.end()) {
          if (!local_rank) local_rank = static_cast<int>(me - ranks.begin());
          if (!local_size) local_size = static_cast<int>(ranks.size());
        }
      }
    }
    if (local_rank && local_size && *local_rank < *local_size) {
      p.local_rank = *local_rank;
      p.local_size = *local_size;
    }

    const ValuePtr host = get_value(self, PMIX_HOSTNAME, false);
    if (host && host->type == PMIX_STRING && host->data.string != nullptr &&
        host->data.string[0] != '\0') {
      p.node_key = host->data.string;
    } else {
      p.node_key = this_host_name();
    }
    return p;
  }

  // Leads every published block, so that a value read back can be checked to be the one asked
  // for (see fetch()).
  struct BlockHeader {
    std::uint64_t instance;
    std::uint64_t round;
    std::uint32_t rank;
    std::uint32_t reserved;
  };

  // Every (bootstrap, round, rank) gets its own key. PMIx clients cache what they read and
  // never see a key's later value, so names must never be reused. With Open MPI 4.1's server
  // and PMIx 4.2's shared-memory store, a Get of a key that several ranks published could
  // return this rank's own value: naming the rank in the key rules that out.
  std::string key(std::uint64_t round, int rank) const {
    return "lanes.ag." + std::to_string(instance_) + "." + std::to_string(round) + "." +
           std::to_string(rank);
  }

  void fence(bool collect) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);  // a bool: nothing to free
    const pmix_status_t rc = PMIx_Fence(&job_, 1, &info, 1);
    if (rc != PMIX_SUCCESS) fail("PMIx_Fence over namespace " + std::string(job_.nspace), rc);
  }

  // Reads rank r's block of `round` into dst. Some PMIx stores make data collected by a fence
  // visible a moment after the fence returns, so a missing or not-yet-current value is asked
  // for again for a while before giving up.
  void fetch(int r, std::uint64_t round, unsigned char* dst, std::size_t bytes) {
    using Clock = std::chrono::steady_clock;
    const std::string peer_key = key(round, r);
    pmix_proc_t peer;
    PMIX_PROC_LOAD(&peer, job_.nspace, static_cast<pmix_rank_t>(r));
    const auto deadline = Clock::now() + kFetchPatience;
    auto pause = std::chrono::microseconds(100);
    for (;;) {
      pmix_value_t* raw = nullptr;
      const pmix_status_t rc = PMIx_Get(&peer, peer_key.c_str(), nullptr, 0, &raw);
      const ValuePtr v(raw);
      std::string problem;
      if (rc == PMIX_SUCCESS && v && v->type == PMIX_BYTE_OBJECT &&
          v->data.bo.size >= sizeof(BlockHeader)) {
        BlockHeader h;
        std::memcpy(&h, v->data.bo.bytes, sizeof(h));
        if (h.instance == instance_ && h.round == round &&
            h.rank == static_cast<std::uint32_t>(r)) {
          const std::size_t theirs = v->data.bo.size - sizeof(h);
          if (theirs != bytes) {
            throw Error(Errc::bootstrap, "PMIx bootstrap: allgather: rank " + std::to_string(r) +
                                             " passed " + std::to_string(theirs) +
                                             " bytes but rank " + std::to_string(rank_) +
                                             " passed " + std::to_string(bytes) +
                                             "; every rank must pass the same size");
          }
          std::memcpy(dst, v->data.bo.bytes + sizeof(h), bytes);
          return;
        }
        problem = "the value read back is not the one rank " + std::to_string(r) + " published";
      } else if (rc == PMIX_SUCCESS) {
        problem = "the value read back is not a block published by lanes";
      } else if (!is_not_found(rc) && rc != PMIX_ERR_TIMEOUT) {
        fail("PMIx_Get(" + peer_key + ") of rank " + std::to_string(r), rc);
      } else {
        problem = std::string("PMIx_Get returned ") + PMIx_Error_string(rc);
      }
      // TIMEOUT: the server has already waited for the key on our behalf.
      if (rc == PMIX_ERR_TIMEOUT || Clock::now() >= deadline) {
        throw Error(Errc::bootstrap,
                    "PMIx bootstrap: allgather: no data from rank " + std::to_string(r) +
                        " under key " + peer_key + " after the fence (" + problem +
                        "); all ranks must call allgather the same number of times and create "
                        "their PMIx bootstraps in the same order");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(50000));
    }
  }

  static constexpr std::chrono::seconds kFetchPatience{10};

  PmixSession session_;  // first: initialised before, finalised after everything below
  pmix_proc_t job_;      // our namespace with the wildcard rank
  int rank_ = 0;
  int size_ = 0;
  Placement placement_;
  // Keys live in PMIx for the life of the job and are shared by all bootstraps of the process:
  // each bootstrap takes a process-wide serial number to keep its keys apart. Ranks create
  // their bootstraps in the same order, so the numbers agree across ranks.
  std::uint64_t instance_ = next_instance_.fetch_add(1);
  std::uint64_t round_ = 0;
  static inline std::atomic<std::uint64_t> next_instance_{0};
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmix_bootstrap() {
  return std::make_unique<PmixBootstrap>();
}

}  // namespace lanes::transport
