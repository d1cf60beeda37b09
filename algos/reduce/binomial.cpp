// Binomial-tree reduce.
//
// Source: the binomial reduce of MPICH (R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of
// Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, section 4.3), also the
// "binomial" base algorithm that K. Hasanov and A. Lastovetsky transform hierarchically
// ("Hierarchical redesign of classic MPI reduction algorithms", J. Supercomputing 73, 2017).
//
// Phases: ranks are numbered relative to the root, v = (r - root) mod p. In round j
// (0..ceil(log2 p) - 1) a rank with bit j of v set sends its partial result (its subtree
// [v, v + 2^j)) to v - 2^j and is done; a rank whose bits below j are clear and that has a child
// v + 2^j < p receives the child's partial into scratch and combines it on the right of its own,
// so every partial is the combination of its subtree in rank order. A leaf sends straight from
// its send buffer; the root's partial is its receive buffer, other ranks' partial is scratch.
//
// Cost: ceil(log2 p) (alpha + beta * m + gamma * m) for a vector of m bytes; the rounds whose
// distance 2^j reaches n ranks cross nodes; the others cost alpha_shm + max(beta_shm, gamma) m,
// a receive from the node overlapping with its combine (node_combine_time).
//
// Order: relative ranks v combine in order, so the root receives r_root (+) ... (+) r_{p-1} (+)
// r_0 (+) ... (+) r_{root-1}: rank order toward root 0 only (Algorithm::rank_order); a
// non-commutative operation reaches another root through rank 0 (reroot_reduce).
//
// Applies: any p and any layout; one-ported, each sender on the lanes it drives.
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_binomial(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "binomial", true);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const int v = (r - args.root + p) % p;
  const auto real = [&](int x) { return (x + args.root) % p; };
  const BinomialTree tree(p);
  s.rounds = tree.rounds();
  s.ports = 1;
  const bool root = v == 0;
  const Region own{Buffer::send, 0, m};
  const Region partial = root ? Region{Buffer::recv, 0, m} : Region{Buffer::scratch, 0, m};
  const Region incoming{Buffer::scratch, root ? 0 : m, m};
  bool holds_own_only = true;  // the partial is still just this rank's input
  std::vector<OpId> last;
  for (const TreeEdge& edge : tree.children_upward(v)) {
    const int child = real(edge.member);
    // The next child's vector waits until the last one was combined: they share `incoming`.
    const OpId in = s.recv(child, layout.lanes_of[child], incoming, last, edge.up_round());
    if (holds_own_only) {  // the first child's is combined with this rank's input, not a copy
      last = {s.combine_into(own, incoming, partial, {in})};
      holds_own_only = false;
      s.scratch_bytes = root ? m : 2 * m;
    } else {
      last.push_back(in);
      last = {s.combine(incoming, partial, last)};
    }
  }
  if (const auto up = tree.parent(v)) {
    s.send(real(up->member), layout.lanes_of[r], holds_own_only ? own : partial, last,
           up->up_round());
  }
  if (root && holds_own_only) s.copy(own, partial);  // p == 1
  s.finalize();
  return s;
}

double cost_reduce_binomial(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  const auto bytes = static_cast<double>(in.bytes);
  double t = 0;
  for (long long d = 1; d < p; d *= 2) {
    const bool off_node = d >= in.ppn && in.nodes > 1;
    t += off_node ? hop_time(bytes, true, in, m) + combine_time(bytes, m)
                  : node_combine_time(bytes, m);
  }
  return t;
}

const Algorithm algorithm_reduce_binomial{
    "binomial",
    Collective::reduce,
    build_reduce_binomial,
    nullptr,
    "binomial tree, each rank combines its subtree in rank order; ceil(log2 p) rounds",
    cost_reduce_binomial,
    rank_order_at_root_zero};

}  // namespace lanes::algos
