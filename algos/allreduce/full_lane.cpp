// Full-lane allreduce: a reduce-scatter on every node, n concurrent allreduces between the
// nodes (one per local rank, each on its own lanes), an allgather on every node.
//
// Source: the full-lane construction of J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter,
// and Alltoall Algorithms" (2020), carried over to allreduce: every local rank works on 1/n of
// the vector so that all n ranks (and the k lanes they drive) of a node move data between nodes
// at once; the node phases follow the partitioned shared-memory allreduce of S. Li, T. Hoefler,
// C. Hu, M. Snir, "Improved MPI collectives for MPI processes in shared address spaces" (Cluster
// Computing 17, 2014), where each local rank reduces its slice of every peer's vector. Between
// nodes, recursive doubling (R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005).
//
// Phases, for N nodes of n ranks and a vector of m bytes cut into n parts at element boundaries
// (part i: vector_part(i)); local rank i of node u:
//  1. Node reduce-scatter (shared memory, algos/node_phases.hpp): send part j of the input to
//     local rank j for every j != i; receive part i of every other local rank's input, chunk by
//     chunk, into a bounce area that stays in cache, and combine all n contributions in
//     local-rank order into part i of the result, starting from this rank's own input.
//  2. Between nodes: with the local ranks i of all nodes, recursive doubling on part i over the
//     nodes (a fold onto the largest power of two when N is not one), the lower node's partial
//     on the left, over the lanes this rank drives.
//  3. Node allgather (shared memory): send part i of the result to every other local rank;
//     receive every other part from its owner (chunk by chunk: on one node a chunk leaves as soon
//     as it is combined).
// Every node combines its contributions in the same order and the nodes' partials pair the same
// way everywhere, so every rank ends with the same bits.
//
// Cost: (n - 1) (K alpha_shm + beta_shm m / n) + (n - 1) gamma m / n on the node (K chunks of a
// part), then log2 N (alpha + beta (m / n) / B_n + gamma m / n) between nodes, where the n
// concurrent flows of a node share its lanes (B_n each), plus two hops and a combine when N is not
// a power of two, then (n - 1) (K alpha_shm + beta_shm m / n) for the allgather. Against recursive
// doubling over all p ranks it moves 1/n of the vector per rank between nodes, on every lane at
// once.
//
// Order: local ranks in order on each node (node_phases.hpp), the nodes in order between them
// (recursive doubling over the nodes, lower node left, the fold too): rank order when every node
// holds consecutive ranks.
//
// Applies: regular layouts (every node holds n ranks).
#include <algorithm>
#include <cmath>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/node_phases.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allreduce_full_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "full-lane", false);
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const int u = layout.node_of[r];
  const auto& mates = layout.node_ranks[static_cast<std::size_t>(u)];
  const int n = static_cast<int>(mates.size());
  const int nodes = layout.num_nodes();
  const int i = layout.local_rank_of[r];
  const auto part = [&](int j) { return vector_part(m, args.elem, n, j); };
  const auto in_send = [&](int j) { return Region{Buffer::send, part(j).offset, part(j).bytes}; };
  const auto in_recv = [&](int j) { return Region{Buffer::recv, part(j).offset, part(j).bytes}; };
  const std::size_t mine = part(i).bytes;
  // Scratch: phase 1's bounce area, then phase 2's incoming partial.
  const std::size_t bounce = node_bounce_bytes(layout, mates, i, part(0).bytes, args.elem);
  s.scratch_bytes = bounce + (nodes > 1 ? part(0).bytes : 0);
  const PowerOfTwoFold fold(nodes);
  const int levels = fold.levels;
  const int first = 1 + (fold.folded() ? 1 : 0);  // the first doubling round
  s.rounds = 2 + levels + (fold.folded() ? 2 : 0);
  const int last_round = s.rounds - 1;
  const LaneSet lanes = layout.lanes_of[r];
  const Region result = in_recv(i);

  // 1. Node reduce-scatter.
  const NodeReduceScatter rs =
      node_reduce_scatter(s, layout, mates, i, in_send, result, 0, 0, args.elem);
  std::vector<OpId> ready = rs.done;

  // 2. Between nodes, among the local ranks i.
  if (nodes > 1 && mine > 0) {
    OpId last = 0;
    const auto peer = [&](int node) {
      return layout.node_ranks[static_cast<std::size_t>(node)][static_cast<std::size_t>(i)];
    };
    const Region incoming{Buffer::scratch, bounce, mine};
    if (fold.sits_out(u)) {
      const OpId out = s.send(peer(u - 1), lanes, result, rs.done, 1);
      last = s.recv(peer(u - 1), layout.lanes_of[peer(u - 1)], result, {out}, last_round - 1);
    } else {
      std::vector<OpId> before = rs.done;
      if (fold.paired(u)) {
        const OpId in = s.recv(peer(u + 1), layout.lanes_of[peer(u + 1)], incoming, {}, 1);
        before.push_back(in);
        before = {s.combine(incoming, result, before)};
      }
      const int v = fold.virtual_of(u);
      for (int j = 0; j < levels; ++j) {
        const int partner = peer(fold.real(v ^ (1 << j)));
        const bool lower = (v & (1 << j)) == 0;
        const OpId out = s.send(partner, lanes, result, before, first + j);
        const OpId in = s.recv(partner, layout.lanes_of[partner], incoming, before, first + j);
        before = {s.combine(incoming, result, {out, in}, !lower)};
      }
      last = before[0];
      if (fold.paired(u)) {
        last = s.send(peer(u + 1), lanes, result, {last}, last_round - 1);
      }
    }
    ready = {last};
  }

  // 3. Node allgather: part i out to every local rank, every other part in, after phase 1's
  // sends of it left (in place they read the same bytes).
  node_allgather(s, layout, mates, i, rs.chunks, ready, in_recv, rs.sent, last_round, args.elem);
  s.finalize();
  return s;
}

double cost_allreduce_full_lane(const CostInput& in, const MachineParams& m) {
  if (in.p() <= 1) return 0;
  const auto n = static_cast<double>(in.ppn);
  const double part = static_cast<double>(in.bytes) / n;
  // Each peer's part arrives in chunks, every chunk a start-up of its own.
  const double chunks =
      std::max(1.0, std::ceil(part / static_cast<double>(node_chunk_bytes(static_cast<int>(n)))));
  const double peer = (chunks - 1) * m.alpha_shm + shm_time(part, m);
  const double node = (n - 1) * (peer + combine_time(part, m)) + (n - 1) * peer;
  if (in.nodes <= 1) return node;
  int levels = 0;
  while ((2LL << levels) <= in.nodes) ++levels;
  const bool folded = (1LL << levels) != in.nodes;
  const double hop = rail_time(part, n, in, m);
  return node + levels * (hop + combine_time(part, m)) +
         (folded ? 2 * hop + combine_time(part, m) : 0);
}

const Algorithm algorithm_allreduce_full_lane{
    "full-lane",
    Collective::allreduce,
    build_allreduce_full_lane,
    regular_layout,
    "node reduce-scatter, n concurrent allreduces of m/n between nodes, node allgather",
    cost_allreduce_full_lane,
    rank_order_on_consecutive_nodes_and_domains};

}  // namespace lanes::algos
