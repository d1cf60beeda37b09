// The segmented reduction up a tree that the chain and the binary-tree reduces share.
//
// A vector of m bytes is cut into S segments at element boundaries (vector_part); every rank
// receives segment j of each child's partial result into its own scratch area for that child,
// combines its own contribution on the left of its children's partials (in the children's order),
// and sends the segment on to its parent; the tree's root combines into an output region. Segments
// are independent, so segment j + 1 travels up the lower levels while segment j is higher up.
//
// Rounds: a rank sends segment j in round step * j + base, where base is its place in the tree
// (chain: its distance from the far end; binary trees: two rounds per level, left child first).
#pragma once

#include <cstddef>
#include <vector>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

// Segments of a pipelined reduction of `bytes` (element size `elem`): about 64 KiB each, at most
// 64 (so that no pair exchanges more messages than a tag numbers) and at most one per element.
int reduce_segments(std::size_t bytes, std::size_t elem);

// Rounds of the segmented reduction up a binary tree of p ranks and height floor(log2 p) in which
// a rank at depth d sends segment j in round 2 (j + height - d) + (1 for a right child): the root's
// last receive is from its right child (its left one when p = 2).
int binary_tree_rounds(long long p, int segments);

struct TreeLinks {
  int parent = -1;  // -1: the tree's root
  int base = 0;     // this rank sends segment j to its parent in round step * j + base
  struct Child {
    int rank = 0;
    int base = 0;  // the child's own base
  };
  std::vector<Child> children;  // combined on the right of this rank's contribution, in order
};

// Adds one rank's part of the tree reduction of `bytes` to `s`: `out` is the tree root's result
// (ignored elsewhere), the children's partials use scratch from `scratch_at` on (one vector per
// child). Returns, per segment, the op after which this rank is done with it: its send to the
// parent, or at the tree's root the last combine into `out`.
std::vector<OpId> reduce_up_tree(Schedule& s, const Layout& layout, int rank, std::size_t bytes,
                                 std::size_t elem, int segments, int step, const TreeLinks& links,
                                 Region out, std::size_t scratch_at);

}  // namespace lanes::algos
