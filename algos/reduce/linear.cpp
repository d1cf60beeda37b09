// Linear (flat-tree) reduce.
//
// Source: the basic linear reduce of Open MPI (ompi_coll_base_reduce_intra_basic_linear), the
// "linear" (flat tree) base algorithm of K. Hasanov and A. Lastovetsky, "Hierarchical redesign of
// classic MPI reduction algorithms", J. Supercomputing 73, 2017 (Table 1: (p - 1)(alpha + m beta
// + m gamma)).
//
// Phases: every rank but the root sends its vector to the root. The root starts from its own
// vector in its receive buffer and takes the others one per round: first the lower ranks from
// root - 1 down to 0, each combined on the left of the partial, then the higher ranks from
// root + 1 up to p - 1, each combined on the right, so the operands stand in rank order. Messages
// land in two scratch slots used in turn: the receive of round t + 1 proceeds while round t's
// contribution is combined; round t + 2 reuses round t's slot once its combine is done.
//
// Cost: (p - 1)(alpha + beta m + gamma m) for a vector of m bytes, the root's p - 1 receives and
// combines one after the other; the n - 1 from the root's node over shared memory, the others
// over the rails, where a receive from the node overlaps with its combine: alpha_shm +
// max(beta_shm, gamma) m (node_combine_time). Rounds: p - 1 (one receive of the root each).
//
// Order: the lower ranks nearest first on the left, the higher ones in order on the right:
// r_0 (+) (... (+) (r_{root-1} (+) r_root)) (+) r_{root+1} (+) ... (+) r_{p-1}, rank order for
// every root (Algorithm::rank_order).
//
// Applies: any p and any layout; small p or tiny vectors (its latency grows as p). One-ported at
// the root; each sender on the lanes it drives.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_linear(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "linear", true);
  const int p = layout.size;
  const int r = args.rank;
  const int root = args.root;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  s.rounds = p - 1;
  s.ports = 1;
  const Region own{Buffer::send, 0, m};
  // The round in which the root takes rank x's vector.
  const auto round_of = [root](int x) { return x < root ? root - 1 - x : x - 1; };
  if (r != root) {
    s.send(root, layout.lanes_of[r], own, {}, round_of(r));
    s.finalize();
    return s;
  }
  const Region result{Buffer::recv, 0, m};
  if (p == 1) {
    s.copy(own, result);
    s.finalize();
    return s;
  }
  s.scratch_bytes = p > 2 ? 2 * m : m;
  OpId last = 0;
  std::vector<OpId> combined;  // per round, the combine that frees its slot
  for (int t = 0; t < p - 1; ++t) {
    const int x = t < root ? root - 1 - t : t + 1;
    const Region slot{Buffer::scratch, static_cast<std::size_t>(t % 2) * m, m};
    std::vector<OpId> deps;
    if (t >= 2) deps.push_back(combined[static_cast<std::size_t>(t - 2)]);
    const OpId in = s.recv(x, layout.lanes_of[x], slot, deps, t);
    // The first combine starts from the root's own vector (no copy of it first).
    last = t == 0 ? s.combine_into(own, slot, result, {in}, x < root)
                  : s.combine(slot, result, {last, in}, x < root);
    combined.push_back(last);
  }
  s.finalize();
  return s;
}

double cost_reduce_linear(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const auto bytes = static_cast<double>(in.bytes);
  const long long local = in.nodes > 1 ? in.ppn - 1 : p - 1;
  const long long remote = p - 1 - local;
  return static_cast<double>(local) * node_combine_time(bytes, m) +
         static_cast<double>(remote) * (rail_time(bytes, 1.0, in, m) + combine_time(bytes, m));
}

const Algorithm algorithm_reduce_linear{
    "linear",
    Collective::reduce,
    build_reduce_linear,
    nullptr,
    "every rank sends to the root, which combines them in rank order; p - 1 rounds",
    cost_reduce_linear,
    rank_order_always};

}  // namespace lanes::algos
