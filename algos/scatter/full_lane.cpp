// Full-lane scatter.
//
// Source: J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms" (2020),
// the full-lane scatter (after J. L. Träff, S. Hunold, "Decomposing MPI Collectives for
// Exploiting Multi-lane Communication", CLUSTER 2020).
//
// Phases, for N nodes of n ranks each, the root being local rank lr of node R, local ranks and
// nodes numbered relative to them (vi = (i - lr) mod n, vm = (m - R) mod N):
//   0. The root packs its send buffer into scratch as n super-blocks of N blocks each: super-block
//      vi holds, in vm order, the blocks of local rank vi of every node.
//   1. Binomial scatter of the super-blocks on the root's node (ceil(log2 n) rounds): local rank
//      vi of the root's node ends up with its super-block at the start of its scratch.
//   2. n concurrent binomial scatters over the nodes (ceil(log2 N) rounds): local rank vi of the
//      root's node scatters its super-block to local rank vi of every node. Intermediate ranks
//      keep their subtree's blocks in scratch in vm order; leaves receive straight into the
//      receive buffer. Each message uses its sender's default lane (local rank i mod k in the
//      standard lane assignment), so the n scatters spread over all k lanes.
// Each rank's sends are chained (one-ported), as in the binomial scatter.
//
// Cost: (ceil(log2 n) + ceil(log2 N)) * alpha + beta_node * m * (n - 1) / n
//       + beta_lane * (m / n) * (N - 1) / N * n / k for m = p * block bytes (on-node step, then
// n scatters of m / n bytes sharing k lanes); the data leaving the root's node is
// m - m / N = (N - 1) * n * block bytes, the least possible. The root's packing copies m bytes.
//
// Applies: regular layouts only (every node holds n ranks); ports = 1.
#include <algorithm>
#include <lanes/error.hpp>
#include <string>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_scatter_full_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "full-lane", true);
  if (!layout.regular()) {
    throw Error(Errc::invalid_argument,
                "scatter full-lane needs a regular layout, not " + layout.describe());
  }
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int me = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region own{Buffer::recv, 0, b};
  if (p == 1) {
    s.copy({Buffer::send, 0, b}, own);
    s.finalize();
    return s;
  }
  const int num_nodes = layout.num_nodes();
  const int n = layout.node_size_of(0);
  const int root_node = layout.node_of[args.root];
  const int root_local = layout.local_rank_of[args.root];
  const int vm = (layout.node_of[me] - root_node + num_nodes) % num_nodes;
  const int vi = (layout.local_rank_of[me] - root_local + n) % n;
  const auto rank_at = [&](int node, int local) {
    return layout.node_ranks[(node + root_node) % num_nodes][(local + root_local) % n];
  };
  const int rounds1 = ceil_log2(n);
  const int rounds2 = ceil_log2(num_nodes);
  s.rounds = rounds1 + rounds2;
  s.ports = 1;
  const LaneSet my_lane = layout.lanes_of[me];
  const std::size_t super = blocks(num_nodes);

  std::vector<OpId> have;   // what makes the scratch contents valid
  std::vector<OpId> after;  // the previous send (sends are chained)
  const auto send = [&](int to, Region src, int round) {
    std::vector<OpId> deps = have;
    deps.insert(deps.end(), after.begin(), after.end());
    after = {s.send(to, my_lane, src, std::move(deps), round)};
  };

  const BinomialTree node_tree(n);            // phase 1, over local ranks
  const BinomialTree column_tree(num_nodes);  // phase 2, over nodes
  if (vm != 0) {
    // Phase 2 only: a node-level binomial scatter within column vi.
    const TreeEdge up = *column_tree.parent(vm);
    const int count = up.span;
    const int parent = rank_at(up.member, vi);
    const LaneSet lane = layout.lanes_of[parent];
    const int round = rounds1 + up.down_round;
    if (count == 1) {
      s.recv(parent, lane, own, {}, round);
      s.finalize();
      return s;
    }
    s.scratch_bytes = blocks(count);
    have = {s.recv(parent, lane, {Buffer::scratch, 0, blocks(count)}, {}, round)};
    s.copy({Buffer::scratch, 0, b}, own, have);
    for (const TreeEdge& child : column_tree.children(vm)) {
      send(rank_at(child.member, vi),
           {Buffer::scratch, blocks(child.distance()), blocks(child.span)},
           rounds1 + child.down_round);
    }
    s.finalize();
    return s;
  }

  // Phase 0 / 1 on the root's node.
  if (vi == 0) {
    s.copy({Buffer::send, blocks(me), b}, own);
    s.scratch_bytes = blocks(p);
    // Packing, with runs that are contiguous in the send buffer merged into one copy.
    std::size_t run_src = 0;
    std::size_t run_dst = 0;
    std::size_t run_len = 0;
    for (int pos = 0; pos < p; ++pos) {
      const std::size_t src = blocks(rank_at(pos % num_nodes, pos / num_nodes));
      if (run_len > 0 && src == run_src + run_len) {
        run_len += b;
        continue;
      }
      if (run_len > 0)
        have.push_back(
            s.copy({Buffer::send, run_src, run_len}, {Buffer::scratch, run_dst, run_len}));
      run_src = src;
      run_dst = blocks(pos);
      run_len = b;
    }
    have.push_back(s.copy({Buffer::send, run_src, run_len}, {Buffer::scratch, run_dst, run_len}));
  } else {
    const TreeEdge up = *node_tree.parent(vi);
    const int count = up.span;
    const int parent = rank_at(0, up.member);
    const LaneSet lane = layout.lanes_of[parent];
    const int round = up.down_round;
    if (num_nodes == 1 && count == 1) {
      s.recv(parent, lane, own, {}, round);
      s.finalize();
      return s;
    }
    s.scratch_bytes = static_cast<std::size_t>(count) * super;
    have = {s.recv(parent, lane, {Buffer::scratch, 0, s.scratch_bytes}, {}, round)};
    s.copy({Buffer::scratch, 0, b}, own, have);
  }
  for (const TreeEdge& child : node_tree.children(vi)) {
    const auto count = static_cast<std::size_t>(child.span);
    send(rank_at(0, child.member),
         {Buffer::scratch, static_cast<std::size_t>(child.distance()) * super, count * super},
         child.down_round);
  }
  // Phase 2 as the head of column vi: its N blocks are at the start of its scratch.
  for (const TreeEdge& child : column_tree.children(0)) {
    send(rank_at(child.member, vi), {Buffer::scratch, blocks(child.distance()), blocks(child.span)},
         rounds1 + child.down_round);
  }
  s.finalize();
  return s;
}

