#include "algos/binomial_tree.hpp"

#include <algorithm>

#include "algos/common.hpp"

namespace lanes::algos {

BinomialTree::BinomialTree(int members) : members_(members), rounds_(ceil_log2(members)) {}

std::optional<TreeEdge> BinomialTree::parent(int v) const {
  if (v == 0) return std::nullopt;
  const int low = v & -v;
  const int level = floor_log2(low);
  return TreeEdge{v - low, level, std::min(low, members_ - v), rounds_ - 1 - level};
}

std::vector<TreeEdge> BinomialTree::children(int v) const {
  std::vector<TreeEdge> out;
  const int limit = v == 0 ? 1 << rounds_ : v & -v;
  for (int level = floor_log2(limit) - 1; level >= 0; --level) {
    const int c = v + (1 << level);
    if (c >= members_) continue;
    out.push_back({c, level, std::min(1 << level, members_ - c), rounds_ - 1 - level});
  }
  return out;
}

std::vector<TreeEdge> BinomialTree::children_upward(int v) const {
  std::vector<TreeEdge> out = children(v);
  std::reverse(out.begin(), out.end());
  return out;
}

int BinomialTree::subtree_end(int v) const {
  return v == 0 ? members_ : v + std::min(v & -v, members_ - v);
}

bool BinomialTree::sends_down(int v, int level) const {
  const int distance = 1 << level;
  return (v == 0 || distance < (v & -v)) && v + distance < members_;
}

bool BinomialTree::sends_up(int v, int level) const {
  return v != 0 && (v & -v) == 1 << level;
}

}  // namespace lanes::algos
