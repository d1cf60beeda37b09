// k-lane alltoall: node-to-node rounds in which all ranks of a node talk to distinct remote ranks.
//
// Source: J. L. Traeff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms", the
// k-lane alltoall: in N-1 communication rounds all n processors of a node send their blocks for
// the "next" node and receive those from the "previous" node, in n steps such that in each step
// the n processors of a node send to and receive from n different processors; a final round
// exchanges the blocks that stay on the node.
//
// Phases, for rank (a, i) = local rank i of node a, N nodes of n ranks: the own block is copied
// locally. Node round t = 1..N-1 targets node a+t mod N and hears from node a-t mod N; in its
// step s = 0..n-1 the rank sends its block for local rank i+s mod n of node a+t to that rank and
// receives the block of local rank i-s mod n of node a-t, both directly between the send and
// receive buffers, on the sender's lane (local rank i mod k in the plain layouts). Each step
// (round (t-1)*n + s) starts after the previous step's send and receive completed. Then, in one
// more round, the rank exchanges blocks with all n-1 other ranks of its node at once.
//
// Cost: (N-1) * n * (alpha + beta * m) off node, where in each step all n ranks of a node use
// their lanes concurrently (n/k ranks share a lane), plus one on-node round that moves (n-1)
// blocks of m bytes per rank. Every block travels exactly once; (N-1) * n + 1 rounds (no on-node
// round when n = 1). Not port-bounded: the on-node round has n-1 sends and receives per rank.
//
// Applies: regular layouts only (every node holds n ranks); lanes falls back otherwise.
#include <string>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"
#include "lanes/error.hpp"

namespace lanes::algos {

Schedule build_alltoall_k_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "k-lane", false);
  if (!layout.regular()) {
    throw Error(
        Errc::invalid_argument,
        "alltoall k-lane needs the same number of ranks on every node, not " + layout.describe());
  }
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const int nodes = layout.num_nodes();
  const int n = layout.node_size_of(r);
  const int a = layout.node_of[r];
  const int i = layout.local_rank_of[r];
  const auto rank_at = [&layout](int c, int l) { return layout.node_ranks[c][l]; };
  const auto block = [b](int j) { return static_cast<std::size_t>(j) * b; };
  const LaneSet lane = layout.lanes_of[r];
  s.ops.reserve(2 * static_cast<std::size_t>(layout.size) - 1);
  s.copy({Buffer::send, block(r), b}, {Buffer::recv, block(r), b});

  std::vector<OpId> prev;
  for (int t = 1; t < nodes; ++t) {
    const int c_to = (a + t) % nodes;
    const int c_from = (a - t + nodes) % nodes;
    for (int step = 0; step < n; ++step) {
      const int round = (t - 1) * n + step;
      const int to = rank_at(c_to, (i + step) % n);
      const int from = rank_at(c_from, (i - step + n) % n);
      const OpId snd = s.send(to, lane, {Buffer::send, block(to), b}, prev, round);
      const OpId rcv =
          s.recv(from, layout.lanes_of[from], {Buffer::recv, block(from), b}, prev, round);
      prev = {snd, rcv};
    }
  }
  const int node_rounds = (nodes - 1) * n;
  for (int step = 1; step < n; ++step) {
    const int to = rank_at(a, (i + step) % n);
    const int from = rank_at(a, (i - step + n) % n);
    s.send(to, lane, {Buffer::send, block(to), b}, prev, node_rounds);
    s.recv(from, layout.lanes_of[from], {Buffer::recv, block(from), b}, prev, node_rounds);
  }
  s.rounds = node_rounds + (n > 1 ? 1 : 0);
  s.finalize();
  return s;
}

// Cost: (N - 1) n steps of one block in which all n ranks of a node send off it at once (n flows),
// then one on-node round in which each rank moves its other n - 1 blocks.
double cost_alltoall_k_lane(const CostInput& in, const MachineParams& m) {
  const auto nodes = static_cast<double>(in.nodes);
  const auto n = static_cast<double>(in.ppn);
  const auto b = static_cast<double>(in.bytes);
  const double local = in.ppn > 1 ? shm_time((n - 1) * b, m) : 0.0;
  return (nodes - 1) * n * rail_time(b, n, in, m) + local;
}

const Algorithm algorithm_alltoall_k_lane{
    "k-lane",
    Collective::alltoall,
    build_alltoall_k_lane,
    regular_layout,
    "N-1 node rounds of n steps to distinct remote ranks, then an on-node round",
    cost_alltoall_k_lane};

}  // namespace lanes::algos