// Cost: the binomial scatter of n super-blocks of N blocks on the root's node (its child 2^j ranks
// away gets min(2^j, n - 2^j) of them), then n concurrent binomial scatters over the nodes (the
// child 2^j nodes away gets min(2^j, N - 2^j) blocks), all n ranks of a sending node at once
// (n flows), a subtree root's sends leaving together (see cost_model.hpp). As in the formula
// above, the root's packing copy is left out.
double cost_scatter_full_lane(const CostInput& in, const MachineParams& m) {
  const long long nodes = in.nodes;
  const long long n = in.ppn;
  const auto b = static_cast<double>(in.bytes);
  double t = 0;
  for (long long dist = 1; dist < n; dist *= 2) {
    t += shm_time(static_cast<double>(std::min(dist, n - dist) * nodes) * b, m);
  }
  const long long highest = nodes > 1 ? 1LL << (ceil_log(nodes, 2) - 1) : 0;
  for (long long top = highest; top >= 1; top /= 2) {
    double blocks = 0;  // what a subtree root sends at this level, all at once
    for (long long d = top; d >= 1; d /= 2) blocks += static_cast<double>(std::min(d, nodes - d));
    if (!m.sends_overlap) blocks = static_cast<double>(std::min(top, nodes - top));
    t += rail_time(blocks * b, static_cast<double>(n), in, m);
  }
  return t;
}

const Algorithm algorithm_scatter_full_lane{
    "full-lane",
    Collective::scatter,
    build_scatter_full_lane,
    regular_layout,
    "scatter on the root's node, then n binomial scatters over the nodes; regular layouts",
    cost_scatter_full_lane};

}  // namespace lanes::algos
