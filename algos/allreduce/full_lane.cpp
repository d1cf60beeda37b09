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
//  1. Node reduce-scatter (shared memory): send part j of the input to local rank j for every
//     j != i; receive part i of every other local rank's input into scratch; combine all n
//     contributions in local-rank order into part i of the result.
//  2. Between nodes: with the local ranks i of all nodes, recursive doubling on part i over the
//     nodes (a fold onto the largest power of two when N is not one), the lower node's partial
//     on the left, over the lanes this rank drives.
//  3. Node allgather (shared memory): send part i of the result to every other local rank;
//     receive every other part from its owner.
// Every node combines its contributions in the same order and the nodes' partials pair the same
// way everywhere, so every rank ends with the same bits.
//
// Cost: (n - 1) (alpha_shm + beta_shm m / n) + (n - 1) gamma m / n on the node, then
// log2 N (alpha + beta (m / n) / B_n + gamma m / n) between nodes, where the n concurrent flows
// of a node share its lanes (B_n each), plus two hops and a combine when N is not a power of
// two, then (n - 1) (alpha_shm + beta_shm m / n) for the allgather. Against recursive doubling
// over all p ranks it moves 1/n of the vector per rank between nodes, on every lane at once.
//
// Applies: regular layouts (every node holds n ranks).
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
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
  const std::size_t slot = part(0).bytes;  // the largest part
  const auto in_send = [&](int j) { return Region{Buffer::send, part(j).offset, part(j).bytes}; };
  const auto in_recv = [&](int j) { return Region{Buffer::recv, part(j).offset, part(j).bytes}; };
  // Scratch: one slot per local rank (phase 1's contributions, this rank's own input included),
  // then one for phase 2's incoming partial.
  const auto scratch = [&](int l, std::size_t bytes) {
    return Region{Buffer::scratch, static_cast<std::size_t>(l) * slot, bytes};
  };
  s.scratch_bytes = static_cast<std::size_t>(n + 1) * slot;
  const int levels = floor_log2(nodes);
  const int q = 1 << levels;
  const int extra = nodes - q;
  const int first = 1 + (extra > 0 ? 1 : 0);  // the first doubling round
  s.rounds = 2 + levels + (extra > 0 ? 2 : 0);
  const int last_round = s.rounds - 1;
  const LaneSet lanes = layout.lanes_of[r];
  const std::size_t mine = part(i).bytes;
  const Region result = in_recv(i);

  // 1. Node reduce-scatter.
  std::vector<OpId> sent;
  std::vector<OpId> have;
  for (int j = 0; j < n; ++j) {
    if (j == i || part(j).bytes == 0) continue;
    sent.push_back(s.send(mates[static_cast<std::size_t>(j)], lanes, in_send(j), {}, 0));
  }
  OpId last = 0;
  if (mine > 0) {
    for (int l = 0; l < n; ++l) {
      const int from = mates[static_cast<std::size_t>(l)];
      have.push_back(l == i ? s.copy(in_send(i), scratch(l, mine))
                            : s.recv(from, layout.lanes_of[from], scratch(l, mine), {}, 0));
    }
    // In place, the result overwrites the input: after the input's part i is in scratch.
    last = s.copy(scratch(0, mine), result, {have[0], have[static_cast<std::size_t>(i)]});
    for (int l = 1; l < n; ++l) last = s.combine(scratch(l, mine), result, {last, have[l]});

    // 2. Between nodes, among the local ranks i.
    const auto peer = [&](int node) {
      return layout.node_ranks[static_cast<std::size_t>(node)][static_cast<std::size_t>(i)];
    };
    const Region incoming = scratch(n, mine);
    if (u < 2 * extra && u % 2 == 1) {
      const OpId out = s.send(peer(u - 1), lanes, result, {last}, 1);
      last = s.recv(peer(u - 1), layout.lanes_of[peer(u - 1)], result, {out}, last_round - 1);
    } else {
      if (u < 2 * extra) {
        const OpId in = s.recv(peer(u + 1), layout.lanes_of[peer(u + 1)], incoming, {}, 1);
        last = s.combine(incoming, result, {last, in});
      }
      const auto real = [extra](int v) { return v < extra ? 2 * v : v + extra; };
      const int v = u < 2 * extra ? u / 2 : u - extra;
      for (int j = 0; j < levels; ++j) {
        const int partner = peer(real(v ^ (1 << j)));
        const bool lower = (v & (1 << j)) == 0;
        const OpId out = s.send(partner, lanes, result, {last}, first + j);
        const OpId in = s.recv(partner, layout.lanes_of[partner], incoming, {last}, first + j);
        last = s.combine(incoming, result, {out, in}, !lower);
      }
      if (u < 2 * extra) {
        last = s.send(peer(u + 1), lanes, result, {last}, last_round - 1);
      }
    }
  }

  // 3. Node allgather: part i out to every local rank, every other part in, after phase 1's
  // sends of it left (in place they read the same bytes).
  for (int j = 0; j < n; ++j) {
    if (j == i) continue;
    const int to = mates[static_cast<std::size_t>(j)];
    if (mine > 0) s.send(to, lanes, result, {last}, last_round);
    if (part(j).bytes > 0) s.recv(to, layout.lanes_of[to], in_recv(j), sent, last_round);
  }
  s.finalize();
  return s;
}

double cost_allreduce_full_lane(const CostInput& in, const MachineParams& m) {
  if (in.p() <= 1) return 0;
  const auto n = static_cast<double>(in.ppn);
  const double part = static_cast<double>(in.bytes) / n;
  const double node =
      (n - 1) * (shm_time(part, m) + combine_time(part, m)) + (n - 1) * shm_time(part, m);
  if (in.nodes <= 1) return node;
  int levels = 0;
  while ((2LL << levels) <= in.nodes) ++levels;
  const bool folded = (1LL << levels) != in.nodes;
  const double hop = rail_time(part, n, in, m);
  return node + levels * (hop + combine_time(part, m)) +
         (folded ? 2 * hop + combine_time(part, m) : 0);
}

}  // namespace lanes::algos
