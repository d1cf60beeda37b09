// Binomial-tree scatter.
//
// Source: the classic binomial tree, as in MPICH's MPIR_Scatter_intra_binomial (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005).
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p; the subtree of
// vr != 0 is [vr, vr + min(lowbit(vr), p - vr)), the root's is everything. A rank receives its
// whole subtree's blocks from vr - lowbit(vr), then sends each child vr + 2^j (2^j < lowbit(vr),
// largest subtree first) that child's subtree blocks. Intermediate ranks keep their subtree in
// scratch in relative-rank order and copy their own block out; leaves receive straight into the
// receive buffer; the root copies its own block. At the root a subtree whose ranks wrap past
// p - 1 is not contiguous in the send buffer and goes out as two messages.
//
// Cost: ceil(log2 p) * alpha + beta * m * (p - 1) / p for m = p * block bytes (the root sends
// every block but its own exactly once; when p is a power of two, round i moves m / 2^(i+1)).
//
// Applies: any p and any layout. Round- and volume-optimal in the one-ported model; uses only
// each sender's default lane.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_scatter_binomial(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "binomial", true);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int rank = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region own{Buffer::recv, 0, b};
  if (p == 1) {
    s.copy({Buffer::send, 0, b}, own);
    s.finalize();
    return s;
  }
  const BinomialTree tree(p);
  s.rounds = tree.rounds();
  const int vr = (rank - args.root + p) % p;
  const auto actual = [&](int v) { return (v + args.root) % p; };
  const auto rel = [&](int x) { return (x - args.root + p) % p; };
  // A sender alone off its node in its round uses all of the node's lanes (round_lanes).
  const auto lanes_at = [&](int sender, const TreeEdge& edge) {
    return round_lanes(layout, sender, [&](int x) {
      return tree.sends_down(rel(x), edge.level) &&
             !layout.same_node(x, actual(rel(x) + edge.distance()));
    });
  };

  std::vector<OpId> after;  // what the sends to children wait for
  if (const auto up = tree.parent(vr)) {
    const int n = up->span;
    const int parent = actual(up->member);
    const LaneSet lane = lanes_at(parent, *up);
    const int round = up->down_round;
    if (n == 1) {
      s.recv(parent, lane, own, {}, round);
      s.finalize();
      return s;
    }
    s.scratch_bytes = blocks(n);
    // From the root, the part up to the end of its send buffer comes first, the rest second.
    int first = n;
    if (up->member == 0) first = std::min(n, p - rank);
    after.push_back(s.recv(parent, lane, {Buffer::scratch, 0, blocks(first)}, {}, round));
    if (first < n) {
      after.push_back(
          s.recv(parent, lane, {Buffer::scratch, blocks(first), blocks(n - first)}, {}, round));
    }
    s.copy({Buffer::scratch, 0, b}, own, {after.front()});
  } else {
    s.copy({Buffer::send, blocks(rank), b}, own);
  }
  for (const TreeEdge& edge : tree.children(vr)) {
    const int n = edge.span;
    const int child = actual(edge.member);
    const int round = edge.down_round;
    const LaneSet my_lane = lanes_at(rank, edge);
    if (vr == 0) {
      const int first = std::min(n, p - child);
      after = {s.send(child, my_lane, {Buffer::send, blocks(child), blocks(first)}, after, round)};
      if (first < n) {
        after = {s.send(child, my_lane, {Buffer::send, 0, blocks(n - first)}, after, round)};
      }
    } else {
      after = {s.send(child, my_lane, {Buffer::scratch, blocks(edge.distance()), blocks(n)}, after,
                      round)};
    }
  }
  s.finalize();
  return s;
}

// Cost: the round with partners 2^j apart moves min(2^j, p - 2^j) blocks per sender; rounds
// moving n or more blocks cross nodes, one flow per node (only subtree roots hold data) over all
// of the node's lanes, and a subtree root's sends leave together (binomial_scatter_time); the
// rest stay on-node.
double cost_scatter_binomial(const CostInput& in, const MachineParams& m) {
  return binomial_scatter_time(static_cast<double>(in.bytes), in, m, Spread::node);
}

const Algorithm algorithm_scatter_binomial{
    "binomial",
    Collective::scatter,
    build_scatter_binomial,
    nullptr,
    "binomial tree, each child gets its subtree's blocks; ceil(log2 p) rounds",
    cost_scatter_binomial};

}  // namespace lanes::algos
