// Run under a launcher (mpirun -np N bootstrap_check pmix|mpi). Builds that bootstrap, checks that
// rank, size and placement agree across ranks and with the host names, and that allgather and
// allgatherv deliver what every rank computed. One "OK" line per rank and exit 0, or the problems
// and exit 1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lanes/error.hpp"
#include "transport/bootstrap/bootstrap.hpp"

#if __has_include(<mpi.h>)
#include <mpi.h>

#include "transport/bootstrap/mpi_bootstrap.hpp"
#define BOOTSTRAP_CHECK_MPI 1
#else
#define BOOTSTRAP_CHECK_MPI 0
#endif

namespace {

using lanes::transport::Bootstrap;
using Bytes = std::vector<std::byte>;

std::byte value_at(int rank, int round, std::size_t i) {
  std::uint64_t x = static_cast<std::uint64_t>(rank) * 0x9e3779b97f4a7c15ULL ^
                    static_cast<std::uint64_t>(round) * 0xc2b2ae3d27d4eb4fULL ^
                    static_cast<std::uint64_t>(i) * 0x165667b19e3779f9ULL;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 32;
  return static_cast<std::byte>(x & 0xff);
}

Bytes block(int rank, int round, std::size_t len) {
  Bytes b(len);
  for (std::size_t i = 0; i < len; ++i) b[i] = value_at(rank, round, i);
  return b;
}

Bytes to_bytes(const std::string& s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}

std::string to_string(const Bytes& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

struct Checker {
  std::vector<std::string> problems;
  void expect(bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  }
};

// The environment the launcher gives each rank, when it gives it (Open MPI does).
int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : -1;
}

// `world`: the bootstrap spans the whole job, so the launcher's OMPI_COMM_WORLD_* must agree.
void check_identity(Bootstrap& boot, const std::string& kind, Checker& c, bool world = true) {
  const int rank = boot.rank();
  const int size = boot.size();
  c.expect(kind == boot.name(), "name() is '" + std::string(boot.name()) + "'");
  c.expect(size >= 1 && rank >= 0 && rank < size,
           "rank " + std::to_string(rank) + " outside size " + std::to_string(size));

  const auto p = boot.placement();
  if (world) {
    const int env_rank = env_int("OMPI_COMM_WORLD_RANK");
    const int env_size = env_int("OMPI_COMM_WORLD_SIZE");
    const int env_local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK");
    const int env_local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (env_rank >= 0) c.expect(env_rank == rank, "OMPI_COMM_WORLD_RANK differs from rank()");
    if (env_size >= 0) c.expect(env_size == size, "OMPI_COMM_WORLD_SIZE differs from size()");
    if (env_local_rank >= 0) {
      c.expect(env_local_rank == p.local_rank,
               "OMPI_COMM_WORLD_LOCAL_RANK differs from local_rank");
    }
    if (env_local_size >= 0) {
      c.expect(env_local_size == p.local_size,
               "OMPI_COMM_WORLD_LOCAL_SIZE differs from local_size");
    }
  }

  // Gather everybody's view of itself, then check it as a whole on every rank.
  const std::int32_t mine[4] = {rank, size, p.local_rank, p.local_size};
  std::vector<std::int32_t> all(4 * static_cast<std::size_t>(size));
  boot.allgather(mine, all.data(), sizeof(mine));
  const auto keys = lanes::transport::allgatherv(boot, to_bytes(p.node_key));
  const auto hosts =
      lanes::transport::allgatherv(boot, to_bytes(lanes::transport::this_host_name()));

  std::map<std::string, std::vector<int>> by_key;  // node key -> ranks
  std::map<std::string, std::set<std::string>> hosts_of_key;
  std::map<std::string, std::set<std::string>> keys_of_host;
  for (int r = 0; r < size; ++r) {
    const auto* e = &all[4 * static_cast<std::size_t>(r)];
    c.expect(e[0] == r, "rank " + std::to_string(r) + " reports rank " + std::to_string(e[0]));
    c.expect(e[1] == size, "rank " + std::to_string(r) + " reports size " + std::to_string(e[1]));
    const std::string key = to_string(keys[static_cast<std::size_t>(r)]);
    const std::string host = to_string(hosts[static_cast<std::size_t>(r)]);
    c.expect(!key.empty(), "rank " + std::to_string(r) + " has an empty node key");
    by_key[key].push_back(r);
    hosts_of_key[key].insert(host);
    keys_of_host[host].insert(key);
  }
  for (const auto& [key, ranks] : by_key) {
    c.expect(hosts_of_key[key].size() == 1, "node key '" + key + "' spans several hosts");
    std::set<int> local_ranks;
    for (int r : ranks) {
      const auto* e = &all[4 * static_cast<std::size_t>(r)];
      c.expect(e[3] == static_cast<std::int32_t>(ranks.size()),
               "rank " + std::to_string(r) + " says local_size " + std::to_string(e[3]) +
                   " but node '" + key + "' has " + std::to_string(ranks.size()) + " ranks");
      local_ranks.insert(e[2]);
    }
    c.expect(local_ranks.size() == ranks.size() && *local_ranks.begin() == 0 &&
                 *local_ranks.rbegin() == static_cast<int>(ranks.size()) - 1,
             "local ranks on node '" + key + "' are not 0.." + std::to_string(ranks.size() - 1));
  }
  for (const auto& [host, ks] : keys_of_host) {
    c.expect(ks.size() == 1, "host '" + host + "' has several node keys");
  }
}

void check_allgather(Bootstrap& boot, int round_base, Checker& c) {
  const int rank = boot.rank();
  const auto size = static_cast<std::size_t>(boot.size());
  int round = round_base;
  // PMIx carries every block ever published through each later fence (Open MPI 4.1 collects a
  // process's whole store), so it gets small blocks only; MPI gets a large one too.
  std::vector<std::size_t> lens = {0, 1, 3, 8, 1000, 65536 + 7};
  if (std::string(boot.name()) == "mpi") lens.push_back((std::size_t{1} << 24) + 3);
  for (std::size_t len : lens) {
    const Bytes mine = block(rank, round, len);
    Bytes all(len * size);
    boot.allgather(mine.data(), all.data(), len);
    for (std::size_t r = 0; r < size; ++r) {
      const Bytes want = block(static_cast<int>(r), round, len);
      c.expect(std::memcmp(all.data() + r * len, want.data(), len) == 0,
               "allgather of " + std::to_string(len) + " bytes: block of rank " +
                   std::to_string(r) + " is wrong");
    }
    ++round;
  }

  // In place: this rank's block already sits at its slot of `all`.
  {
    const std::size_t len = 37;
    Bytes all(len * size);
    const Bytes mine = block(rank, round, len);
    std::memcpy(all.data() + static_cast<std::size_t>(rank) * len, mine.data(), len);
    boot.allgather(all.data() + static_cast<std::size_t>(rank) * len, all.data(), len);
    for (std::size_t r = 0; r < size; ++r) {
      const Bytes want = block(static_cast<int>(r), round, len);
      c.expect(std::memcmp(all.data() + r * len, want.data(), len) == 0,
               "in-place allgather: block of rank " + std::to_string(r) + " is wrong");
    }
    ++round;
  }

  // Many small rounds back to back: each must see its own round's values.
  for (int i = 0; i < 100; ++i, ++round) {
    const std::int64_t mine = std::int64_t{round} * 1000 + rank;
    std::vector<std::int64_t> all(size);
    boot.allgather(&mine, all.data(), sizeof(mine));
    for (std::size_t r = 0; r < size; ++r) {
      if (all[r] != std::int64_t{round} * 1000 + static_cast<std::int64_t>(r)) {
        c.expect(false, "small allgather round " + std::to_string(round) + ": wrong value from " +
                            std::to_string(r));
        break;
      }
    }
  }

  // Different lengths per rank, rank 0 empty; then everyone empty.
  auto len_of = [&](std::size_t r) { return (r * r * 7 + static_cast<std::size_t>(round)) % 5000; };
  const auto got = lanes::transport::allgatherv(
      boot, block(rank, round, rank == 0 ? 0 : len_of(static_cast<std::size_t>(rank))));
  c.expect(got.size() == size, "allgatherv returned " + std::to_string(got.size()) + " blocks");
  for (std::size_t r = 0; r < got.size(); ++r) {
    c.expect(got[r] == block(static_cast<int>(r), round, r == 0 ? 0 : len_of(r)),
             "allgatherv: block of rank " + std::to_string(r) + " is wrong");
  }
  const auto none = lanes::transport::allgatherv(boot, {});
  c.expect(none.size() == size, "empty allgatherv returned " + std::to_string(none.size()));
  for (const auto& b : none) c.expect(b.empty(), "empty allgatherv returned a non-empty block");
}

std::unique_ptr<Bootstrap> make(const std::string& kind) {
#if BOOTSTRAP_CHECK_MPI
  if (kind == "mpi") return lanes::transport::make_mpi_bootstrap(MPI_COMM_WORLD);
#endif
  return lanes::transport::make_pmix_bootstrap();
}

template <typename F>
void expect_error(Checker& c, F&& f, lanes::Errc code, const std::string& needle) {
  try {
    f();
    c.expect(false, "no lanes::Error thrown where one mentioning '" + needle + "' was due");
  } catch (const lanes::Error& e) {
    c.expect(e.code() == code && std::string(e.what()).find(needle) != std::string::npos,
             std::string("unexpected error: ") + e.what());
  }
}

#if BOOTSTRAP_CHECK_MPI
// make_mpi_bootstrap's argument checks, and a bootstrap over half of the job.
void check_mpi_communicators(Checker& c) {
  using lanes::transport::make_mpi_bootstrap;
  expect_error(
      c, [] { make_mpi_bootstrap(MPI_COMM_NULL); }, lanes::Errc::invalid_argument, "MPI_COMM_NULL");
  int world_rank = 0;
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size < 2) return;

