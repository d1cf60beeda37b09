// The schedule fragments that algorithms share: the binomial tree, the k-ported divide step and
// the power-of-two fold. The simulator checks the algorithms built on them; these check the
// fragments' own promises at every size up to 70.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/kported_split.hpp"

namespace lanes::algos {
namespace {

TEST(BinomialTree, ParentsChildrenAndSubtreesAgree) {
  for (int q = 1; q <= 70; ++q) {
    const BinomialTree tree(q);
    EXPECT_EQ(tree.rounds(), ceil_log2(q));
    EXPECT_FALSE(tree.parent(0));
    EXPECT_EQ(tree.subtree_end(0), q);
    std::vector<int> reached(static_cast<std::size_t>(q), 0);
    for (int v = 0; v < q; ++v) {
      const std::vector<TreeEdge> kids = tree.children(v);
      // The subtree of v is v itself followed by its children's subtrees, smallest first.
      int next = v + 1;
      const std::vector<TreeEdge> up = tree.children_upward(v);
      ASSERT_EQ(up.size(), kids.size());
      for (const TreeEdge& c : up) {
        EXPECT_EQ(c.member, next) << "q " << q << " v " << v;
        EXPECT_EQ(c.member - v, c.distance());
        EXPECT_EQ(tree.subtree_end(c.member), c.member + c.span);
        EXPECT_EQ(c.down_round, tree.rounds() - 1 - c.level);
        EXPECT_EQ(c.up_round(), c.level);
        next = c.member + c.span;
        ++reached[static_cast<std::size_t>(c.member)];
        const auto back = tree.parent(c.member);
        ASSERT_TRUE(back);
        EXPECT_EQ(back->member, v);
        EXPECT_EQ(back->level, c.level);
        EXPECT_EQ(back->span, c.span);
        EXPECT_TRUE(tree.sends_up(c.member, c.level));
      }
      EXPECT_EQ(next, tree.subtree_end(v)) << "q " << q << " v " << v;
      for (std::size_t i = 1; i < kids.size(); ++i) EXPECT_GT(kids[i - 1].level, kids[i].level);
      // A member sends down after it received: its children's rounds come after its own.
      if (const auto p = tree.parent(v)) {
        for (const TreeEdge& c : kids) EXPECT_GT(c.down_round, p->down_round);
      }
      for (int level = 0; level < 8; ++level) {
        bool has = false;
        for (const TreeEdge& c : kids) has = has || c.level == level;
        EXPECT_EQ(tree.sends_down(v, level), has) << "q " << q << " v " << v << " level " << level;
      }
    }
    for (int v = 1; v < q; ++v) EXPECT_EQ(reached[static_cast<std::size_t>(v)], 1);
  }
}

TEST(KPortedSteps, EveryMemberIsReachedOnceFromARootThatHoldsIt) {
  for (int size = 1; size <= 40; ++size) {
    for (int ports = 1; ports <= 4; ++ports) {
      for (int root = 0; root < size; ++root) {
        // (step, receiver) -> sender, as the senders see it.
        std::map<std::pair<int, int>, int> sent;
        std::vector<std::vector<KPortedStep>> seen;
        // A member's path ends when its range is itself alone: the longest path is the round
        // count of the k-ported algorithms, ceil(log_{k+1} size).
        std::size_t longest = 0;
        for (int x = 0; x < size; ++x) {
          seen.push_back(kported_steps(size, ports, root, x));
          longest = std::max(longest, seen.back().size());
        }
        EXPECT_EQ(static_cast<int>(longest), size > 1 ? ceil_log(size, ports + 1) : 0)
            << "size " << size << " ports " << ports;
        for (int x = 0; x < size; ++x) {
          for (const KPortedStep& step : seen[static_cast<std::size_t>(x)]) {
            if (step.root != x) continue;
            EXPECT_LE(static_cast<int>(step.targets.size()), ports);
            for (std::size_t i = 0; i < step.targets.size(); ++i) {
              EXPECT_EQ(step.targets[i].port, static_cast<int>(i));
              EXPECT_GT(step.targets[i].size(), 0);
              sent[{step.step, step.targets[i].first}] = x;
            }
          }
        }
        EXPECT_EQ(static_cast<int>(sent.size()), size - 1);
        for (int x = 0; x < size; ++x) {
          int received = 0;
          for (const KPortedStep& step : seen[static_cast<std::size_t>(x)]) {
            for (const KPortedTarget& t : step.targets) {
              if (t.first != x) continue;
              ++received;
              EXPECT_EQ((sent[{step.step, x}]), step.root);
            }
          }
          EXPECT_EQ(received, x == root ? 0 : 1) << "size " << size << " member " << x;
        }
      }
    }
  }
}

TEST(PowerOfTwoFold, PairsAndVirtualRanks) {
  for (int p = 1; p <= 70; ++p) {
    const PowerOfTwoFold fold(p);
    EXPECT_EQ(fold.q, 1 << floor_log2(p));
    EXPECT_EQ(fold.q + fold.extra, p);
    EXPECT_EQ(fold.folded(), fold.q != p);
    int out = 0;
    for (int r = 0; r < p; ++r) {
      if (fold.sits_out(r)) {
        ++out;
        EXPECT_EQ(fold.virtual_of(r), fold.virtual_of(r - 1));  // it hands over to r - 1
        continue;
      }
      EXPECT_EQ(fold.real(fold.virtual_of(r)), r);
    }
    EXPECT_EQ(out, fold.extra);
    for (int v = 0; v < fold.q; ++v) EXPECT_FALSE(fold.sits_out(fold.real(v)));
  }
}

}  // namespace
}  // namespace lanes::algos
