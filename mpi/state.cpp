#include "mpi/state.hpp"

#include <cstdio>
#include <exception>
#include <lanes/mpi.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

namespace lanes::mpi_interpose {

namespace {

// The attribute value cached on an MPI communicator.
struct Entry {
  MPI_Comm comm;
  lanes::Communicator lanes_comm;
};

struct State {
  Settings settings;
  bool on = false;
  std::optional<lanes::Runtime> runtime;
  lanes::Communicator world;
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm quiet_self = MPI_COMM_NULL;  // see quiet_self()
  std::set<Entry*> entries;
  // The communicator lanes served last (known()).
  MPI_Comm recent = MPI_COMM_NULL;
  Entry* recent_entry = nullptr;
  int recent_rank = 0;
  int recent_size = 0;
  std::array<std::uint64_t, kCollNames.size() + 1> counts{};  // served per coll, then fallback
  std::mutex memory_lock;  // MPI_Alloc_mem may come from any thread
  std::unordered_map<void*, lanes::Memory> memory;
};

State& state() {
  static State s;
  return s;
}

int world_rank() {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int delete_entry(MPI_Comm /*comm*/, int /*keyval*/, void* value, void* /*extra*/) {
  auto* e = static_cast<Entry*>(value);
  State& s = state();
  if (s.recent_entry == e) s.recent = MPI_COMM_NULL, s.recent_entry = nullptr;
  s.entries.erase(e);
  delete e;  // releases the lanes communicator (local: its shared memory mapping)
  return MPI_SUCCESS;
}

void remember(State& s, MPI_Comm comm, Entry* e) {
  if (s.recent == comm && s.recent_entry == e) return;
  s.recent = comm;
  s.recent_entry = e;
  PMPI_Comm_rank(comm, &s.recent_rank);
  PMPI_Comm_size(comm, &s.recent_size);
}

}  // namespace

void start(int thread_level) {
  State& s = state();
  s.settings = read_settings();
  if (!s.settings.error.empty()) {
    if (world_rank() == 0) std::fprintf(stderr, "lanes-mpi: %s\n", s.settings.error.c_str());
    return;
  }
  if (!s.settings.serves_any()) return;
  if (thread_level == MPI_THREAD_MULTIPLE) {
    // Concurrent collectives from several threads would need lanes to be thread-safe.
    if (world_rank() == 0) {
      std::fprintf(stderr, "lanes-mpi: MPI_THREAD_MULTIPLE: every collective goes to MPI\n");
    }
    return;
  }
  std::string why;
  try {
    s.runtime.emplace(lanes::mpi::init(MPI_COMM_WORLD));
    s.world = s.runtime->world();
  } catch (const std::exception& e) {
    why = e.what();
  }
  // Every rank must agree, or some would serve calls the others forward.
  int ok = why.empty() ? 1 : 0;
  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_ok == 0) {
    // lanes' start-up agrees: every rank has the same error, naming the rank that failed, and
    // rank 0 says it once. A rank whose error rank 0 did not share says its own.
    int rank0_failed = why.empty() ? 0 : 1;
    PMPI_Bcast(&rank0_failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (world_rank() == 0) {
      std::fprintf(stderr, "lanes-mpi: lanes could not start: %s: every collective goes to MPI\n",
                   why.empty() ? "another rank failed" : why.c_str());
    } else if (!why.empty() && rank0_failed == 0) {
      std::fprintf(stderr, "lanes-mpi: rank %d: %s\n", world_rank(), why.c_str());
    }
    // Finalizing would wait for the ranks that failed: keep the half-started runtime instead.
    if (s.runtime) new lanes::Runtime(std::move(*s.runtime));
    s.runtime.reset();
    s.world = {};
    return;
  }
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &delete_entry, &s.keyval, nullptr);
  PMPI_Comm_dup(MPI_COMM_SELF, &s.quiet_self);
  PMPI_Comm_set_errhandler(s.quiet_self, MPI_ERRORS_RETURN);
  s.on = true;
}

void stop() {
  State& s = state();
  if (s.settings.stats) {
    std::array<std::uint64_t, kCollNames.size() + 1> sum{};
    PMPI_Reduce(s.counts.data(), sum.data(), static_cast<int>(sum.size()), MPI_UINT64_T, MPI_SUM, 0,
                MPI_COMM_WORLD);
    if (world_rank() == 0) {
      std::string line = "lanes-mpi:";
      for (std::size_t i = 0; i < kCollNames.size(); ++i) {
        line += std::string(" ") + kCollNames[i] + "=" + std::to_string(sum[i]);
      }
      line += " fallback=" + std::to_string(sum.back());
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  if (!s.on) return;
  s.on = false;
  // Communicators the program did not free: drop their lanes side now (runs delete_entry).
  while (!s.entries.empty()) {
    Entry* e = *s.entries.begin();
    if (PMPI_Comm_delete_attr(e->comm, s.keyval) != MPI_SUCCESS)
      delete_entry(e->comm, 0, e, nullptr);
  }
  PMPI_Comm_free_keyval(&s.keyval);
  PMPI_Comm_free(&s.quiet_self);
  s.world = {};
  try {
    s.runtime->finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lanes-mpi: rank %d: finalize: %s\n", world_rank(), e.what());
  }
  s.runtime.reset();
}

void* allocate_memory(std::size_t bytes) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.memory_lock);
  if (!s.on || !s.runtime) return nullptr;
  try {
    lanes::Memory m = s.runtime->allocate(bytes);
    if (!m.shared()) return nullptr;  // ordinary memory: the MPI library's is as good
    void* p = m.data();
    s.memory.emplace(p, std::move(m));
    return p;
  } catch (const std::exception&) {
    return nullptr;
  }
}

bool free_memory(void* p) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.memory_lock);
  return s.memory.erase(p) > 0;
}

