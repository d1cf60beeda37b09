// Full-lane alltoall: node-local combining, then n concurrent alltoalls across the nodes.
//
// Source: J. L. Traeff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms", the
// full-lane alltoall: blocks to the same node are combined into blocks of n * m bytes by
// concurrent alltoalls on all nodes, followed by n independent alltoalls over the N nodes; the
// full-lane algorithms are described in J. L. Traeff, S. Hunold, "Decomposing MPI Collectives
// for Exploiting Multi-lane Communication", IEEE CLUSTER 2020.
//
// Phases, for rank (a, i) = local rank i of node a, N nodes of n ranks, (c, l) = local rank l
// of node c:
//   1. Node-local alltoall in n-1 pairwise steps: in step s (1..n-1) the rank sends to local
//      rank l = i+s mod n of its node the N blocks it holds for local rank l of every node,
//      packed in node order, and receives the same from local rank i-s mod n. Received blocks
//      for the own node go straight to their receive blocks; the others, and the own column,
//      are arranged per destination node: combined block c holds the blocks of (a, 0..n-1) for
//      (c, i). With one node the blocks travel directly between the send and receive buffers.
//   2. n concurrent alltoalls among the local ranks i of all nodes, in N-1 pairwise steps: in
//      step t (1..N-1) the rank sends combined block c = a+t mod N (n * m bytes) to (c, i) and
//      receives the combined block of node a-t mod N from (a-t, i), on the sender's lane (local
//      rank i mod k in the plain layouts). It holds the blocks of (a-t, 0..n-1) for (a, i) and
//      lands directly in the receive buffer when that node's ranks are consecutive, otherwise in
//      scratch, from where each block is copied to its place. With one rank per node the send
//      buffer's blocks go out directly.
//   Every step starts after the previous step's send and receive completed.
//
// Cost: (n-1) * (alpha_node + beta_node * N * m) + (N-1) * (alpha + beta * n * m) for blocks of
// m bytes, plus packing copies of about 2 * p * m bytes per rank. Every block crosses node
// memory twice: p * (2p - N - n) * m bytes travel in total against p * (p-1) * m for the direct
// algorithms, but off-node messages are n times larger and all n ranks of a node drive their
// lanes at once.
//
// Applies: regular layouts only (every node holds n ranks); lanes falls back otherwise.
#include <string>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"
#include "lanes/error.hpp"

