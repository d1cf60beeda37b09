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

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_bcast_binomial(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "binomial", true);
  const int p = layout.size;
  Schedule s;
  if (p == 1 || args.bytes == 0) return s;
  const int rounds = ceil_log2(p);
  s.rounds = rounds;
  const int vr = (args.rank - args.root + p) % p;
  const auto actual = [&](int v) { return (v + args.root) % p; };
  const Region data{Buffer::recv, 0, args.bytes};

  // Children are vr + mask for mask below `limit`: lowbit(vr), or 2^R at the root.
  const auto rel = [&](int x) { return (x - args.root + p) % p; };
  const auto lanes_at = [&](int sender, int mask) {
    return round_lanes(layout, sender, [&](int x) {
      const int v = rel(x);
      return (v == 0 || mask < (v & -v)) && v + mask < p && !layout.same_node(x, actual(v + mask));
    });
  };
  int limit = 1 << rounds;
  std::vector<OpId> after;
  if (vr != 0) {
    const int low = vr & -vr;
    const int parent = actual(vr - low);
    after.push_back(s.recv(parent, lanes_at(parent, low), data, {}, rounds - 1 - floor_log2(low)));
    limit = low;
  }
  for (int mask = limit >> 1; mask > 0; mask >>= 1) {
    if (vr + mask >= p) continue;
    const int child = actual(vr + mask);
    after = {s.send(child, lanes_at(args.rank, mask), data, after, rounds - 1 - floor_log2(mask))};
  }
  s.finalize();
  return s;
}

// Cost: the first rounds (partners 2^j >= n ranks apart) cross nodes; then only one rank per
// node holds the data, so one flow per node uses all of the node's rails, and a subtree root's
// copies leave together (binomial_tree_time). The last ceil(log2 n) rounds copy on-node.
double cost_bcast_binomial(const CostInput& in, const MachineParams& m) {
  return binomial_tree_time(static_cast<double>(in.bytes), in, m, Spread::node);
}

}  // namespace lanes::algos
