// Small helpers every algorithm uses.
#pragma once

#include <algorithm>
#include <string_view>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

int ceil_log2(int p);   // smallest r with 2^r >= p (0 for p <= 1)
int floor_log2(int x);  // largest r with 2^r <= x, for x >= 1

// The fold of p ranks onto the largest power of two q <= p that recursive doubling and halving
// start and end with (R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005): with e = p - q,
// ranks 2i and 2i + 1 (i < e) form a pair whose even rank plays virtual rank i and whose odd rank
// sits out, handing its contribution over first and taking the result last; every rank r >= 2e
// plays virtual rank r - e.
struct PowerOfTwoFold {
  int levels;  // log2 q
  int q;
  int extra;  // e
  explicit PowerOfTwoFold(int p) : levels(floor_log2(p)), q(1 << levels), extra(p - q) {}
  bool folded() const { return extra > 0; }
  bool paired(int r) const { return r < 2 * extra; }
  bool sits_out(int r) const { return paired(r) && r % 2 == 1; }
  int virtual_of(int r) const { return paired(r) ? r / 2 : r - extra; }
  int real(int v) const { return v < extra ? 2 * v : v + extra; }  // the even rank of pair v
};

// The lanes of an off-node transfer from `sender` in a round in which `sends_off(x)` tells
// whether rank x sends off its node: every lane of the node when no other rank of the sender's
// node does, else the lanes the sender drives (the rule the simulator checks). Sender and
// receiver call it alike, so both name the same lanes.
template <class SendsOff>
LaneSet round_lanes(const Layout& layout, int sender, SendsOff&& sends_off) {
  for (const int x : layout.node_ranks[static_cast<std::size_t>(layout.node_of[sender])]) {
    if (x != sender && sends_off(x)) return layout.lanes_of[sender];
  }
  return layout.all_lanes();
}

// Part i of a vector of `bytes` bytes cut into `parts` near-equal parts at `elem`-byte element
// boundaries, the larger parts first (a part may be empty when there are fewer elements).
struct VectorPart {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};
VectorPart vector_part(std::size_t bytes, std::size_t elem, int parts, int i);

// For Algorithm::applicable: every node holds the same number of ranks.
bool regular_layout(const Layout& layout);

// Every node holds consecutive ranks (node u: ranks first_u .. first_u + n_u - 1), so that the
// nodes' order and their local ranks' order together are the rank order.
bool consecutive_nodes(const Layout& layout);

// For Algorithm::rank_order (registry.hpp): in rank order on every layout and root; toward root 0
// only (trees numbered relative to the root combine a rotation of the rank order otherwise); on
// layouts of consecutive nodes whose NUMA domains hold consecutive local ranks (node-aware
// algorithms that combine node by node, and on a node domain by domain, local ranks in order);
// and that toward a root on node 0.
bool rank_order_always(const Layout& layout, int root);
bool rank_order_at_root_zero(const Layout& layout, int root);
bool rank_order_on_consecutive_nodes_and_domains(const Layout& layout, int root);
bool rank_order_on_consecutive_nodes_and_domains_root_node_zero(const Layout& layout, int root);

// A reduce to `args.root` through rank 0, for algorithms in rank order toward root 0 only:
// `at_zero` is this rank's schedule (args.rank) of the reduce to root 0. Rank 0 combines into
// scratch instead of its receive buffer and sends the result on; the root receives it after all
// its own ops (in place, they still read its send buffer, which the result overwrites). One more
// round for both, numbered after this rank's last (the rounds every rank claims must be equal).
Schedule reroot_reduce(Schedule at_zero, const Layout& layout, const CollArgs& args);

// Throws lanes::Error(invalid_argument) when args.rank (or, with `rooted`, args.root) lies outside
// the layout, naming the algorithm.
void check_args(const Layout& layout, const CollArgs& args, std::string_view algorithm,
                bool rooted);

}  // namespace lanes::algos
