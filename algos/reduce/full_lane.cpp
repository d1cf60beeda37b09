// Full-lane reduce: a reduce-scatter on every node, n concurrent reduces between the nodes (one
// per local rank, each on its own lanes) toward the root's node, a gather of the parts at the
// root.
//
// Source: the full-lane construction of J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter,
// and Alltoall Algorithms" (2020), carried over to reduce: every local rank works on 1/n of the
// vector, so all n ranks of a node and the lanes they drive move data between nodes at once; the
// node phase is the partitioned shared-memory reduction of S. Li, T. Hoefler, C. Hu, M. Snir,
// "Improved MPI collectives for MPI processes in shared address spaces" (Cluster Computing 17,
// 2014) (algos/node_phases.hpp); between nodes, a binomial tree (R. Thakur, R. Rabenseifner,
// W. Gropp, IJHPCA 19(1), 2005). On one node it is the partitioned reduce-scatter followed by
// the gather at the root, each chunk sent on as soon as it is combined.
//
// Phases, for N nodes of n ranks and a vector of m bytes cut into n parts (part i:
// vector_part(i)); local rank i of node u, the root local rank ir of node ur:
//  1. Node reduce-scatter: local rank i combines part i of every local rank's input, in local
//     order, into its partial (the root: straight into its result).
//  2. Between nodes: the local ranks i of all nodes reduce part i along a binomial tree over the
//     nodes numbered relative to ur (v = (u - ur) mod N): in round j a node with bit j of v set
//     sends its partial to node v - 2^j and is done; one with a child v + 2^j combines the
//     child's partial on the right of its own.
//  3. Gather on the root's node: local rank i != ir sends part i to the root, which receives it
//     into part i of its result.
// Every part is combined in one fixed order, so the result does not depend on timing.
//
// Cost: (n - 1) (K alpha_shm + max(beta_shm, gamma) m / n) on the node (K chunks of a part, each
// peer's combined as it arrives: node_combine_time),
// ceil(log2 N) (alpha + beta (m / n) / B_n + gamma m / n) between nodes (the n flows of a node
// share its lanes, B_n each), and (n - 1) (alpha_shm + beta_shm m / n) into the root. Against a
// binomial reduce over all p ranks, every rank combines and moves 1/n of the vector.
//
// Order: local ranks in order on each node, nodes in order relative to the root's node: rank
// order when every node holds consecutive ranks and the root is on node 0.
//
// Applies: regular layouts (every node holds n ranks).
#include <algorithm>
#include <cmath>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/node_phases.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_full_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "full-lane", true);
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const int u = layout.node_of[r];
  const auto& mates = layout.node_ranks[static_cast<std::size_t>(u)];
  const int n = static_cast<int>(mates.size());
  const int nodes = layout.num_nodes();
  const int i = layout.local_rank_of[r];
  const int ur = layout.node_of[args.root];
  const int ir = layout.local_rank_of[args.root];
  const bool root = r == args.root;
  const auto part = [&](int j) { return vector_part(m, args.elem, n, j); };
  const auto in_send = [&](int j) { return Region{Buffer::send, part(j).offset, part(j).bytes}; };
  const auto in_recv = [&](int j) { return Region{Buffer::recv, part(j).offset, part(j).bytes}; };
  const std::size_t mine = part(i).bytes;
  // Scratch: the bounce area, the partial (not at the root), phase 2's incoming partial.
  const std::size_t bounce = node_bounce_bytes(layout, mates, i, part(0).bytes, args.elem);
  const std::size_t partial_at = bounce;
  const std::size_t incoming_at = partial_at + (root ? 0 : part(0).bytes);
  s.scratch_bytes = incoming_at + (nodes > 1 ? part(0).bytes : 0);
  const int levels = ceil_log2(nodes);
  s.rounds = 2 + levels;
  const int last_round = s.rounds - 1;
  const LaneSet lanes = layout.lanes_of[r];
  const Region partial = root ? in_recv(i) : Region{Buffer::scratch, partial_at, mine};

  // 1. Node reduce-scatter.
  const NodeReduceScatter rs =
      node_reduce_scatter(s, layout, mates, i, in_send, partial, 0, 0, args.elem);
  std::vector<OpId> ready = rs.done;

  // 2. Between nodes, among the local ranks i; node v's partial travels at most once.
  bool sent_on = false;
  if (nodes > 1 && mine > 0) {
    const int v = (u - ur + nodes) % nodes;
    const auto peer = [&](int rel) {
      const auto node = static_cast<std::size_t>((rel + ur) % nodes);
      return layout.node_ranks[node][static_cast<std::size_t>(i)];
    };
    const Region incoming{Buffer::scratch, incoming_at, mine};
    std::vector<OpId> before = rs.done;
    const BinomialTree tree(nodes);
    for (const TreeEdge& edge : tree.children_upward(v)) {
      const int child = peer(edge.member);
      const OpId in = s.recv(child, layout.lanes_of[child], incoming, before, 1 + edge.up_round());
      before.push_back(in);
      before = {s.combine(incoming, partial, before)};
    }
    if (const auto up = tree.parent(v)) {
      s.send(peer(up->member), lanes, partial, before, 1 + up->up_round());
      sent_on = true;
    }
    ready = before;
  }

  // 3. Gather on the root's node.
  if (u == ur && !sent_on) {
    const std::size_t chunk = node_chunk_bytes(n, args.elem);
    if (!root) {
      const int to = args.root;
      if (nodes == 1) {
        for (std::size_t c = 0; c < rs.chunks.size(); ++c) {
          s.send(to, lanes, rs.chunks[c], {rs.done[c]}, last_round);
        }
      } else if (mine > 0) {
        s.send(to, lanes, partial, ready, last_round);
      }
    } else {
      for (int j = 0; j < n; ++j) {
        if (j == ir) continue;
        const int from = mates[static_cast<std::size_t>(j)];
        const std::vector<Region> pieces =
            nodes == 1 ? chunks_of(in_recv(j), chunk) : std::vector<Region>{in_recv(j)};
        // In place, each piece overwrites input that a phase 1 send reads.
        const auto& before = rs.sent[static_cast<std::size_t>(j)];
        for (std::size_t c = 0; c < pieces.size(); ++c) {
          const std::vector<OpId> after =
              nodes == 1 && c < before.size() ? std::vector<OpId>{before[c]} : before;
          if (pieces[c].bytes > 0)
            s.recv(from, layout.lanes_of[from], pieces[c], after, last_round);
        }
      }
    }
  }
  s.finalize();
  return s;
}

double cost_reduce_full_lane(const CostInput& in, const MachineParams& m) {
  if (in.p() <= 1) return 0;
  const auto n = static_cast<double>(in.ppn);
  const double part = static_cast<double>(in.bytes) / n;
  const double chunks =
      std::max(1.0, std::ceil(part / static_cast<double>(node_chunk_bytes(static_cast<int>(n)))));
  const double node =
      (n - 1) * ((chunks - 1) * m.alpha_shm + node_combine_time(part, m) + shm_time(part, m));
  int levels = 0;
  while ((1LL << levels) < in.nodes) ++levels;
  return node + levels * (rail_time(part, n, in, m) + combine_time(part, m));
}

const Algorithm algorithm_reduce_full_lane{
    "full-lane",
    Collective::reduce,
    build_reduce_full_lane,
    regular_layout,
    "node reduce-scatter, n concurrent binomial reduces of m/n between nodes, gather at root",
    cost_reduce_full_lane,
    rank_order_on_consecutive_nodes_and_domains_root_node_zero};

}  // namespace lanes::algos
