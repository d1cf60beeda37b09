// Pairwise-exchange alltoall.
//
// Source: the shifted pairwise exchange of MPICH's MPIR_Alltoall_intra_pairwise (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005); the 1-ported case of the ceil(p/k)-round alltoall in J. L. Traeff,
// "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms".
//
// Phases: the own block is copied from the send to the receive buffer; then in steps
// s = 1..p-1 rank r sends block (r+s) mod p to rank (r+s) mod p and receives block r of rank
// (r-s) mod p, each step after the previous step's send and receive completed.
//
// Cost: (p - 1) * (alpha + beta * m) for blocks of m bytes.
//
// Applies: any p and any layout. Every block travels exactly once; best for medium and large
// blocks. Uses only each sender's default lane.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_alltoall_pairwise(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "pairwise", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto block = [b](int j) { return static_cast<std::size_t>(j) * b; };
  s.ops.reserve(2 * static_cast<std::size_t>(p) - 1);
  s.copy({Buffer::send, block(r), b}, {Buffer::recv, block(r), b});
  std::vector<OpId> prev;
  for (int step = 1; step < p; ++step) {
    const int to = (r + step) % p;
    const int from = (r - step + p) % p;
    const OpId snd = s.send(to, layout.lane_of[r], {Buffer::send, block(to), b}, prev, step - 1);
    const OpId rcv =
        s.recv(from, layout.lane_of[from], {Buffer::recv, block(from), b}, prev, step - 1);
    prev = {snd, rcv};
  }
  s.rounds = p - 1;
  s.finalize();
  return s;
}

// Cost: of the p-1 steps, n-1 have an on-node partner; in the others all n ranks of a node send
// off-node at once.
double cost_alltoall_pairwise(const CostInput& in, const MachineParams& m) {
  const auto c = static_cast<double>(in.bytes);
  const auto p = static_cast<double>(in.p());
  const auto n = static_cast<double>(in.ppn);
  return (n - 1) * shm_time(c, m) + (p - n) * rail_time(c, n, in, m);
}

}  // namespace lanes::algos
