// Binomial-tree broadcast.
//
// Source: the classic binomial tree, as in MPICH's MPIR_Bcast_intra_binomial (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005).
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p. A rank vr != 0
// receives the whole message from vr - lowbit(vr); then every rank sends it to vr + 2^j for each
// 2^j < lowbit(vr) (every 2^j < p at the root), largest subtree first, one send after the other.
// The child vr + 2^j is reached in round R - 1 - j, R = ceil(log2 p).
//
// Cost: ceil(log2 p) * (alpha + beta * m) for m bytes.
//
// Lanes: a sender that is the only rank of its node sending off the node in its round (with
// nodes of consecutive ranks, every off-node round) uses all of the node's lanes, else the lanes
// it drives.
//
// Applies: any p and any layout. Latency-optimal for small messages in the one-ported model;
// for large m every round moves the whole message.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_bcast_binomial(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "binomial", true);
  const int p = layout.size;
  Schedule s;
  if (p == 1 || args.bytes == 0) return s;
  const BinomialTree tree(p);
  s.rounds = tree.rounds();
  const int vr = (args.rank - args.root + p) % p;
  const auto actual = [&](int v) { return (v + args.root) % p; };
  const auto rel = [&](int x) { return (x - args.root + p) % p; };
  // A sender alone off its node in its round uses all of the node's lanes (round_lanes).
  const auto lanes = [&](int sender, const TreeEdge& edge) {
    return round_lanes(layout, sender, [&](int x) {
      return tree.sends_down(rel(x), edge.level) &&
             !layout.same_node(x, actual(rel(x) + edge.distance()));
    });
  };
  append_binomial_bcast(s, tree, vr, 0, actual, lanes, {Buffer::recv, 0, args.bytes});
  s.finalize();
  return s;
}

// Cost: the first rounds (partners 2^j >= n ranks apart) cross nodes; then only one rank per
// node holds the data, so one flow per node uses all of the node's rails, and a subtree root's
// copies leave together (binomial_tree_time). The last ceil(log2 n) rounds copy on-node.
double cost_bcast_binomial(const CostInput& in, const MachineParams& m) {
  return binomial_tree_time(static_cast<double>(in.bytes), in, m, Spread::node);
}

const Algorithm algorithm_bcast_binomial{"binomial",
                                         Collective::bcast,
                                         build_bcast_binomial,
                                         nullptr,
                                         "binomial tree, ceil(log2 p) rounds of the whole message",
                                         cost_bcast_binomial};

}  // namespace lanes::algos