  const int parity = world_rank % 2;
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, parity, world_rank, &half);
  MPI_Comm inter = MPI_COMM_NULL;
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, parity == 0 ? 1 : 0, 7, &inter);
  expect_error(
      c, [&] { make_mpi_bootstrap(inter); }, lanes::Errc::invalid_argument, "inter-communicator");
  MPI_Comm_free(&inter);
  {
    auto sub = make_mpi_bootstrap(half);
    c.expect(sub->rank() == world_rank / 2 && sub->size() == (world_size + 1 - parity) / 2,
             "bootstrap over half the job: rank " + std::to_string(sub->rank()) + " size " +
                 std::to_string(sub->size()));
    check_identity(*sub, "mpi", c, false);
    check_allgather(*sub, 3000, c);
  }
  MPI_Comm_free(&half);
}
#endif

int run(const std::string& kind) {
  Checker c;
  std::string line;
  try {
    auto boot = make(kind);
    check_identity(*boot, kind, c);
    check_allgather(*boot, 0, c);
    {
      // A second bootstrap alive next to the first: its rounds restart at its own first key.
      auto second = make(kind);
      c.expect(second->rank() == boot->rank() && second->size() == boot->size(),
               "a second bootstrap sees a different rank or size");
      check_allgather(*second, 1000, c);
    }
    check_allgather(*boot, 2000, c);
#if BOOTSTRAP_CHECK_MPI
    if (kind == "mpi") check_mpi_communicators(c);
#endif

    const auto p = boot->placement();
    line = "bootstrap_check " + kind + " OK rank=" + std::to_string(boot->rank()) +
           " size=" + std::to_string(boot->size()) + " node=" + p.node_key +
           " local=" + std::to_string(p.local_rank) + "/" + std::to_string(p.local_size);
  } catch (const std::exception& e) {
    c.problems.push_back(std::string("exception: ") + e.what());
  }
  if (!c.problems.empty()) {
    for (const auto& problem : c.problems) {
      std::fprintf(stderr, "bootstrap_check %s FAILED: %s\n", kind.c_str(), problem.c_str());
    }
    return 1;
  }
  std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kind = argc > 1 ? argv[1] : "";
  if (kind == "pmix") return run(kind);
#if BOOTSTRAP_CHECK_MPI
  if (kind == "mpi") {
    // Before MPI_Init and after MPI_Finalize the MPI bootstrap must refuse, not crash.
    auto refused = [] {
      try {
        lanes::transport::make_mpi_bootstrap(MPI_COMM_WORLD);
      } catch (const lanes::Error& e) {
        return e.code() == lanes::Errc::bootstrap;
      }
      return false;
    };
    if (lanes::transport::mpi_active() || !refused()) {
      std::fprintf(stderr, "bootstrap_check mpi FAILED: MPI bootstrap accepted before MPI_Init\n");
      return 1;
    }
    MPI_Init(&argc, &argv);
    const int rc = run(kind);
    // A failed rank exits without MPI_Finalize so that the launcher ends the job instead of
    // leaving the others waiting in a collective.
    if (rc != 0) return rc;
    MPI_Finalize();
    if (lanes::transport::mpi_active() || !refused()) {
      std::fprintf(stderr,
                   "bootstrap_check mpi FAILED: MPI bootstrap accepted after MPI_Finalize\n");
      return 1;
    }
    return 0;
  }
#endif
  std::fprintf(stderr, "usage: %s pmix%s\n", argv[0], BOOTSTRAP_CHECK_MPI ? "|mpi" : "");
  return 1;
}