bool routed(Coll coll, MPI_Comm comm) {
  State& s = state();
  if (!s.on || !s.settings.serves(coll) || comm == MPI_COMM_NULL) return false;
  int inter = 0;
  return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter == 0;
}

MPI_Comm quiet_self() {
  return state().quiet_self;
}

lanes::Communicator* serving(Coll coll, MPI_Comm comm) {
  State& s = state();
  if (!routed(coll, comm)) return nullptr;
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, s.keyval, &value, &found);
  if (found != 0) {
    remember(s, comm, static_cast<Entry*>(value));
    return &static_cast<Entry*>(value)->lanes_comm;
  }
  // First use on this communicator: every rank of comm is here (the decision above is the same
  // on all of them), so the collective set-up below matches.
  auto entry = std::make_unique<Entry>();
  entry->comm = comm;
  entry->lanes_comm = comm == MPI_COMM_WORLD ? s.world : lanes::mpi::communicator(s.world, comm);
  PMPI_Comm_set_attr(comm, s.keyval, entry.get());
  s.entries.insert(entry.get());
  remember(s, comm, entry.get());
  return &entry.release()->lanes_comm;
}

std::optional<KnownComm> known(Coll coll, MPI_Comm comm) {
  State& s = state();
  if (comm != s.recent || comm == MPI_COMM_NULL || !s.on || !s.settings.serves(coll)) {
    return std::nullopt;
  }
  return KnownComm{&s.recent_entry->lanes_comm, s.recent_rank, s.recent_size};
}

void count_served(Coll coll) {
  ++state().counts[static_cast<std::size_t>(coll)];
}
void count_fallback() {
  ++state().counts.back();
}

int raise_error(MPI_Comm comm, const char* function) {
  std::string what;
  int code = MPI_ERR_OTHER;
  try {
    throw;
  } catch (const lanes::Error& e) {
    what = e.what();
    if (e.code() == lanes::Errc::invalid_argument) code = MPI_ERR_ARG;
    if (e.code() == lanes::Errc::mismatch) code = MPI_ERR_TRUNCATE;  // sizes that differ
  } catch (const std::exception& e) {
    what = e.what();
  }
  return raise_error_class(comm, function, code, what);
}

int raise_error_class(MPI_Comm comm, const char* function, int error_class,
                      const std::string& what) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  std::fprintf(stderr, "lanes-mpi: %s on rank %d: %s\n", function, rank, what.c_str());
  PMPI_Comm_call_errhandler(comm, error_class);
  return error_class;
}

}  // namespace lanes::mpi_interpose
