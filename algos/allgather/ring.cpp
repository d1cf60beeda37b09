// Ring allgather.
//
// Source: the ring algorithm, as in MPICH's MPIR_Allgather_intra_ring (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005).
//
// Phases: the own block is copied to its place in the receive buffer. In steps s = 0..p-2 rank
// r sends block (r-s) mod p to its right neighbour (r+1) mod p and receives block (r-s-1) mod p
// from its left neighbour (r-1) mod p: the block it received last, its own in step 0 (sent from
// the send buffer). Each step starts after the previous step's send and receive completed.
//
// Cost: (p-1) * (alpha + beta * m) for blocks of m bytes; every rank receives each block once.
//
// Applies: any p and any layout; for large blocks. With ranks numbered node by node only the
// ring's N edges between nodes go off node. One-ported: uses each sender's default lane.
#include <algorithm>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allgather_ring(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "ring", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto block = [b](int j) { return static_cast<std::size_t>(j) * b; };
  s.ops.reserve(2 * static_cast<std::size_t>(p) - 1);
  s.copy({Buffer::send, 0, b}, {Buffer::recv, block(r), b});
  const int right = (r + 1) % p;
  const int left = (r - 1 + p) % p;
  std::vector<OpId> prev;
  for (int step = 0; step + 1 < p; ++step) {
    const Region out =
        step == 0 ? Region{Buffer::send, 0, b} : Region{Buffer::recv, block((r - step + p) % p), b};
    const int in = (r - step - 1 + p) % p;
    const OpId snd = s.send(right, layout.lanes_of[r], out, prev, step);
    const OpId rcv = s.recv(left, layout.lanes_of[left], {Buffer::recv, block(in), b}, prev, step);
    prev = {snd, rcv};
  }
  s.rounds = p - 1;
  s.ports = 1;
  s.finalize();
  return s;
}

// Cost: p - 1 steps of one block; with ranks numbered node by node one ring edge per node leaves
// it (one flow), and a step lasts as long as its slowest edge.
double cost_allgather_ring(const CostInput& in, const MachineParams& m) {
  const auto b = static_cast<double>(in.bytes);
  double step = shm_time(b, m);
  if (in.nodes > 1) step = std::max(step, rail_time(b, 1.0, in, m));
  return static_cast<double>(in.p() - 1) * step;
}

const Algorithm algorithm_allgather_ring{
    "ring",
    Collective::allgather,
    build_allgather_ring,
    nullptr,
    "p-1 steps, each forwarding the last block received to r+1",
    cost_allgather_ring};

}  // namespace lanes::algos
