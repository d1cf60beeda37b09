// Chain (pipelined) reduce.
//
// Source: the pipeline / chain reduce of Open MPI (ompi_coll_base_reduce_intra_pipeline, a chain
// of fan-out 1 over segments; E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective
// communication: theory, practice, and experience", CCPE 19(13), 2007, for the pipelined
// reduce), one of the base algorithms that K. Hasanov and A. Lastovetsky transform
// hierarchically ("Hierarchical redesign of classic MPI reduction algorithms", J. Supercomputing
// 73, 2017; Table 1: (p + n_s - 2)(alpha + m_s beta + m_s gamma) for n_s segments of m_s bytes).
//
// Phases: ranks are numbered relative to the root, v = (r - root) mod p, and form the chain
// p - 1 -> p - 2 -> ... -> 1 -> 0. The vector is cut into S segments at element boundaries (about
// 64 KiB each, at most 64; reduce_segments). Rank v receives segment j of the partial of
// v + 1, ..., p - 1 from v + 1, combines its own contribution on the left and passes it to v - 1
// in round j + p - 1 - v; the last rank sends its own segments straight from its send buffer, and
// the root combines into its receive buffer (its own on the left). Segments travel independently:
// while segment j moves on, segment j + 1 follows one hop behind.
//
// Cost: (p - 2 + S) steps of alpha + beta m / S + gamma m / S: the first segment's p - 1 hops
// (with ranks numbered node by node, N - 1 of them between nodes, one per node boundary, each
// node's at once) and S - 1 further steps at the pace of the slowest hop; between nodes the
// segments go on the sender's lanes by turns, so beta is that of all of them; on the node a
// step is alpha_shm + max(beta_shm, gamma) m / S, the receive overlapping with its combine
// (node_combine_time). Rounds: p + S - 2.
//
// Order: every rank's own contribution on the left of the partial of the ranks after it in the
// chain: r_root (+) ... (+) r_{p-1} (+) r_0 (+) ... (+) r_{root-1}, rank order toward root 0 only
// (Algorithm::rank_order); a non-commutative operation reaches another root through rank 0
// (reroot_reduce).
//
// Applies: any p and any layout; long vectors, where S segments hide the chain's length. One-
// ported; each sender on the lanes it drives.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/reduce/tree.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_chain(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "chain", true);
  const int p = layout.size;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const int v = (args.rank - args.root + p) % p;
  const auto real = [&](int x) { return (x + args.root) % p; };
  const int segments = reduce_segments(m, args.elem);
  s.rounds = p > 1 ? p + segments - 2 : 0;
  s.ports = 1;
  TreeLinks links;
  links.base = p - 1 - v;
  if (v > 0) links.parent = real(v - 1);
  if (v + 1 < p) links.children.push_back({real(v + 1), p - 2 - v});
  reduce_up_tree(s, layout, args.rank, m, args.elem, segments, 1, links, {Buffer::recv, 0, m}, 0);
  s.finalize();
  return s;
}

double cost_reduce_chain(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const int segments = reduce_segments(in.bytes, 1);
  const double seg = static_cast<double>(in.bytes) / segments;
  const double local = node_combine_time(seg, m);
  // One rank per node sends off the node: the last of the node to the first of the next, its
  // segments one after another, on its lanes by turns.
  const double remote = stream_time(seg, 1.0, in, m) + combine_time(seg, m);
  const long long crossings = in.nodes - 1;
  const double first =
      static_cast<double>(p - 1 - crossings) * local + static_cast<double>(crossings) * remote;
  return first + static_cast<double>(segments - 1) * (crossings > 0 ? remote : local);
}

const Algorithm algorithm_reduce_chain{
    "chain",
    Collective::reduce,
    build_reduce_chain,
    nullptr,
    "segments pipelined along the chain p-1 -> ... -> 0 relative to the root",
    cost_reduce_chain,
    rank_order_at_root_zero};

}  // namespace lanes::algos
