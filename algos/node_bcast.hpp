// A broadcast among the ranks of one node over shared memory, from one of them: binomial over the
// node's ranks numbered from the source; where the ranks span several NUMA domains
// (algos/numa_domains.hpp), binomial among the domains' leaders first (the source leads its own
// domain, every other domain its first local rank), then binomial inside every domain from its
// leader, so that D - 1 copies cross between NUMA nodes (leaders per NUMA node, after S. Li,
// T. Hoefler, M. Snir, "NUMA-aware shared-memory collective communication for MPI", HPDC 2013).
#pragma once

#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

// Rounds of append_node_bcast() on `node`: ceil(log2 n), or ceil(log2 D) + ceil(log2 m) for D
// domains of at most m ranks.
int node_bcast_rounds(const Layout& layout, int node);

// Appends rank `me`'s part of a broadcast of `data` from `source` on their node, in rounds from
// `first_round` (node_bcast_rounds of them); the source sends once `held` completed.
TreeBcast append_node_bcast(Schedule& s, const Layout& layout, int me, int source, int first_round,
                            Region data, std::vector<OpId> held = {});

}  // namespace lanes::algos
