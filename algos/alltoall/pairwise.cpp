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
    const OpId snd = s.send(to, layout.lanes_of[r], {Buffer::send, block(to), b}, prev, step - 1);
    const OpId rcv =
        s.recv(from, layout.lanes_of[from], {Buffer::recv, block(from), b}, prev, step - 1);
    prev = {snd, rcv};
  }
  s.rounds = p - 1;
  s.finalize();
  return s;
}

// Cost: with nodes of n consecutive ranks, min(s, n, p - s) ranks of a node have a partner off
// the node in step s, each on the lanes it drives, and the others one on the node; a step lasts
// as long as the slower kind. Steps n..p-n have all n ranks off the node; the first and last
// n - 1 steps fewer, which leaves lanes idle.
double cost_alltoall_pairwise(const CostInput& in, const MachineParams& m) {
  const auto c = static_cast<double>(in.bytes);
  const long long p = in.p();
  const long long n = in.ppn;
  if (in.nodes == 1) return static_cast<double>(p - 1) * shm_time(c, m);
  const auto step = [&](long long off) {
    return std::max(off < n ? shm_time(c, m) : 0.0, rail_time(c, static_cast<double>(off), in, m));
  };
  double t = static_cast<double>(p - 2 * n + 1) * step(n);
  for (long long off = 1; off < n; ++off) t += 2 * step(off);
  return t;
}

const Algorithm algorithm_alltoall_pairwise{"pairwise",
                                            Collective::alltoall,
                                            build_alltoall_pairwise,
                                            nullptr,
                                            "p-1 steps, step s sends to r+s and receives from r-s",
                                            cost_alltoall_pairwise};

}  // namespace lanes::algos
