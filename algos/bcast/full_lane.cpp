// Full-lane broadcast: scatter on the root's node, n concurrent broadcasts between nodes, ring
// allgather on every node.
//
// Source: J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms" (2020),
// after the full-lane algorithms of J. L. Träff, "Decomposing Collectives for Exploiting
// Multi-lane Communication" (arXiv:1910.13373, 2019).
//
// Phases: N nodes of n ranks each. Local ranks are numbered relative to the root's local rank,
// v = (local rank - root's local rank + n) mod n, the same on every node, and the message is cut
// into n blocks whose sizes differ by at most one byte (block v at its place in the receive
// buffer; with fewer bytes than n the last blocks are empty and travel nowhere).
//  1. Binomial scatter of the n blocks over the root's node (as scatter/binomial.cpp, over v):
//     ceil(log2 n) rounds; v ends with block v (and the rest of its subtree).
//  2. n concurrent broadcasts between nodes: local rank i of the root's node sends its block v to
//     local rank i of every other node by a binomial tree over nodes numbered relative to the
//     root's node, over the lanes the sender drives (lane i mod k for n >= k; all lanes with one
//     rank per node); ceil(log2 N) rounds.
//  3. Ring allgather of the n blocks on every node over v (step s = 0..n-2: block (v - s) mod n
//     from v to v + 1), shared memory; n - 1 rounds. Ranks of other nodes start it as soon as
//     their block arrived.
//
// Cost: ceil(log2 n) + ceil(log2 N) + n - 1 rounds. For m bytes: the scatter
// ceil(log2 n) alpha' + beta' m (n - 1) / n on the root's node, between nodes
// ceil(log2 N) (alpha + beta m / n) per rank with the n ranks of a node sending at once over the
// k lanes (ideally ceil(log2 N) (alpha + beta m / k) per node), and the allgather
// (n - 1) (alpha' + beta' m / n). (N - 1) m bytes cross nodes in all, as with hierarchical.
//
// Applies: regular layouts only (every node n ranks). Aimed at large messages on multi-lane
// nodes: every rank of a node drives its share of the inter-node traffic.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/bcast/message_blocks.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_bcast_full_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "full-lane", true);
  const int p = layout.size;
  const std::size_t m = args.bytes;
  Schedule s;
  if (p == 1 || m == 0) return s;
  const int num_nodes = layout.num_nodes();
  const int n = static_cast<int>(layout.node_ranks[0].size());
  const int scatter_rounds = ceil_log2(n);
  const int inter_rounds = ceil_log2(num_nodes);
  s.rounds = scatter_rounds + inter_rounds + n - 1;
  const int me = args.rank;
  const int node = layout.node_of[me];
  const int root_node = layout.node_of[args.root];
  const int i = layout.local_rank_of[me];
  const int base = layout.local_rank_of[args.root];
  const int v = (i - base + n) % n;
  const std::vector<int>& ranks = layout.node_ranks[node];
  const auto on_node = [&](int w) { return ranks[(w + base) % n]; };
  const LaneSet my_lane = layout.lanes_of[me];
  const Region mine = blocks(m, n, v, v + 1);

  // 1. Scatter on the root's node.
  std::optional<OpId> got;      // the receive of this rank's block (its subtree on the root's node)
  std::vector<OpId> scattered;  // every op of the scatter
  int first = v;                // this rank holds blocks [first, end) before the allgather
  int end = v + 1;
  if (node == root_node) {
    BlockScatter scatter = append_block_scatter(s, layout, n, v, m, on_node);
    got = scatter.received;
    scattered = std::move(scatter.ops);
    first = scatter.first;
    end = scatter.end;
  }

  // 2. Block v between nodes, among the ranks of local rank i, over the lanes each sender
  // drives.
  if (mine.bytes > 0) {
    const int u = (node - root_node + num_nodes) % num_nodes;
    const auto peer = [&](int w) { return layout.node_ranks[(w + root_node) % num_nodes][i]; };
    const auto driven = [&](int sender, const TreeEdge&) { return layout.lanes_of[sender]; };
    std::vector<OpId> after;
    if (got) after.push_back(*got);
    const TreeBcast tree = append_binomial_bcast(s, BinomialTree(num_nodes), u, scatter_rounds,
                                                 peer, driven, mine, after);
    if (tree.received) got = tree.received;
  }

  // 3. Ring allgather on the node.
  const int right = on_node((v + 1) % n);
  const int left = on_node((v + n - 1) % n);
  std::vector<OpId> prev;  // the receive of the previous step
  for (int step = 0; step < n - 1; ++step) {
    const int round = scatter_rounds + inter_rounds + step;
    const int b_out = (v - step + n) % n;
    const Region out = blocks(m, n, b_out, b_out + 1);
    if (out.bytes > 0) {
      std::vector<OpId> deps;
      if (step == 0 && got) deps.push_back(*got);
      if (step > 0) deps = prev;
      s.send(right, my_lane, out, deps, round);
    }
    const int b_in = (v - step - 1 + n) % n;
    const Region in = blocks(m, n, b_in, b_in + 1);
    prev.clear();
    if (in.bytes > 0) {
      // On the root's node a block this rank got in the scatter waits for the scatter's ops.
      const bool held = b_in >= first && b_in < end;
      prev = {
          s.recv(left, layout.lanes_of[left], in, held ? scattered : std::vector<OpId>{}, round)};
    }
  }
  s.finalize();
  return s;
}

// Cost: the binomial scatter of n blocks of c / n bytes on the root's node (its child 2^j ranks
// away gets min(2^j, n - 2^j) blocks), ceil(log2 N) rounds between nodes in which all n ranks of a
// node holding the data send their block at once (n flows over the rails), and n - 1 ring steps of
// one block on the node.
double cost_bcast_full_lane(const CostInput& in, const MachineParams& m) {
  const long long n = in.ppn;
  const double block = static_cast<double>(in.bytes) / static_cast<double>(n);
  double t = 0;
  for (long long dist = 1; dist < n; dist *= 2) {
    t += shm_time(static_cast<double>(std::min(dist, n - dist)) * block, m);
  }
  // Between nodes n binomial trees at once (n flows per node), each subtree root's copies leaving
  // together.
  for (int j = ceil_log(in.nodes, 2); j > 0; --j) {
    t += rail_time(m.overlapping(j) * block, static_cast<double>(n), in, m);
  }
  return t + static_cast<double>(n - 1) * shm_time(block, m);
}

const Algorithm algorithm_bcast_full_lane{
    "full-lane",
    Collective::bcast,
    build_bcast_full_lane,
    regular_layout,
    "scatter on the root's node, n concurrent bcasts between nodes, allgather on every node",
    cost_bcast_full_lane};

}  // namespace lanes::algos