namespace lanes::algos {

namespace {

bool consecutive(const std::vector<int>& ranks) {
  for (std::size_t l = 0; l < ranks.size(); ++l) {
    if (ranks[l] != ranks.front() + static_cast<int>(l)) return false;
  }
  return true;
}

}  // namespace

Schedule build_alltoall_full_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "full-lane", false);
  if (!layout.regular()) {
    throw Error(Errc::invalid_argument,
                "alltoall full-lane needs the same number of ranks on every node, not " +
                    layout.describe());
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
  const auto blocks = [b](int count) { return static_cast<std::size_t>(count) * b; };
  const auto send_block = [&](int rank) { return Region{Buffer::send, blocks(rank), b}; };
  const auto recv_block = [&](int rank) { return Region{Buffer::recv, blocks(rank), b}; };
  const LaneSet lane = layout.lanes_of[r];

  // Scratch: packs and receipts of phase 1 ((n-1) * N blocks each), the combined blocks
  // (N-1 nodes of n blocks), and receipts of phase 2 for nodes whose ranks are not consecutive.
  const bool combine = nodes > 1 && n > 1;
  bool any_scattered = false;
  for (int c = 0; c < nodes; ++c) any_scattered |= !consecutive(layout.node_ranks[c]);
  const std::size_t phase1_blocks = combine ? blocks((n - 1) * nodes) : 0;
  const std::size_t pack_base = 0;
  const std::size_t receipt_base = pack_base + phase1_blocks;
  const std::size_t combined_base = receipt_base + phase1_blocks;
  const std::size_t combined_bytes = combine ? blocks((nodes - 1) * n) : 0;
  const std::size_t scattered_base = combined_base + combined_bytes;
  s.scratch_bytes =
      scattered_base + (nodes > 1 && any_scattered ? blocks((nodes - 1) * n) : std::size_t{0});
  // Combined block for node c (c != a) sits at index (c - a - 1) mod N; slot l of it holds the
  // block of (a, l) for (c, i).
  const auto combined = [&](int c, int l) {
    const int y = (c - a - 1 + nodes) % nodes;
    return Region{Buffer::scratch, combined_base + blocks(y * n + l), b};
  };
  std::vector<std::vector<OpId>> combined_writers(static_cast<std::size_t>(nodes));

  s.copy(send_block(r), recv_block(r));
  if (combine) {
    for (int c = 0; c < nodes; ++c) {
      if (c == a) continue;
      combined_writers[c].push_back(s.copy(send_block(rank_at(c, i)), combined(c, i)));
    }
  }

  std::vector<OpId> prev;
  for (int step = 1; step < n; ++step) {
    const int round = step - 1;
    const int to = rank_at(a, (i + step) % n);
    const int from_local = (i - step + n) % n;
    const int from = rank_at(a, from_local);
    if (!combine) {
      const OpId snd = s.send(to, lane, send_block(to), prev, round);
      const OpId rcv = s.recv(from, layout.lanes_of[from], recv_block(from), prev, round);
      prev = {snd, rcv};
      continue;
    }
    const std::size_t pack = pack_base + blocks(round * nodes);
    std::vector<OpId> deps = prev;
    for (int c = 0; c < nodes; ++c) {
      deps.push_back(s.copy(send_block(rank_at(c, layout.local_rank_of[to])),
                            {Buffer::scratch, pack + blocks(c), b}));
    }
    const OpId snd = s.send(to, lane, {Buffer::scratch, pack, blocks(nodes)}, deps, round);
    const std::size_t receipt = receipt_base + blocks(round * nodes);
    const OpId rcv =
        s.recv(from, layout.lanes_of[from], {Buffer::scratch, receipt, blocks(nodes)}, prev, round);
    for (int c = 0; c < nodes; ++c) {
      const Region src{Buffer::scratch, receipt + blocks(c), b};
      if (c == a) {
        s.copy(src, recv_block(from), {rcv});
      } else {
        combined_writers[c].push_back(s.copy(src, combined(c, from_local), {rcv}));
      }
    }
    prev = {snd, rcv};
  }

  for (int t = 1; t < nodes; ++t) {
    const int round = n - 1 + t - 1;
    const int c_to = (a + t) % nodes;
    const int c_from = (a - t + nodes) % nodes;
    const int to = rank_at(c_to, i);
    const int from = rank_at(c_from, i);
    OpId snd = 0;
    if (n == 1) {
      snd = s.send(to, lane, send_block(to), prev, round);
    } else {
      std::vector<OpId> deps = prev;
      deps.insert(deps.end(), combined_writers[c_to].begin(), combined_writers[c_to].end());
      const Region all{Buffer::scratch, combined(c_to, 0).offset, blocks(n)};
      snd = s.send(to, lane, all, std::move(deps), round);
    }
    const std::vector<int>& sources = layout.node_ranks[c_from];
    OpId rcv = 0;
    if (consecutive(sources)) {
      rcv = s.recv(from, layout.lanes_of[from], {Buffer::recv, blocks(sources.front()), blocks(n)},
                   prev, round);
    } else {
      const std::size_t at = scattered_base + blocks((t - 1) * n);
      rcv = s.recv(from, layout.lanes_of[from], {Buffer::scratch, at, blocks(n)}, prev, round);
      // Copy runs of consecutive ranks at once.
      for (int l = 0; l < n;) {
        int run = 1;
        while (l + run < n && sources[l + run] == sources[l] + run) ++run;
        s.copy({Buffer::scratch, at + blocks(l), blocks(run)},
               {Buffer::recv, blocks(sources[l]), blocks(run)}, {rcv});
        l += run;
      }
    }
    prev = {snd, rcv};
  }
  s.rounds = (n - 1) + (nodes - 1);
  s.ports = 1;
  s.finalize();
  return s;
}

// Cost: n - 1 on-node steps of N blocks, then N - 1 steps of n blocks in which all n ranks of a
// node send off it at once (n flows), plus packing copies of about 2 p blocks per rank when both
// phases run.
double cost_alltoall_full_lane(const CostInput& in, const MachineParams& m) {
  const auto nodes = static_cast<double>(in.nodes);
  const auto n = static_cast<double>(in.ppn);
  const auto b = static_cast<double>(in.bytes);
  const double copies = in.nodes > 1 && in.ppn > 1 ? 2 * nodes * n * b * m.beta_shm : 0.0;
  return (n - 1) * shm_time(nodes * b, m) + (nodes - 1) * rail_time(n * b, n, in, m) + copies;
}

const Algorithm algorithm_alltoall_full_lane{
    "full-lane",
    Collective::alltoall,
    build_alltoall_full_lane,
    regular_layout,
    "node-local combining alltoall, then n concurrent alltoalls of n-block messages",
    cost_alltoall_full_lane};

}  // namespace lanes::algos
