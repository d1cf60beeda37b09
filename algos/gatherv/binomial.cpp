// Binomial-tree gatherv.
//
// Source: the binomial gather of MPICH's MPIR_Gather_intra_binomial (R. Thakur, R. Rabenseifner,
// W. Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005),
// as gather/binomial.cpp, with blocks of per-rank sizes: every rank knows every rank's size, so
// each member of the tree knows how many bytes its subtree holds. The mirror image of the
// binomial scatterv.
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p, and walk the
// binomial tree (binomial_tree.hpp). A member receives from each child (smallest subtree first,
// one after the other) that child's subtree, packed in relative-rank order, then sends its whole
// subtree to its parent. Intermediate members collect their subtree in scratch, their own block
// copied in first; leaves send straight from the send buffer. The root receives a child's
// subtree straight into its receive buffer where the blocks lie there back to back in
// relative-rank order, and otherwise into scratch, from where each block is copied to its
// displacement. Empty subtrees send nothing (every rank builds from the same sizes, agreed before).
//
// Cost: ceil(log2 p) * alpha + beta * sum_{i != root} m_i (the root receives every block but its
// own once), plus the root's unpacking copies where its blocks are not in order.
//
// Applies: any p and any layout. Not local: every rank needs every rank's size.
#include <optional>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule build_gatherv_binomial(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "binomial");
  const int p = layout.size;
  const int rank = args.rank;
  const int root = args.root;
  Schedule s;
  const auto actual = [&](int v) { return (v + root) % p; };
  const auto rel = [&](int x) { return (x - root + p) % p; };
  const auto block_of = [&](int v) { return args.blocks[static_cast<std::size_t>(actual(v))]; };
  const auto span_bytes = [&](int from, int to) {
    std::size_t n = 0;
    for (int v = from; v < to; ++v) n += block_of(v).bytes;
    return n;
  };
  const Block own = args.blocks[static_cast<std::size_t>(rank)];
  if (p == 1) {
    if (own.bytes > 0) s.copy({Buffer::send, 0, own.bytes}, {Buffer::recv, own.offset, own.bytes});
    s.finalize();
    return s;
  }
  const BinomialTree tree(p);
  s.rounds = tree.rounds();
  const int vr = rel(rank);
  const auto lanes_at = [&](int sender, const TreeEdge& edge) {
    return round_lanes(layout, sender, [&](int x) {
      return tree.sends_up(rel(x), edge.level) &&
             !layout.same_node(x, actual(rel(x) - edge.distance()));
    });
  };

  std::optional<OpId> last;  // receives are taken one after the other
  const auto chained = [&] { return last ? std::vector<OpId>{*last} : std::vector<OpId>{}; };
  if (vr == 0) {
    if (own.bytes > 0) s.copy({Buffer::send, 0, own.bytes}, {Buffer::recv, own.offset, own.bytes});
    std::size_t packed = 0;
    for (const TreeEdge& edge : tree.children_upward(0)) {
      const int first = edge.member;
      const int end = edge.member + edge.span;
      const std::size_t bytes = span_bytes(first, end);
      if (bytes == 0) continue;
      const std::optional<std::size_t> start = back_to_back(args.blocks, root, first, end);
      const int child = actual(first);
      const LaneSet lane = lanes_at(child, edge);
      if (start) {
        last = s.recv(child, lane, {Buffer::recv, *start, bytes}, chained(), edge.up_round());
        continue;
      }
      last = s.recv(child, lane, {Buffer::scratch, packed, bytes}, chained(), edge.up_round());
      std::size_t at = packed;
      for (int v = first; v < end; ++v) {
        const Block b = block_of(v);
        if (b.bytes == 0) continue;
        s.copy({Buffer::scratch, at, b.bytes}, {Buffer::recv, b.offset, b.bytes}, {*last});
        at += b.bytes;
      }
      packed += bytes;
    }
    s.scratch_bytes = packed;
    s.finalize();
    return s;
  }

  const TreeEdge up = *tree.parent(vr);
  const std::size_t total = span_bytes(vr, vr + up.span);
  if (total == 0) {
    s.finalize();
    return s;
  }
  const int parent = actual(up.member);
  const LaneSet my_lane = lanes_at(rank, up);
  if (up.span == 1) {
    s.send(parent, my_lane, {Buffer::send, 0, own.bytes}, {}, up.up_round());
    s.finalize();
    return s;
  }
  s.scratch_bytes = total;
  std::vector<OpId> have;
  if (own.bytes > 0)
    have.push_back(s.copy({Buffer::send, 0, own.bytes}, {Buffer::scratch, 0, own.bytes}));
  for (const TreeEdge& edge : tree.children_upward(vr)) {
    const std::size_t bytes = span_bytes(edge.member, edge.member + edge.span);
    if (bytes == 0) continue;
    const int child = actual(edge.member);
    last =
        s.recv(child, lanes_at(child, edge), {Buffer::scratch, span_bytes(vr, edge.member), bytes},
               chained(), edge.up_round());
    have.push_back(*last);
  }
  s.send(parent, my_lane, {Buffer::scratch, 0, total}, have, up.up_round());
  s.finalize();
  return s;
}

const VAlgorithm valgorithm_gatherv_binomial{
    "binomial", VCollective::gatherv, build_gatherv_binomial, false,
    "binomial tree, each member sends its subtree's blocks packed; ceil(log2 p) rounds"};

}  // namespace lanes::algos
