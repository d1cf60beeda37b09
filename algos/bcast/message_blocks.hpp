// The broadcasts that cut the message into blocks (scatter + allgather, full-lane) share these.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

// Offset of block i of `bytes` cut into q blocks (the first bytes mod q blocks are one larger).
inline std::size_t block_offset(std::size_t bytes, int q, int i) {
  const auto n = static_cast<std::size_t>(q);
  const auto u = static_cast<std::size_t>(i);
  return u * (bytes / n) + std::min(u, bytes % n);
}

// Blocks [first, last) of the receive buffer (empty when first >= last).
inline Region blocks(std::size_t bytes, int q, int first, int last) {
  if (first >= last) return {Buffer::recv, 0, 0};
  const std::size_t begin = block_offset(bytes, q, first);
  return {Buffer::recv, begin, block_offset(bytes, q, last) - begin};
}

// One member's part of the binomial scatter (binomial_tree.hpp) of `bytes` cut into q blocks over
// q members, member v being rank rank_of(v) and block v its own, from round 0: a member receives
// its subtree's blocks from its parent over the lanes the parent drives, then sends each child
// its subtree's blocks, largest first, one after the other, over the lanes it drives. Empty
// messages (fewer bytes than blocks) are left out.
struct BlockScatter {
  std::optional<OpId> received;  // the receive of this member's subtree
  std::vector<OpId> ops;         // every op of the scatter
  int first = 0;                 // the member holds blocks [first, end) afterwards
  int end = 0;
};
template <class RankOf>
BlockScatter append_block_scatter(Schedule& s, const Layout& layout, int q, int v,
                                  std::size_t bytes, RankOf&& rank_of) {
  const BinomialTree tree(q);
  BlockScatter out{std::nullopt, {}, v, tree.subtree_end(v)};
  std::vector<OpId> after;
  if (const auto up = tree.parent(v)) {
    const Region subtree = blocks(bytes, q, out.first, out.end);
    if (subtree.bytes > 0) {
      const int from = rank_of(up->member);
      out.received = s.recv(from, layout.lanes_of[from], subtree, {}, up->down_round);
      after = {*out.received};
      out.ops.push_back(*out.received);
    }
  }
  const LaneSet mine = layout.lanes_of[rank_of(v)];
  for (const TreeEdge& child : tree.children(v)) {
    const Region part = blocks(bytes, q, child.member, child.member + child.span);
    if (part.bytes == 0) continue;
    after = {s.send(rank_of(child.member), mine, part, after, child.down_round)};
    out.ops.push_back(after.front());
  }
  return out;
}

}  // namespace lanes::algos
