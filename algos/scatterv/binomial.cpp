// Binomial-tree scatterv.
//
// Source: the binomial scatter of MPICH's MPIR_Scatter_intra_binomial (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005), as scatter/binomial.cpp, with blocks of per-rank sizes: every rank knows
// every rank's size, so each member of the tree knows how many bytes its subtree holds.
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p, and walk the
// binomial tree (binomial_tree.hpp). A member receives its whole subtree's blocks, packed in
// relative-rank order, from its parent, then sends each child (largest subtree first) that
// child's subtree, a contiguous stretch of what it received. Intermediate members keep their
// subtree in scratch and copy their own block out; leaves receive straight into the receive
// buffer. The root sends a child's subtree straight from its send buffer where the blocks lie
// there back to back in relative-rank order (displacements that are prefix sums of the sizes,
// except across the wrap past rank p - 1), and otherwise packs them into scratch first. Empty
// subtrees send nothing (every rank builds from the same sizes, agreed before).
//
// Cost: ceil(log2 p) * alpha + beta * sum_{i != root} m_i (the root sends every block but its
// own once), plus the root's packing copies where its blocks are not in order.
//
// Applies: any p and any layout. Not local: every rank needs every rank's size.
#include <optional>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule build_scatterv_binomial(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "binomial");
  const int p = layout.size;
  const int rank = args.rank;
  const int root = args.root;
  Schedule s;
  const auto actual = [&](int v) { return (v + root) % p; };
  const auto rel = [&](int x) { return (x - root + p) % p; };
  const auto size_of = [&](int v) {
    return args.blocks[static_cast<std::size_t>(actual(v))].bytes;
  };
  // bytes of members [from, to) packed
  const auto span_bytes = [&](int from, int to) {
    std::size_t n = 0;
    for (int v = from; v < to; ++v) n += size_of(v);
    return n;
  };
  const Block own = args.blocks[static_cast<std::size_t>(rank)];
  if (p == 1) {
    if (own.bytes > 0) s.copy({Buffer::send, own.offset, own.bytes}, {Buffer::recv, 0, own.bytes});
    s.finalize();
    return s;
  }
  const BinomialTree tree(p);
  s.rounds = tree.rounds();
  const int vr = rel(rank);
  const auto lanes_at = [&](int sender, const TreeEdge& edge) {
    return round_lanes(layout, sender, [&](int x) {
      return tree.sends_down(rel(x), edge.level) &&
             !layout.same_node(x, actual(rel(x) + edge.distance()));
    });
  };

  std::vector<OpId> after;  // what the sends to children wait for
  if (const auto up = tree.parent(vr)) {
    const std::size_t total = span_bytes(vr, vr + up->span);
    if (total == 0) {
      s.finalize();
      return s;  // nothing below this member: neither receives nor sends
    }
    const int parent = actual(up->member);
    const LaneSet lane = lanes_at(parent, *up);
    if (up->span == 1) {
      s.recv(parent, lane, {Buffer::recv, 0, own.bytes}, {}, up->down_round);
      s.finalize();
      return s;
    }
    s.scratch_bytes = total;
    after.push_back(s.recv(parent, lane, {Buffer::scratch, 0, total}, {}, up->down_round));
    if (own.bytes > 0) s.copy({Buffer::scratch, 0, own.bytes}, {Buffer::recv, 0, own.bytes}, after);
    for (const TreeEdge& edge : tree.children(vr)) {
      const std::size_t bytes = span_bytes(edge.member, edge.member + edge.span);
      if (bytes == 0) continue;
      const std::size_t at = span_bytes(vr, edge.member);
      after = {s.send(actual(edge.member), lanes_at(rank, edge), {Buffer::scratch, at, bytes},
                      after, edge.down_round)};
    }
    s.finalize();
    return s;
  }
  // The root.
  if (own.bytes > 0) s.copy({Buffer::send, own.offset, own.bytes}, {Buffer::recv, 0, own.bytes});
  std::size_t packed = 0;  // scratch used for subtrees whose blocks are out of order
  for (const TreeEdge& edge : tree.children(0)) {
    const int first = edge.member;
    const int end = edge.member + edge.span;
    const std::size_t bytes = span_bytes(first, end);
    if (bytes == 0) continue;
    const std::optional<std::size_t> start = back_to_back(args.blocks, root, first, end);
    Region src{Buffer::send, start.value_or(0), bytes};
    std::vector<OpId> ready = after;
    if (!start) {
      src = {Buffer::scratch, packed, bytes};
      std::size_t at = packed;
      for (int v = first; v < end; ++v) {
        const Block b = args.blocks[static_cast<std::size_t>(actual(v))];
        if (b.bytes == 0) continue;
        ready.push_back(s.copy({Buffer::send, b.offset, b.bytes}, {Buffer::scratch, at, b.bytes}));
        at += b.bytes;
      }
      packed += bytes;
    }
    after = {s.send(actual(first), lanes_at(rank, edge), src, ready, edge.down_round)};
  }
  s.scratch_bytes = packed;
  s.finalize();
  return s;
}

const VAlgorithm valgorithm_scatterv_binomial{
    "binomial", VCollective::scatterv, build_scatterv_binomial, false,
    "binomial tree, each child gets its subtree's blocks packed; ceil(log2 p) rounds"};

}  // namespace lanes::algos
