// Prices a one-node call whose processes outnumber the node's cores. The closed-form costs
// (cost_model.hpp) assume a core per process: the ranks of a scatter tree copy in parallel, and a
// rank waiting for a message gets it as soon as it is sent. On shared cores neither holds: every
// copy of every process queues for the same few cores, and a process that waited for a message
// runs only once the scheduler hands it a core (its peers yield to it). Four processes on two
// cores, 40 KB per block: scatter through a binomial tree took 27 us, the root sending every block
// itself 10 us.
//
// So the price comes from the schedules themselves, built for every rank of the node and run as
// a list schedule on C cores:
// - each process runs its ops one at a time, in the order they become ready, on the first core
//   free;
// - a message of m bytes costs the sender alpha_shm / 2 + m * beta_shm to copy it into the node
//   segment and the receiver as much to copy it out, once the sender is done (staged); from
//   SingleCopyFrom::any bytes the receiver copies it alone, alpha_shm + m * beta_shm * slowdown
//   (single copy, at the kernel's rate), and from SingleCopyFrom::exchange bytes where its sender
//   sends all its node messages before it receives any (the executor's rule); a local copy costs
//   m * beta_shm, a combine m * gamma;
// - a process that waited for a message pays `handoff` before it runs again.
// The price is the time the last op finishes.
#pragma once

#include <cstddef>
#include <vector>

#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

// The least sizes of single-copy messages on the node; 0: none.
struct SingleCopyFrom {
  std::size_t any = 0;       // every message
  std::size_t exchange = 0;  // a message whose sender sends all at once before it receives
  // A single copy's time per byte over beta_shm's: the kernel's copy of a peer's pages against
  // memcpy, as the node's processes time it at start-up (1: the same rate).
  double slowdown = 1.0;
};

struct SharedCoreRun {
  double seconds = 0;  // when the last op finishes; infinite when the schedules do not finish
  double work_s = 0;   // the copy work of every process, in seconds of one core
  int handoffs = 0;    // times a process waited for a message
};

// Runs `algo` over a one-node `layout` (root 0; reductions over the largest element size of 8, 4,
// 2 or 1 bytes that divides `bytes`) on `cores` cores.
SharedCoreRun shared_core_run(const Algorithm& algo, const Layout& layout, std::size_t bytes,
                              const MachineParams& m, int cores, SingleCopyFrom single_copy);

struct SharedCoreCandidate {
  Prediction prediction;  // priced by the run
  SharedCoreRun run;
};
// The candidates of `ranking` (predict()'s) that apply to `layout`, each priced by its run on
// `cores` cores, cheapest first.
std::vector<SharedCoreCandidate> rank_on_shared_cores(const std::vector<Prediction>& ranking,
                                                      Collective coll, const Layout& layout,
                                                      std::size_t bytes, const MachineParams& m,
                                                      int cores, SingleCopyFrom single_copy);

}  // namespace lanes::algos
