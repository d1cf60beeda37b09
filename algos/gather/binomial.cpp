// Binomial-tree gather.
//
// Source: the classic binomial tree, as in MPICH's MPIR_Gather_intra_binomial (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005); the mirror image of the binomial scatter.
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p; the subtree of
// vr != 0 is [vr, vr + min(lowbit(vr), p - vr)), the root's is everything. A rank receives from
// each child vr + 2^j (2^j < lowbit(vr), smallest subtree first, one after the other) that
// child's subtree blocks, then sends its whole subtree's blocks to vr - lowbit(vr). Intermediate
// ranks collect their subtree in scratch in relative-rank order (their own block copied in
// first); leaves send straight from the send buffer; the root receives straight into its
// receive buffer and copies its own block. A subtree whose ranks wrap past p - 1 is not
// contiguous in the root's receive buffer and goes to it as two messages.
//
// Cost: ceil(log2 p) * alpha + beta * m * (p - 1) / p for m = p * block bytes (the root receives
// every block but its own exactly once; when p is a power of two, round i brings it the 2^i
// blocks of its child vr = 2^i, so the largest subtree comes last).
//
// Applies: any p and any layout. Round- and volume-optimal in the one-ported model; uses only
// each sender's default lane.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_gather_binomial(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "binomial", true);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int rank = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region mine{Buffer::send, 0, b};
  if (p == 1) {
    s.copy(mine, {Buffer::recv, 0, b});
    s.finalize();
    return s;
  }
  const BinomialTree tree(p);
  s.rounds = tree.rounds();
  const int vr = (rank - args.root + p) % p;
  const auto actual = [&](int v) { return (v + args.root) % p; };
  const auto rel = [&](int x) { return (x - args.root + p) % p; };
  // A sender alone off its node in its round uses all of the node's lanes (round_lanes): in the
  // round of an edge of 2^j the ranks that hang 2^j below their parent send to it.
  const auto lanes_at = [&](int sender, const TreeEdge& edge) {
    return round_lanes(layout, sender, [&](int x) {
      return tree.sends_up(rel(x), edge.level) &&
             !layout.same_node(x, actual(rel(x) - edge.distance()));
    });
  };

  if (vr == 0) {
    s.copy(mine, {Buffer::recv, blocks(rank), b});
    std::optional<OpId> last;  // receives are taken one after the other
    for (const TreeEdge& edge : tree.children_upward(0)) {
      const int child = actual(edge.member);
      const int n = edge.span;
      const int first = std::min(n, p - child);
      const LaneSet lane = lanes_at(child, edge);
      std::vector<OpId> deps;
      if (last) deps.push_back(*last);
      last =
          s.recv(child, lane, {Buffer::recv, blocks(child), blocks(first)}, deps, edge.up_round());
      if (first < n) {
        last = s.recv(child, lane, {Buffer::recv, 0, blocks(n - first)}, {*last}, edge.up_round());
      }
    }
    s.finalize();
    return s;
  }

  const TreeEdge up = *tree.parent(vr);
  const int n = up.span;
  const int parent = actual(up.member);
  const LaneSet my_lane = lanes_at(rank, up);
  const int round = up.up_round();
  if (n == 1) {
    s.send(parent, my_lane, mine, {}, round);
    s.finalize();
    return s;
  }
  s.scratch_bytes = blocks(n);
  std::vector<OpId> have = {s.copy(mine, {Buffer::scratch, 0, b})};
  std::optional<OpId> last;
  for (const TreeEdge& edge : tree.children_upward(vr)) {
    const int child = actual(edge.member);
    std::vector<OpId> deps;
    if (last) deps.push_back(*last);
    last = s.recv(child, lanes_at(child, edge),
                  {Buffer::scratch, blocks(edge.distance()), blocks(edge.span)}, deps,
                  edge.up_round());
    have.push_back(*last);
  }
  // To the root, the part up to the end of its receive buffer goes first, the rest second.
  int first = n;
  if (up.member == 0) first = std::min(n, p - rank);
  const OpId sent = s.send(parent, my_lane, {Buffer::scratch, 0, blocks(first)}, have, round);
  if (first < n) {
    s.send(parent, my_lane, {Buffer::scratch, blocks(first), blocks(n - first)}, {sent}, round);
  }
  s.finalize();
  return s;
}

// Cost: the root's child 2^j ranks away brings min(2^j, p - 2^j) blocks; partners n or more ranks
// apart are on different nodes, and in those rounds one rank per node sends (one flow).
double cost_gather_binomial(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  const auto b = static_cast<double>(in.bytes);
  double t = 0;
  for (long long dist = 1; dist < p; dist *= 2) {
    const double bytes = static_cast<double>(std::min(dist, p - dist)) * b;
    t += in.nodes > 1 && dist >= in.ppn ? rail_time(bytes, 1.0, in, m) : shm_time(bytes, m);
  }
  return t;
}

const Algorithm algorithm_gather_binomial{
    "binomial",
    Collective::gather,
    build_gather_binomial,
    nullptr,
    "binomial tree, each rank sends its subtree's blocks up; ceil(log2 p) rounds",
    cost_gather_binomial};

}  // namespace lanes::algos
