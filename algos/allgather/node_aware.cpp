// Node-aware (hierarchical) allgather: gather to node leaders, ring among leaders, node bcast.
//
// Source: the hierarchical allgather of SMP-aware MPI libraries, e.g. MVAPICH2's and Open MPI's
// two-level allgather (gather to a node leader, allgather among leaders, broadcast on the node);
// the node-combined blocks follow J. L. Traeff, "k-ported vs. k-lane Broadcast, Scatter, and
// Alltoall Algorithms" (combine the data of a node, communicate once per node pair).
//
// Phases, N nodes of sizes n_0..n_{N-1} (irregular sizes allowed), leader = local rank 0:
//   1. Gather (one round): every other rank of a node sends its block to the leader, which
//      places the blocks, its own included, into the node's combined block of n_c * m bytes.
//   2. Ring among the leaders (N-1 rounds): in step s the leader of node c sends the combined
//      block of node c-s mod N to the leader of node c+1 mod N and receives that of node
//      c-s-1 mod N from the leader of node c-1 mod N, striped over all of the node's lanes (the
//      leader is its node's only rank off the node); each step starts after the previous one's
//      send and receive completed.
//   3. Broadcast (one round): the leader sends the whole result, p * m bytes, to every other
//      rank of its node at once.
//   The combined blocks live in the receive buffer, when the ranks are numbered node by node, so
//   that node c's blocks are consecutive; otherwise in a node-ordered scratch array, from which
//   every rank copies the blocks to their places at the end. Without nodes of more than one rank
//   phases 1 and 3 are empty and not counted as rounds.
//
// Cost: (N-1) * alpha + (p - n_c) * beta * m off node (along the ring), plus on node
// 2 * alpha_node + (n_c - 1) * beta_node * m for the gather and (n_c - 1) * p * beta_node * m
// for the broadcast when the leader's sends share its memory bandwidth. Only one message per node
// pair leaves each node, over all of its lanes.
//
// Applies: any p and any layout; for small and medium blocks on many-rank nodes.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allgather_node_aware(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "node-aware", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const int nodes = layout.num_nodes();

  // Position of each rank's block in node order; `ordered` when that is the rank order.
  std::vector<int> node_start(static_cast<std::size_t>(nodes) + 1, 0);
  bool has_local = false;
  for (int c = 0; c < nodes; ++c) {
    const int n = static_cast<int>(layout.node_ranks[c].size());
    node_start[c + 1] = node_start[c] + n;
    has_local |= n > 1;
  }
  const auto pos = [&](int rank) {
    return node_start[layout.node_of[rank]] + layout.local_rank_of[rank];
  };
  bool ordered = true;
  for (int q = 0; q < p; ++q) ordered &= pos(q) == q;
  const Buffer work = ordered ? Buffer::recv : Buffer::scratch;
  if (!ordered) s.scratch_bytes = blocks(p);
  const auto node_region = [&](int c) {
    return Region{work, blocks(node_start[c]), blocks(node_start[c + 1] - node_start[c])};
  };
  const Region all{work, 0, blocks(p)};
  // Copies the node-ordered scratch array to the receive buffer, runs of consecutive ranks at once.
  const auto unpack = [&](const std::vector<OpId>& after) {
    for (int q = 0; q < p;) {
      int run = 1;
      while (q + run < p && pos(q + run) == pos(q) + run) ++run;
      s.copy({Buffer::scratch, blocks(pos(q)), blocks(run)}, {Buffer::recv, blocks(q), blocks(run)},
             after);
      q += run;
    }
  };

  const int gather_round = 0;
  const int ring_first = has_local ? 1 : 0;
  const int bcast_round = ring_first + nodes - 1;
  s.rounds = p == 1 ? 0 : nodes - 1 + (has_local ? 2 : 0);
  const int a = layout.node_of[r];
  const std::vector<int>& mates = layout.node_ranks[a];
  const int leader = mates.front();
  const LaneSet lane = layout.lanes_of[r];

  if (r != leader) {
    s.send(leader, lane, {Buffer::send, 0, b}, {}, gather_round);
    const OpId rcv = s.recv(leader, layout.lanes_of[leader], all, {}, bcast_round);
    if (!ordered) unpack({rcv});
    s.finalize();
    return s;
  }
  std::vector<OpId> prev = {s.copy({Buffer::send, 0, b}, {work, blocks(pos(r)), b})};
  for (std::size_t l = 1; l < mates.size(); ++l) {
    const int m = mates[l];
    prev.push_back(s.recv(m, layout.lanes_of[m], {work, blocks(pos(m)), b}, {}, gather_round));
  }
  const int right = layout.node_ranks[(a + 1) % nodes].front();
  const int left = layout.node_ranks[(a - 1 + nodes) % nodes].front();
  for (int step = 0; step + 1 < nodes; ++step) {
    const int out = (a - step + nodes) % nodes;
    const int in = (a - step - 1 + nodes) % nodes;
    const OpId snd = s.send(right, layout.all_lanes(), node_region(out), prev, ring_first + step);
    const OpId rcv = s.recv(left, layout.all_lanes(), node_region(in), prev, ring_first + step);
    prev = {snd, rcv};
  }
  for (std::size_t l = 1; l < mates.size(); ++l) s.send(mates[l], lane, all, prev, bcast_round);
  if (!ordered) unpack(prev);
  s.finalize();
  return s;
}

// Cost: the gather (the leader takes n - 1 blocks), N - 1 ring steps of one node's n blocks between
// leaders (one flow per node), and the broadcast of all p blocks to the n - 1 others, the leader's
// sends sharing its memory bandwidth.
double cost_allgather_node_aware(const CostInput& in, const MachineParams& m) {
  const auto nodes = static_cast<double>(in.nodes);
  const auto n = static_cast<double>(in.ppn);
  const auto b = static_cast<double>(in.bytes);
  const double local =
      in.ppn > 1 ? shm_time((n - 1) * b, m) + shm_time((n - 1) * nodes * n * b, m) : 0.0;
  return local + (nodes - 1) * rail_time(n * b, 1.0, in, m, Spread::node);
}

const Algorithm algorithm_allgather_node_aware{
    "node-aware",
    Collective::allgather,
    build_allgather_node_aware,
    nullptr,
    "gather to node leaders, ring among leaders, broadcast on each node",
    cost_allgather_node_aware};

}  // namespace lanes::algos
