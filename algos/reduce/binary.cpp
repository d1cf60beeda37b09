// Binary-tree reduce, segmented.
//
// Source: the binary-tree reduce of Open MPI (ompi_coll_base_reduce_intra_binary over the tree of
// ompi_coll_base_topo_build_tree with fan-out 2, segmented), one of the base algorithms that
// K. Hasanov and A. Lastovetsky transform hierarchically ("Hierarchical redesign of classic MPI
// reduction algorithms", J. Supercomputing 73, 2017; Table 1: 2 (log2(p + 1) + n_s - 2)
// (alpha + m_s beta + m_s gamma) for n_s segments of m_s bytes).
//
// Phases: ranks are numbered relative to the root, v = (r - root) mod p, and placed in a complete
// binary tree in heap order: the children of v are 2v + 1 (left) and 2v + 2 (right), its depth is
// d(v) = floor(log2(v + 1)), the tree's height H = floor(log2 p). The vector is cut into S
// segments at element boundaries (about 64 KiB each, at most 64; reduce_segments). Every rank
// receives segment j of both children's partials, combines its own on the left, then the left
// child's, then the right child's, and sends the result to its parent in round
// 2 (j + H - d(v)) + (0 for a left child, 1 for a right child): a parent takes its two children
// one round after the other, so every rank sends at most one and receives at most one message
// per round. The root combines into its receive buffer.
//
// Cost: 2 (S + H - 1) steps (2 S - 1 for p = 2) of alpha + beta m / S + gamma m / S, every step
// priced as a hop between nodes as soon as there are several (the deep levels of the heap join
// ranks far apart, every rank of a node sending at once); on one node, alpha_shm +
// max(beta_shm, gamma) m / S, the receive overlapping with its combine (node_combine_time).
// Rounds: the same count.
//
// Order: a rank, then its left subtree, then its right one, in heap order: not rank order (four
// ranks: r_0 (+) (r_1 (+) r_3) (+) r_2); see in-order-binary.
//
// Applies: any p and any layout. Segments pipeline along the tree's 2 H levels; the combination
// order is fixed but not rank order (see in-order-binary).
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/reduce/tree.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_binary(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "binary", true);
  const int p = layout.size;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const int v = (args.rank - args.root + p) % p;
  const auto real = [&](int x) { return (x + args.root) % p; };
  const int segments = reduce_segments(m, args.elem);
  const int height = floor_log2(p);
  const auto base = [&](int x) { return 2 * (height - floor_log2(x + 1)) + (x % 2 == 0 ? 1 : 0); };
  s.rounds = binary_tree_rounds(p, segments);
  s.ports = 1;
  TreeLinks links;
  if (v > 0) {
    links.parent = real((v - 1) / 2);
    links.base = base(v);
  }
  for (const int c : {2 * v + 1, 2 * v + 2}) {
    if (c < p) links.children.push_back({real(c), base(c)});
  }
  reduce_up_tree(s, layout, args.rank, m, args.elem, segments, 2, links, {Buffer::recv, 0, m}, 0);
  s.finalize();
  return s;
}

double cost_reduce_binary(const CostInput& in, const MachineParams& m) {
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

const Algorithm algorithm_reduce_binary{
    "binary",
    Collective::reduce,
    build_reduce_binary,
    nullptr,
    "segments pipelined up a heap-ordered binary tree, two rounds per level",
    cost_reduce_binary};

}  // namespace lanes::algos
