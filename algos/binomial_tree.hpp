// The binomial tree that broadcasts, scatters, gathers and reduces walk, in one place: no
// algorithm types the walk itself.
//
// Over q members numbered from the tree's root (member 0): member v != 0 hangs below
// v - lowbit(v), and its children are the members v + 2^j below q for every 2^j < lowbit(v)
// (every 2^j < q at the root). The subtree of a child c = v + 2^j holds the members
// [c, c + min(2^j, q - c)). With R = ceil(log2 q), a broadcast or scatter takes the edge of 2^j
// in round R - 1 - j (the root's largest subtree first); a gather or reduce takes it in round j.
#pragma once

#include <optional>
#include <vector>

#include "algos/schedule.hpp"

namespace lanes::algos {

struct TreeEdge {
  int member = 0;      // the member at the other end
  int level = 0;       // j: the two members are 2^j apart
  int span = 1;        // members in the subtree below the edge (the child's)
  int down_round = 0;  // R - 1 - j: the edge's round going down (broadcast, scatter)
  int up_round() const { return level; }  // the edge's round going up (gather, reduce)
  int distance() const { return 1 << level; }
};

class BinomialTree {
 public:
  explicit BinomialTree(int members);
  int members() const { return members_; }
  int rounds() const { return rounds_; }        // R
  std::optional<TreeEdge> parent(int v) const;  // none at the root
  std::vector<TreeEdge> children(int v) const;  // largest subtree first: a broadcast's send order
  std::vector<TreeEdge> children_upward(int v) const;  // smallest first: a gather's receive order
  int subtree_end(int v) const;                        // v plus the members of v's subtree
  // Whether v sends down an edge of 2^level (to a child), or up one (to its parent).
  bool sends_down(int v, int level) const;
  bool sends_up(int v, int level) const;

 private:
  int members_;
  int rounds_;
};

// One member's part of a binomial broadcast of `data` whose members are ranks rank_of(v), in
// rounds first_round + down_round: the receive from the parent (waiting for nothing), then the
// sends to the children one after the other, the first one after the receive, or after `after`
// at the tree's root. lanes(sender, edge) names the lanes of an edge's message at both ends.
struct TreeBcast {
  std::optional<OpId> received;
  std::vector<OpId> last;  // this member's last op in the tree (or `after`)
};
template <class RankOf, class Lanes>
TreeBcast append_binomial_bcast(Schedule& s, const BinomialTree& tree, int v, int first_round,
                                RankOf&& rank_of, Lanes&& lanes, Region data,
                                std::vector<OpId> after = {}) {
  TreeBcast out;
  if (const auto up = tree.parent(v)) {
    const int from = rank_of(up->member);
    out.received = s.recv(from, lanes(from, *up), data, {}, first_round + up->down_round);
    after = {*out.received};
  }
  const int me = rank_of(v);
  for (const TreeEdge& child : tree.children(v)) {
    after = {s.send(rank_of(child.member), lanes(me, child), data, after,
                    first_round + child.down_round)};
  }
  out.last = std::move(after);
  return out;
}

}  // namespace lanes::algos
