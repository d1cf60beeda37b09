// Ring reduce-scatter (reduce_scatter_block).
//
// Source: the reduce-scatter phase of the ring allreduce (P. Patarasuk, X. Yuan, "Bandwidth
// optimal all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009), as MPICH's
// ring reduce-scatter (R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005).
//
// Phases: steps k = 0..p-2; in step k rank r sends its partial of block (r - 1 - k) mod p to
// r + 1 (in step 0 its own contribution, straight from the send buffer) and receives the partial
// of block (r - 2 - k) mod p from r - 1, combining its own contribution on the right. Block b
// thus travels b + 1, b + 2, ..., b and is combined in that order; the last step lands block r
// in rank r's receive buffer. Partials alternate between two scratch slots, so each step waits
// only for the previous one.
//
// Cost: (p - 1) (alpha + beta * m + gamma * m) for blocks of m bytes: every rank sends and
// receives p - 1 blocks, the minimum. With ranks numbered node by node, only the hops from the
// last rank of a node to the first of the next cross nodes, every node's at once.
//
// Order: block b is combined as b + 1, ..., p - 1, 0, ..., b, a rotation of the rank order: not
// for non-commutative operations.
//
// Applies: any p and any layout.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_scatter_block_ring(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "ring", false);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const auto own = [&](int b) {
    return Region{Buffer::send, static_cast<std::size_t>(((b % p) + p) % p) * m, m};
  };
  const Region result{Buffer::recv, 0, m};
  if (p == 1) {
    s.copy(own(0), result);
    s.finalize();
    return s;
  }
  s.rounds = p - 1;
  s.ports = 1;
  s.scratch_bytes = 2 * m;
  const auto slot = [m](int k) {
    return Region{Buffer::scratch, static_cast<std::size_t>(k % 2) * m, m};
  };
  const int next = (r + 1) % p;
  const int prev = (r + p - 1) % p;
  std::vector<OpId> step;
  for (int k = 0; k < p - 1; ++k) {
    const Region out = k == 0 ? own(r - 1) : slot(k - 1);
    const bool last = k == p - 2;
    const Region in = last ? result : slot(k);
    const OpId sent = s.send(next, layout.lanes_of[r], out, step, k);
    const OpId got = s.recv(prev, layout.lanes_of[prev], in, step, k);
    step = {sent, s.combine(own(r - 2 - k), in, {got})};
  }
  s.finalize();
  return s;
}

double cost_reduce_scatter_block_ring(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const auto b = static_cast<double>(in.bytes);
  const double hop = in.nodes > 1 ? rail_time(b, 1.0, in, m) : shm_time(b, m);
  return static_cast<double>(p - 1) * (hop + combine_time(b, m));
}

const Algorithm algorithm_reduce_scatter_block_ring{
    "ring",
    Collective::reduce_scatter_block,
    build_reduce_scatter_block_ring,
    nullptr,
    "p-1 steps, each passing one block's partial to r+1",
    cost_reduce_scatter_block_ring};

}  // namespace lanes::algos
