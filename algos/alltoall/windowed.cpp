// Windowed pairwise alltoall: the shifted pairwise exchange with W steps in flight.
//
// Source: the pairwise exchange of MPICH's MPIR_Alltoall_intra_pairwise (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005) with a bounded number of outstanding steps, as in MPICH's
// MPIR_Alltoall_intra_scattered (bblock) and Open MPI's linear_sync alltoall; J. L. Traeff,
// "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms", for why a node's k lanes
// need k flows at all times.
//
// Phases: the own block is copied from the send to the receive buffer; then in steps
// s = 1..p-1 rank r sends block (r+s) mod p to rank (r+s) mod p and receives block r of rank
// (r-s) mod p. Step s starts once step s - W has completed (its send and its receive), so W
// steps are in flight, with W = min(p - 1, 2k) for k lanes. Steps (t - 1) W + 1 .. t W form
// round t, ceil((p - 1) / W) rounds, although a step starts as soon as its own predecessor is
// done. A rank whose partner in one step is on its node keeps its lanes busy with the next steps'
// off-node messages, and the ranks of a node, which pairwise puts off the node in different
// steps, keep all of the node's lanes busy.
//
// Cost: every block travels once. Off the node, each node sends n (p - n) blocks of m bytes over
// its lanes, which stay busy throughout: n (p - n) m / B for the node's combined lane rate B,
// plus ceil((p - 1) / W) message start-ups; on the node, n - 1 copies of m bytes per rank with
// ceil((n - 1) / W) start-ups, which overlap with the rest.
//
// Applies: any p and any layout. For large blocks on several nodes, where the pairwise steps
// leave lanes idle; the receives of the next W steps are posted early, so it needs no more memory
// than pairwise.
#include <algorithm>
#include <cmath>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_alltoall_windowed(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "windowed", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const int window = std::max(1, std::min(p - 1, 2 * layout.num_lanes));
  const auto block = [b](int j) { return static_cast<std::size_t>(j) * b; };
  s.ops.reserve(2 * static_cast<std::size_t>(p) - 1);
  s.copy({Buffer::send, block(r), b}, {Buffer::recv, block(r), b});
  // Step s's send and receive are ops 2s - 1 and 2s.
  for (int step = 1; step < p; ++step) {
    std::vector<OpId> after;
    if (step > window) {
      const auto earlier = static_cast<OpId>(2 * (step - window));
      after = {earlier - 1, earlier};
    }
    const int to = (r + step) % p;
    const int from = (r - step + p) % p;
    const int round = (step - 1) / window;
    s.send(to, layout.lanes_of[r], {Buffer::send, block(to), b}, after, round);
    s.recv(from, layout.lanes_of[from], {Buffer::recv, block(from), b}, after, round);
  }
  s.rounds = (p - 1 + window - 1) / window;
  s.finalize();
  return s;
}

// Cost: the off-node volume of a node over its combined lane rate, with one start-up per window of
// steps, against the on-node copies, whichever is longer.
double cost_alltoall_windowed(const CostInput& in, const MachineParams& m) {
  const auto c = static_cast<double>(in.bytes);
  const long long p = in.p();
  const long long n = in.ppn;
  const auto window = static_cast<double>(std::max(1LL, std::min(p - 1, 2LL * in.lanes)));
  const double on = std::ceil(static_cast<double>(n - 1) / window) * m.alpha_shm +
                    static_cast<double>(n - 1) * c * m.beta_shm;
  if (in.nodes == 1) return on;
  const double starts = std::ceil(static_cast<double>(p - 1) / window) * m.alpha_rail;
  const double volume = static_cast<double>(n * (p - n)) * c;
  return std::max(on, starts + volume / node_rate(in, m));
}

const Algorithm algorithm_alltoall_windowed{
    "windowed",
    Collective::alltoall,
    build_alltoall_windowed,
    nullptr,
    "pairwise steps with 2k in flight, so every lane of a node stays busy",
    cost_alltoall_windowed};

}  // namespace lanes::algos
