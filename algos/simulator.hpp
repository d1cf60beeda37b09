// Runs every rank's schedule of one collective call symbolically, moving real bytes between
// simulated buffers, and checks: each send matched by exactly one receive of equal size on the
// same lane, no deadlock (sends complete only when their receive is posted: rendezvous), no region
// outside its buffer, and every rank's output equal to the collective's definition. Reductions
// are simulated over 64-bit words combined by wrapping addition, every rank's input a hash: an
// output word equals the sum of every rank's word only if each contribution arrived exactly once.
// With `rank_order`, the words are affine maps modulo 2^32 combined by composition, the left
// operand first (associative, not commutative): an output word is right only if every
// contribution arrived exactly once and was combined in rank order (rank 0's first).
#pragma once

#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {

struct SimResult {
  bool ok = false;
  std::string error;   // first problem found, naming rank and op
  int max_rounds = 0;  // largest Schedule::rounds over ranks
  std::size_t messages = 0;
  std::size_t bytes_moved = 0;    // over all messages
  std::size_t offnode_bytes = 0;  // messages between different nodes
  // Messages on a node between ranks bound to different NUMA nodes (both known).
  std::size_t cross_numa_bytes = 0;
};

// Builds the schedules with `algo` for every rank and simulates them (reductions: `bytes` a
// multiple of 8, built with CollArgs::elem = 8).
SimResult simulate(const Algorithm& algo, const Layout& layout, int root, std::size_t bytes,
                   bool rank_order = false);

// Simulates already-built schedules (one per rank).
SimResult simulate_schedules(Collective coll, const Layout& layout, int root, std::size_t bytes,
                             const std::vector<Schedule>& schedules, bool rank_order = false);

// Builds and simulates a v-collective: `args[r]` is what rank r passes (its coll, rank and root
// are set here). Outputs must hold every block by the collective's definition and every other
// receive byte as it was. A local algorithm builds at ranks other than the root without the
// other ranks' sizes (they are zeroed for it).
SimResult simulate_v(const VAlgorithm& algo, const Layout& layout, int root,
                     const std::vector<VArgs>& args);

}  // namespace lanes::algos
