// Two-level broadcast: binomial among node leaders, then binomial on every node.
//
// Source: the common hierarchical (SMP-aware) broadcast, as in MPICH's
// MPIR_Bcast_intra_smp and Open MPI's coll/han (a leader per node, an inter-node stage and an
// intra-node stage).
//
// Phases: each node's leader is its local rank 0, on the root's node the root itself.
//  1. Binomial broadcast (as bcast/binomial.cpp) of the whole message among the N leaders,
//     numbered by node relative to the root's node, over the rails; a leader is the only rank of
//     its node off the node, so it stripes over all of the node's lanes; ceil(log2 N) rounds.
//  2. On every node a binomial broadcast from the leader over the node's ranks, numbered by local
//     rank relative to the leader (shared memory); ceil(log2 n) rounds for a node of n ranks,
//     labelled after those of phase 1. Where the node's ranks span D NUMA domains, binomial
//     among the domains' leaders and then inside every domain (algos/node_bcast.hpp), so that
//     D - 1 copies cross between NUMA nodes. A leader starts it as soon as it holds the data,
//     alongside its own phase-1 sends.
//
// Cost: ceil(log2 N) + ceil(log2 n_max) rounds for N nodes of at most n_max ranks;
// ceil(log2 N) (alpha + beta m) between nodes plus ceil(log2 n) (alpha' + beta' m) on a node for
// m bytes. Exactly N - 1 messages of m bytes cross nodes.
//
// Applies: any p and any layout, irregular ones too. Minimises traffic between nodes; one rank
// per node drives the network, over every lane of the node.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/node_bcast.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_bcast_hierarchical(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "hierarchical", true);
  const int p = layout.size;
  Schedule s;
  if (p == 1 || args.bytes == 0) return s;
  const int num_nodes = layout.num_nodes();
  const int root_node = layout.node_of[args.root];
  int on_node_rounds = 0;
  for (int u = 0; u < num_nodes; ++u) {
    on_node_rounds = std::max(on_node_rounds, node_bcast_rounds(layout, u));
  }
  const int inter_rounds = ceil_log2(num_nodes);
  s.rounds = inter_rounds + on_node_rounds;
  const int me = args.rank;
  const int node = layout.node_of[me];
  const auto leader = [&](int x) { return x == root_node ? args.root : layout.node_ranks[x][0]; };
  const Region data{Buffer::recv, 0, args.bytes};
  std::vector<OpId> held;  // the receive of the data between nodes, if any

  // 1. Among leaders, over all of a node's lanes.
  if (me == leader(node)) {
    const int u = (node - root_node + num_nodes) % num_nodes;
    const auto rank_of = [&](int w) { return leader((w + root_node) % num_nodes); };
    const auto all = [&](int, const TreeEdge&) { return layout.all_lanes(); };
    const TreeBcast among =
        append_binomial_bcast(s, BinomialTree(num_nodes), u, 0, rank_of, all, data);
    if (among.received) held = {*among.received};
  }

  // 2. On the node, from the leader, alongside the leader's phase-1 sends.
  append_node_bcast(s, layout, me, leader(node), inter_rounds, data, held);
  s.finalize();
  return s;
}

// Cost: ceil(log2 N) rounds of the whole message between node leaders (one flow per node), then
// ceil(log2 n) on-node rounds on the last node reached.
double cost_bcast_hierarchical(const CostInput& in, const MachineParams& m) {
  const auto c = static_cast<double>(in.bytes);
  double t = ceil_log(in.ppn, 2) * shm_time(c, m);
  // Among leaders a binomial tree whose copies leave together, over all of a node's lanes.
  for (int j = ceil_log(in.nodes, 2); j > 0; --j) {
    t += rail_time(m.overlapping(j) * c, 1.0, in, m, Spread::node);
  }
  return t;
}

const Algorithm algorithm_bcast_hierarchical{
    "hierarchical",
    Collective::bcast,
    build_bcast_hierarchical,
    nullptr,
    "binomial among node leaders, then binomial on every node",
    cost_bcast_hierarchical};

}  // namespace lanes::algos
