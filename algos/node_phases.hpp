// The shared-memory phases of node-aware reductions, for the local ranks of one node: a
// partitioned reduce-scatter, in which local rank i ends with part i of the node's combination,
// and an allgather of the parts. After S. Li, T. Hoefler, C. Hu, M. Snir, "Improved MPI
// collectives for MPI processes in shared address spaces" (Cluster Computing 17, 2014): every
// local rank reduces its 1/n slice straight from its peers' buffers, so the node's cores share
// the work and every byte is read once.
//
// Between processes, "straight from the peer's buffer" is a single-copy transfer (CMA) into a
// small bounce area that stays in cache: a part is cut into chunks of node_chunk_bytes(), each
// chunk of every peer lands in one of two bounce slots per peer and is combined into the result
// while the next chunk arrives. The combination of a chunk starts from this rank's own input
// (no copy of it) and keeps the local ranks' order of operands: c_0 (+) (c_1 (+) ... (c_{i-1}
// (+) c_i)) (+) c_{i+1} ... (+) c_{n-1}, one fixed order per part, so every rank that receives
// the part gets the same bits.
//
// NUMA-aware where the node's ranks are bound to several NUMA nodes (algos/numa_domains.hpp,
// after S. Li, T. Hoefler, M. Snir, "NUMA-aware shared-memory collective communication for MPI",
// HPDC 2013): the reduce-scatter runs in two levels. Inside each NUMA domain, every member
// combines its domain's contributions to its own part and to the parts of the other domains'
// ranks it stands for; then each rank combines the D domains' partials of its part, each sent by
// the rank standing for it in that domain, in domain order. The allgather sends each part into
// every other domain once, to the rank standing for its owner there, which forwards it to its
// domain's members. A node of D domains then moves (D - 1) m bytes across NUMA nodes in each
// phase, against (1 - 1/D) n m for the flat phases; the order is domain by domain, local order
// inside each (local order itself when every domain holds consecutive local ranks).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

// Chunk size of the node phases for n local ranks and elements of `elem` bytes: two bounce slots
// per peer stay within half a megabyte (a core's L2); a power of two between 16 KiB and 256 KiB,
// cut down to whole elements where elem does not divide it (at least one element).
std::size_t node_chunk_bytes(int n, std::size_t elem = 1);
// Scratch bytes node_reduce_scatter() uses at local rank i of `mates` (its bounce slots, and
// the partials it combines for other NUMA domains' ranks), for a largest part of `part_bytes` and
// elements of `elem` bytes.
std::size_t node_bounce_bytes(const Layout& layout, const std::vector<int>& mates, int i,
                              std::size_t part_bytes, std::size_t elem);
// Region r cut into consecutive chunks of at most `chunk` bytes (element-aligned: chunk and r are).
std::vector<Region> chunks_of(const Region& r, std::size_t chunk);

struct NodeReduceScatter {
  // sent[j]: per chunk, the op that last reads part j of this rank's input (its send to the rank
  // that combines it, or this rank's own combination of it).
  std::vector<std::vector<OpId>> sent;
  std::vector<Region> chunks;  // this rank's part of the result, chunk by chunk
  std::vector<OpId> done;      // per chunk: the op after which it holds the node's combination
};

// Local rank i of `mates` (communicator ranks of the node, in local order) combines part i of
// every mate's input into `result` (part i's size), using the scratch at offset `bounce_at`
// (node_bounce_bytes). input(j): region of part j of this rank's input. Every
// message in round `round`; chunks of whole `elem`-byte elements.
NodeReduceScatter node_reduce_scatter(Schedule& s, const Layout& layout,
                                      const std::vector<int>& mates, int i,
                                      const std::function<Region(int)>& input, Region result,
                                      std::size_t bounce_at, int round, std::size_t elem);

// Node allgather of parts: local rank i sends each chunk of `mine` to every mate (with several
// NUMA domains: to its domain and to the ranks standing for it in the others) once its op in
// `ready` completed (one per chunk, or one for all); receives part j's chunks into output(j),
// chunk c after sent[j][c] where there is one (in place, that op still reads what the chunk
// overwrites). Round `round`; chunks as node_reduce_scatter() cuts them for `elem`.
void node_allgather(Schedule& s, const Layout& layout, const std::vector<int>& mates, int i,
                    const std::vector<Region>& mine, const std::vector<OpId>& ready,
                    const std::function<Region(int)>& output,
                    const std::vector<std::vector<OpId>>& sent, int round, std::size_t elem);

}  // namespace lanes::algos
