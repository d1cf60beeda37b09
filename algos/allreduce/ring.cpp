// Ring allreduce: a ring reduce-scatter, then a ring allgather.
//
// Source: P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", JPDC 69(2), 2009; the reduce-scatter plus allgather structure of R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005.
//
// Phases: the vector is cut into p parts at element boundaries (part c: vector_part(c)).
//  1. Reduce-scatter, steps s = 0..p-2: rank r sends part (r - s) mod p to r + 1 and receives
//     part (r - s - 1) mod p from r - 1 into scratch, combining the received partial on the left
//     of its own contribution. After p - 1 steps rank r holds part (r + 1) mod p complete,
//     combined in ring order starting at the part's index, the same bits wherever it goes next.
//  2. Allgather, steps s = 0..p-2: rank r sends part (r + 1 - s) mod p to r + 1 and receives part
//     (r - s) mod p from r - 1 straight into its result.
// Each step waits for the previous one (the scratch part is reused); empty parts (fewer elements
// than ranks) send nothing.
//
// Cost: beta_shm m (the input's copy into the result) + 2 (p - 1) (alpha + beta * m / p) +
// (p - 1) gamma * m / p for a vector of m bytes: every rank sends and receives 2 (p - 1) / p of
// the vector, the bandwidth optimum; p - 1 start-ups per phase, so for long vectors. With ranks
// numbered node by node, only the hops between the last rank of one node and the first of the next
// leave a node, all nodes' at once, each on the sender's lanes.
//
// Order: each part in ring order from the part's index, a rotation of the rank order: not for
// non-commutative operations.
//
// Applies: any p and any layout.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allreduce_ring(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "ring", false);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const Region result{Buffer::recv, 0, m};
  OpId last = s.copy({Buffer::send, 0, m}, result);
  if (p == 1) {
    s.finalize();
    return s;
  }
  const int next = (r + 1) % p;
  const int prev = (r + p - 1) % p;
  const auto part = [&](int c) {
    const VectorPart v = vector_part(m, args.elem, p, ((c % p) + p) % p);
    return Region{Buffer::recv, v.offset, v.bytes};
  };
  s.scratch_bytes = vector_part(m, args.elem, p, 0).bytes;  // the largest part
  s.rounds = 2 * (p - 1);
  s.ports = 1;
  std::vector<OpId> step{last};
  for (int k = 0; k < p - 1; ++k) {
    const Region out = part(r - k);
    const Region in = part(r - k - 1);
    std::vector<OpId> done;
    if (out.bytes > 0) done.push_back(s.send(next, layout.lanes_of[r], out, step, k));
    if (in.bytes > 0) {
      const Region landed{Buffer::scratch, 0, in.bytes};
      const OpId got = s.recv(prev, layout.lanes_of[prev], landed, step, k);
      done.push_back(s.combine(landed, in, {got}, true));
    }
    if (!done.empty()) step = done;
  }
  for (int k = 0; k < p - 1; ++k) {
    const Region out = part(r + 1 - k);
    const Region in = part(r - k);
    std::vector<OpId> done;
    if (out.bytes > 0) done.push_back(s.send(next, layout.lanes_of[r], out, step, p - 1 + k));
    if (in.bytes > 0) done.push_back(s.recv(prev, layout.lanes_of[prev], in, step, p - 1 + k));
    if (!done.empty()) step = done;
  }
  s.finalize();
  return s;
}

double cost_allreduce_ring(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const double part = static_cast<double>(in.bytes) / static_cast<double>(p);
  const bool off = in.nodes > 1;
  // A step ends when its slowest hop does: a hop between nodes when there are several.
  const double hop = off ? rail_time(part, 1.0, in, m) : shm_time(part, m);
  // The input's copy into the result comes first.
  return static_cast<double>(in.bytes) * m.beta_shm +
         static_cast<double>(p - 1) * (2 * hop + combine_time(part, m));
}

const Algorithm algorithm_allreduce_ring{
    "ring",
    Collective::allreduce,
    build_allreduce_ring,
    nullptr,
    "ring reduce-scatter then ring allgather of p parts; 2(p-1) steps, bandwidth-optimal",
    cost_allreduce_ring};

}  // namespace lanes::algos
