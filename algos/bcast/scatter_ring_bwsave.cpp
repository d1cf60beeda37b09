// Bandwidth-saving broadcast: binomial scatter followed by a ring allgather that skips the blocks
// a rank already holds.
//
// Source: H. Zhou, V. Marjanović, C. Niethammer, J. Gracia, "A Bandwidth-saving Optimization for
// MPI Broadcast Collective Operation" (arXiv:1603.06809, 2016), tuning MPICH's
// MPIR_Bcast_intra_scatter_ring_allgather.
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p, and the message
// is cut into p blocks whose sizes differ by at most one byte (block v at its place in the
// receive buffer; with fewer bytes than ranks the last blocks are empty and travel nowhere).
//  1. Binomial scatter (as scatter/binomial.cpp): vr != 0 ends with the blocks of its subtree
//     [vr, vr + min(lowbit(vr), p - vr)), the root with all; ceil(log2 p) rounds.
//  2. Ring allgather over vr as in scatter-ring (step s = 0..p-2: block (vr - s) mod p goes from
//     vr to vr + 1), except that a block the right neighbour holds from the scatter is neither
//     sent nor received: nothing goes to the root, and a rank with a subtree of n blocks
//     receives n - 1 blocks fewer. A rank forwards such a block later from its own copy.
//
// Cost: ceil(log2 p) + p - 1 rounds (some of them idle for some ranks); for m bytes the ring moves
// (p - 1) * m - m / p * sum over ranks of (blocks held after the scatter - 1) bytes, that is
// m (p - 1) / p less into the root alone than scatter-ring, and about
// (ceil(log2 p) + p - 1) * alpha + 2 beta * m (p - 1) / p in time (the last rank before the root
// in the ring still receives p - 1 blocks).
//
// Applies: any p and any layout; uses each sender's default lane. For large messages, and medium
// ones on non-powers of two, in place of scatter-ring.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/bcast/message_blocks.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

namespace {

// Whether relative rank v holds block b after the binomial scatter: the blocks of its subtree.
bool holds(const BinomialTree& tree, int v, int b) {
  return b >= v && b < tree.subtree_end(v);
}

}  // namespace

Schedule build_bcast_scatter_ring_bwsave(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "scatter-ring-bwsave", true);
  const int p = layout.size;
  const std::size_t m = args.bytes;
  Schedule s;
  if (p == 1 || m == 0) return s;
  const int scatter_rounds = ceil_log2(p);
  s.rounds = scatter_rounds + p - 1;
  s.ops.reserve(static_cast<std::size_t>(2 * p + 2 * scatter_rounds));
  const int vr = (args.rank - args.root + p) % p;
  const auto actual = [&](int v) { return (v + args.root) % p; };
  const LaneSet my_lane = layout.lanes_of[args.rank];

  // 1. Binomial scatter.
  const BinomialTree tree(p);
  const std::optional<OpId> got = append_block_scatter(s, layout, p, vr, m, actual).received;

  // 2. Ring allgather without the blocks the receiver holds. The blocks received here are not in
  // this rank's subtree, so the receives need not wait for the scatter.
  const int next = (vr + 1) % p;
  const int right = actual(next);
  const int left = actual((vr + p - 1) % p);
  std::vector<OpId> prev;  // the receive of the previous step
  for (int step = 0; step < p - 1; ++step) {
    const int round = scatter_rounds + step;
    const int b_out = (vr - step + p) % p;
    const Region out = blocks(m, p, b_out, b_out + 1);
    if (out.bytes > 0 && !holds(tree, next, b_out)) {
      std::vector<OpId> deps;
      if (holds(tree, vr, b_out)) {
        if (got) deps.push_back(*got);
      } else {
        deps = prev;  // received in the previous step
      }
      s.send(right, my_lane, out, deps, round);
    }
    const int b_in = (vr - step - 1 + p) % p;
    const Region in = blocks(m, p, b_in, b_in + 1);
    prev.clear();
    if (in.bytes > 0 && !holds(tree, vr, b_in)) {
      prev = {s.recv(left, layout.lanes_of[left], in, {}, round)};
    }
  }
  s.finalize();
  return s;
}

// Cost: as scatter-ring, except that the edge into the first rank of a node other than the root's
// skips the blocks that rank holds from the scatter, at least h = lowbit(n) of them, in the last
// steps of the ring: in the last h - 1 steps no block leaves a node and a step is one on-node copy.
double cost_bcast_scatter_ring_bwsave(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  const double block = static_cast<double>(in.bytes) / static_cast<double>(p);
  double step = shm_time(block, m);
  long long quiet = 0;  // ring steps without off-node traffic
  if (in.nodes > 1) {
    step = std::max(step, rail_time(block, 1.0, in, m));
    quiet = (in.ppn & -in.ppn) - 1;
  }
  return binomial_scatter_time(block, in, m) + static_cast<double>(p - 1 - quiet) * step +
         static_cast<double>(quiet) * shm_time(block, m);
}

const Algorithm algorithm_bcast_scatter_ring_bwsave{
    "scatter-ring-bwsave",
    Collective::bcast,
    build_bcast_scatter_ring_bwsave,
    nullptr,
    "scatter-ring that never sends a rank a block it holds from the scatter",
    cost_bcast_scatter_ring_bwsave};

}  // namespace lanes::algos
