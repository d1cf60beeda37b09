// Broadcast by binomial scatter followed by a ring allgather.
//
// Source: MPICH's MPIR_Bcast_intra_scatter_ring_allgather, its choice for long messages and for
// medium messages on non-powers of two (R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of
// Collective Communication Operations in MPICH", IJHPCA 19(1), 2005).
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p, and the message
// is cut into p blocks whose sizes differ by at most one byte (block v at its place in the
// receive buffer; with fewer bytes than ranks the last blocks are empty and travel nowhere).
//  1. Binomial scatter (as scatter/binomial.cpp): vr ends with the blocks of its subtree
//     [vr, vr + min(lowbit(vr), p - vr)), in particular block vr; ceil(log2 p) rounds.
//  2. Ring allgather over vr: in step s = 0..p-2, vr sends block (vr - s) mod p to vr + 1 and
//     receives block (vr - s - 1) mod p from vr - 1, forwarding in step s + 1 what it received in
//     step s. Every rank receives all p - 1 blocks it does not own, also those it got in the
//     scatter (scatter-ring-bwsave leaves those out).
//
// Cost: ceil(log2 p) + p - 1 rounds; about (ceil(log2 p) + p - 1) * alpha +
// 2 beta * m (p - 1) / p for m bytes.
//
// Applies: any p and any layout; uses each sender's default lane. Bandwidth-optimal to within a
// factor of two for large messages; the p - 1 ring steps cost latency.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/bcast/message_blocks.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_bcast_scatter_ring(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "scatter-ring", true);
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

  // 1. Binomial scatter: this rank holds blocks [first, end) afterwards.
  const BlockScatter scatter = append_block_scatter(s, layout, p, vr, m, actual);
  const std::optional<OpId> got = scatter.received;
  const std::vector<OpId>& scattered = scatter.ops;
  const int first = scatter.first;
  const int end = scatter.end;

  // 2. Ring allgather.
  const int right = actual((vr + 1) % p);
  const int left = actual((vr + p - 1) % p);
  std::vector<OpId> prev;  // the receive of the previous step
  for (int step = 0; step < p - 1; ++step) {
    const int round = scatter_rounds + step;
    const Region out = blocks(m, p, (vr - step + p) % p, (vr - step + p) % p + 1);
    if (out.bytes > 0) {
      std::vector<OpId> deps;
      if (step == 0 && got) deps.push_back(*got);
      if (step > 0) deps = prev;
      s.send(right, my_lane, out, deps, round);
    }
    const int b = (vr - step - 1 + p) % p;
    const Region in = blocks(m, p, b, b + 1);
    prev.clear();
    if (in.bytes > 0) {
      // A block this rank got in the scatter waits for the scatter's ops on it.
      const bool mine = b >= first && b < end;
      prev = {
          s.recv(left, layout.lanes_of[left], in, mine ? scattered : std::vector<OpId>{}, round)};
    }
  }
  s.finalize();
  return s;
}

// Cost: the scatter of p blocks of c / p bytes, then p - 1 ring steps of one block; with ranks
// numbered node by node one ring edge per node leaves it (one flow), and a step lasts as long as
// its slowest edge.
double cost_bcast_scatter_ring(const CostInput& in, const MachineParams& m) {
  const auto p = static_cast<double>(in.p());
  const double block = static_cast<double>(in.bytes) / p;
  double step = shm_time(block, m);
  if (in.nodes > 1) step = std::max(step, rail_time(block, 1.0, in, m));
  return binomial_scatter_time(block, in, m) + (p - 1) * step;
}

const Algorithm algorithm_bcast_scatter_ring{
    "scatter-ring",
    Collective::bcast,
    build_bcast_scatter_ring,
    nullptr,
    "binomial scatter of p blocks, ring allgather in p-1 steps",
    cost_bcast_scatter_ring};

}  // namespace lanes::algos
