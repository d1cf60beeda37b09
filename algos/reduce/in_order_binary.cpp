// In-order binary-tree reduce, segmented: the combination follows rank order whatever the root,
// for operations that do not commute.
//
// Source: the in-order binary reduce of Open MPI (ompi_coll_base_reduce_intra_in_order_binary over
// ompi_coll_base_topo_build_in_order_bintree: a binary tree whose subtrees are ranges of
// consecutive ranks, rooted at a fixed rank, which sends the result to the reduce's root when that
// is another rank), one of the base algorithms that K. Hasanov and A. Lastovetsky transform
// hierarchically ("Hierarchical redesign of classic MPI reduction algorithms", J. Supercomputing
// 73, 2017). Here the tree is its mirror image: rooted at rank 0 instead of p - 1.
//
// Phases: the subtree of rank lo is a range [lo, hi] of ranks; [lo + 1, hi] is split into a first
// range of ceil((hi - lo) / 2) ranks, the first child's subtree (rooted at lo + 1), and the rest,
// the second child's. The whole tree is [0, p - 1], of height H = floor(log2 p). Every rank
// combines its own contribution, then its first child's partial, then its second child's: each
// partial is its range in rank order. The vector is cut into S segments at element boundaries
// (about 64 KiB each, at most 64; reduce_segments); a rank at depth d sends segment j to its parent
// in round 2 (j + H - d) (+1 for a second child), so a parent takes its children one round after
// the other. When the root is not rank 0, rank 0 keeps the result in scratch and passes segment j
// to the root in round 2 (j + H), which receives it into its receive buffer once it sent its own
// segment j up the tree (in place, the result overwrites its input).
//
// Cost: as binary, 2 (S + H - 1) steps (2 S - 1 for p = 2) of alpha + beta m / S + gamma m / S,
// priced as hops between nodes when there are several (on one node as in binary); a root other than
// rank 0 adds one more step at the end (not priced: the cost model does not know the root). Rounds:
// 2 (S + H - 1), or 2 (S + H) - 1 with the final hop.
//
// Order: every subtree is a range of consecutive ranks combined as its first rank, its first
// child's range, its second child's range: rank order for every root (Algorithm::rank_order).
//
// Applies: any p and any layout; where the operands must be combined in rank order. One-ported
// (but for a root other than 0, which may take a tree segment and a result segment in one round).
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/reduce/tree.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_in_order_binary(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "in-order-binary", true);
  const int p = layout.size;
  const int r = args.rank;
  const int root = args.root;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const int segments = reduce_segments(m, args.elem);
  const int height = floor_log2(p);
  const bool final_hop = root != 0;
  s.rounds = final_hop ? 2 * (segments + height) - 1 : binary_tree_rounds(p, segments);
  s.ports = final_hop ? 0 : 1;
  const auto base = [height](int depth, int second) { return 2 * (height - depth) + second; };

  // Find r's range [lo, hi] from the top.
  TreeLinks links;
  int lo = 0;
  int hi = p - 1;
  int depth = 0;
  while (lo != r) {
    const int first_end = lo + (hi - lo + 1) / 2;
    links.parent = lo;
    ++depth;
    if (r <= first_end) {
      links.base = base(depth, 0);
      lo = lo + 1;
      hi = first_end;
    } else {
      links.base = base(depth, 1);
      lo = first_end + 1;
    }
  }
  const int first_end = lo + (hi - lo + 1) / 2;
  if (first_end > lo) links.children.push_back({lo + 1, base(depth + 1, 0)});
  if (first_end < hi) links.children.push_back({first_end + 1, base(depth + 1, 1)});

  const std::size_t kids = links.children.size();
  const Region result =
      r == 0 && final_hop ? Region{Buffer::scratch, kids * m, m} : Region{Buffer::recv, 0, m};
  const std::vector<OpId> done =
      reduce_up_tree(s, layout, r, m, args.elem, segments, 2, links, result, 0);
  if (final_hop && (r == 0 || r == root)) {
    if (r == 0) s.scratch_bytes = (kids + 1) * m;
    for (int j = 0; j < segments; ++j) {
      const VectorPart part = vector_part(m, args.elem, segments, j);
      const int round = 2 * (j + height);
      const std::size_t j_at = static_cast<std::size_t>(j);
      if (r == 0) {
        s.send(root, layout.lanes_of[r], {Buffer::scratch, kids * m + part.offset, part.bytes},
               {done[j_at]}, round);
      } else {
        s.recv(0, layout.lanes_of[0], {Buffer::recv, part.offset, part.bytes}, {done[j_at]}, round);
      }
    }
  }
  s.finalize();
  return s;
}

double cost_reduce_in_order_binary(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const int segments = reduce_segments(in.bytes, 1);
  const double seg = static_cast<double>(in.bytes) / segments;
  // Each link carries its segments one after another, off the node on the sender's lanes by
  // turns, while every rank of a node sends at once.
  const double step =
      in.nodes > 1 ? stream_time(seg, static_cast<double>(in.ppn), in, m) + combine_time(seg, m)
                   : node_combine_time(seg, m);
  return binary_tree_rounds(p, segments) * step;
}

const Algorithm algorithm_reduce_in_order_binary{
    "in-order-binary",
    Collective::reduce,
    build_reduce_in_order_binary,
    nullptr,
    "binary tree of rank ranges rooted at 0, combined in rank order; a hop to the root",
    cost_reduce_in_order_binary,
    rank_order_always};

}  // namespace lanes::algos
