// lanes::Runtime: bootstraps the processes, opens the rails and the node's shared memory, and
// owns them until it is destroyed (or finalize() is called). Movable, not copyable.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <lanes/communicator.hpp>
#include <lanes/memory.hpp>

namespace lanes {

namespace detail {
class RuntimeImpl;
}

// Bootstrap through a framework's own key-value store or collectives: every rank calls
// `allgather(mine, all, bytes)`, which must leave rank r's `bytes` bytes at all + r * bytes.
struct AllgatherBootstrap {
  int rank = 0;
  int size = 1;
  std::function<void(const void* mine, void* all, std::size_t bytes)> allgather;
  std::string node_name;  // ranks with equal names share a node; empty: this host's name
};

// Names of the algorithms lanes has for a collective ("bcast", "scatter", "gather", "alltoall",
// "allgather", the reductions, "barrier", "scatterv", "gatherv", "allgatherv", "alltoallv"), as
// accepted by CallOptions::algorithm (and LANES_<COLLECTIVE>_ALGORITHM for all but the
// v-variants); the first of a v-variant is its default. Empty for an unknown collective.
std::vector<std::string> algorithms(std::string_view collective);

class Runtime {
 public:
  // Uses PMIx when a PMIx server launched this process (mpirun, prterun, srun --mpi=pmix), else
  // MPI when MPI is initialized, else runs as a single process. A bootstrap that is present but
  // fails throws lanes::Error saying which one and why.
  static Runtime init();
  static Runtime init(AllgatherBootstrap bootstrap);

  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  // Collective: finalizes if finalize() was not called. Never throws.
  ~Runtime();

  Communicator world() const;
  // Collective. Releases rails, shared memory and the bootstrap; later use of any communicator
  // of this runtime throws lanes::Error(finalized). Idempotent.
  void finalize();

  // "pmix", "mpi", "allgather" or "single".
  std::string bootstrap_name() const;
  // Multi-line description: nodes, ranks, rails and which rank drives which rail.
  std::string describe() const;
  // The same as a JSON document, for scripts and job prologues: "ranks", "lanes", "nodes" (each
  // with "host", "rails" and "ranks": rank, local_rank, numa, lanes, rails), "bootstrap",
  // "progress", "on_node_copies" and "this_process" (its rank and rails with UCX transports).
  std::string describe_json() const;
  // Rails (NICs) this process drives off its node: lanes' default number of lanes, and the
  // range of CallOptions::first_rail.
  int num_rails() const;
  // `bytes` (whole pages, page-aligned, zero-filled when first used) from this process's shared
  // heap, which the node's other processes read in place (lanes::Memory); ordinary memory where
  // the heap is off or full. Throws lanes::Error(resource) when neither can be had. Thread-safe.
  Memory allocate(std::size_t bytes) const;

 private:
  explicit Runtime(std::shared_ptr<detail::RuntimeImpl> impl);
  friend class detail::RuntimeImpl;
  std::shared_ptr<detail::RuntimeImpl> impl_;
};

}  // namespace lanes
