// lib/group_search.hpp: the bookkeeping of LANES_HIERARCHY_GROUPS=search, and the group choices
// it searches (algos/reduce/hierarchical.hpp).
#include "lib/group_search.hpp"

#include <gtest/gtest.h>

#include <lanes/error.hpp>
#include <string>
#include <utility>
#include <vector>

#include "algos/layout.hpp"
#include "algos/reduce/hierarchical.hpp"
#include "algos/registry.hpp"
#include "algos/simulator.hpp"

using lanes::detail::GroupSearch;

namespace {

const GroupSearch::Key kKey = GroupSearch::key_of(0, "hierarchical-chain", 65536, 0, 0);

// Runs the trials of kKey over `choices`, timing G as `time_of` says; returns the Gs tried.
template <class F>
std::vector<int> run_trials(GroupSearch& s, const std::vector<int>& choices, F time_of) {
  std::vector<int> tried;
  for (;;) {
    const int g = s.next_trial(kKey, choices);
    tried.push_back(g);
    if (s.record(kKey, time_of(g))) return tried;
  }
}

}  // namespace

TEST(GroupSearch, SizesShareAClassUpToTheNextPowerOfTwo) {
  EXPECT_EQ(GroupSearch::key_of(0, "a", 65536, 0, 0), GroupSearch::key_of(0, "a", 131071, 0, 0));
  EXPECT_NE(GroupSearch::key_of(0, "a", 65536, 0, 0), GroupSearch::key_of(0, "a", 131072, 0, 0));
  EXPECT_NE(GroupSearch::key_of(0, "a", 65536, 0, 0), GroupSearch::key_of(0, "b", 65536, 0, 0));
  EXPECT_NE(GroupSearch::key_of(0, "a", 65536, 0, 0), GroupSearch::key_of(0, "a", 65536, 2, 0));
}

// No cost model's G to prefer.
constexpr int kNoModel = 0;

TEST(GroupSearch, TriesEveryChoiceInTurnAnUntimedRoundFirstThenSettlesOnTheFastest) {
  static_assert(GroupSearch::kWarmRounds == 1 && GroupSearch::kRounds == 2);
  GroupSearch s;
  EXPECT_EQ(s.settled(kKey), 0);
  int call = 0;
  const std::vector<int> tried = run_trials(s, {1, 2, 4}, [&call](int g) {
    return ++call <= 3 ? 100.0 : g == 2 ? 1.0 : 3.0;  // the untimed round is slow
  });
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 4, 1, 2, 4, 1, 2, 4}));
  EXPECT_EQ(s.settled(kKey), 0);  // not before the processes agree
  EXPECT_EQ(s.best_times(kKey), (std::vector<double>{3.0, 1.0, 3.0}));
  EXPECT_EQ(s.settle(kKey, s.best_times(kKey), kNoModel), 2);
  EXPECT_EQ(s.settled(kKey), 2);
  // Settled: every later call takes it, and records nothing.
  EXPECT_EQ(s.next_trial(kKey, {1, 2, 4}), 2);
  EXPECT_FALSE(s.record(kKey, 9.0));
}

TEST(GroupSearch, KeepsEachChoicesLeastTimedTime) {
  GroupSearch s;
  int call = 0;
  // Calls 1-2 untimed, then G = 1 takes 9 and 2, G = 2 takes 3 and 4.
  const double times[] = {0.5, 0.5, 9.0, 3.0, 2.0, 4.0};
  run_trials(s, {1, 2}, [&](int) { return times[call++]; });
  EXPECT_EQ(call, 6);
  EXPECT_EQ(s.best_times(kKey), (std::vector<double>{2.0, 3.0}));
}

// The cost model's G stays where another is not kMargin faster than it.
TEST(GroupSearch, TheModelsGStaysUnlessAnotherIsClearlyFaster) {
  GroupSearch close;
  run_trials(close, {1, 2, 4}, [](int) { return 1.0; });
  EXPECT_EQ(close.settle(kKey, std::vector<double>{1.0, 1.02, 1.04}, 4), 4);
  GroupSearch far;
  run_trials(far, {1, 2, 4}, [](int) { return 1.0; });
  EXPECT_EQ(far.settle(kKey, std::vector<double>{1.0, 1.02, 1.06}, 4), 1);
  GroupSearch other;
  run_trials(other, {1, 2, 4}, [](int) { return 1.0; });
  EXPECT_EQ(other.settle(kKey, std::vector<double>{1.0, 1.02, 1.04}, 8), 1);  // not a choice
}

// The slowest process decides each choice's time: here G = 1 is fastest on rank 0 but slowest on
// rank 1, and every rank settles alike from the same numbers.
TEST(GroupSearch, TheSlowestProcessDecidesAndTiesGoToFewerGroups) {
  GroupSearch a;
  run_trials(a, {1, 2, 4}, [](int) { return 1.0; });
  const std::vector<double> all = {1.0, 5.0, 4.0,   // rank 0
                                   7.0, 2.0, 4.0};  // rank 1
  EXPECT_EQ(a.settle(kKey, all, kNoModel), 4);
  EXPECT_EQ(a.slowest(kKey), (std::vector<double>{7.0, 5.0, 4.0}));

  GroupSearch b;
  run_trials(b, {1, 2}, [](int) { return 1.0; });
  EXPECT_EQ(b.settle(kKey, std::vector<double>{3.0, 3.0, 2.0, 2.0}, kNoModel), 1);
}

TEST(GroupSearch, OneChoiceSettlesAtOnce) {
  GroupSearch s;
  EXPECT_EQ(s.next_trial(kKey, {1}), 1);
  EXPECT_EQ(s.settled(kKey), 1);
  EXPECT_FALSE(s.record(kKey, 1.0));
}

TEST(GroupSearch, SettleRefusesTimesThatDoNotMatchTheChoices) {
  GroupSearch s;
  run_trials(s, {1, 2}, [](int) { return 1.0; });
  EXPECT_THROW(s.settle(kKey, std::vector<double>{1.0, 2.0, 3.0}, kNoModel), lanes::Error);
}

// The choices: G = 1 and every divisor whose groups tile the nodes, for a reduce without G = p
// (the base algorithm again), for the allreduce with it (the leaders' allreduce alone); the
// builders take exactly those and name them when given another.
TEST(GroupSearch, ChoicesTileTheNodesAndTheBuildersRefuseOthers) {
  using lanes::algos::Collective;
  using lanes::algos::Layout;
  const auto choices = [](Collective coll, const Layout& layout) {
    return lanes::algos::hierarchical_group_choices(coll, layout);
  };
  EXPECT_EQ(choices(Collective::reduce, Layout::blocks(8, 2, 2)), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(choices(Collective::allreduce, Layout::blocks(8, 2, 2)),
            (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(choices(Collective::reduce, Layout::blocks(6, 2, 1)), (std::vector<int>{1, 3}));
  EXPECT_EQ(choices(Collective::reduce, Layout::blocks(7, 7, 1)), (std::vector<int>{1}));
  EXPECT_EQ(choices(Collective::allreduce, Layout::blocks(7, 7, 1)), (std::vector<int>{1, 7}));
  EXPECT_EQ(choices(Collective::reduce, Layout::blocks(1, 1, 1)), (std::vector<int>{1}));
  EXPECT_TRUE(lanes::algos::has_group_choice(Collective::reduce, "hierarchical-chain"));
  EXPECT_TRUE(lanes::algos::has_group_choice(Collective::allreduce, "hierarchical"));
  EXPECT_FALSE(lanes::algos::has_group_choice(Collective::reduce, "chain"));
  EXPECT_FALSE(lanes::algos::has_group_choice(Collective::reduce, "hierarchical"));
  EXPECT_FALSE(lanes::algos::has_group_choice(Collective::allreduce, "hierarchical-chain"));

  const Layout layout = Layout::blocks(6, 2, 1);
  for (const auto& [coll, name] : {std::pair{Collective::reduce, "hierarchical-chain"},
                                   std::pair{Collective::allreduce, "hierarchical"}}) {
    const lanes::algos::Algorithm* algo = lanes::algos::find_algorithm(coll, name);
    ASSERT_NE(algo, nullptr);
    lanes::algos::CollArgs args{coll, 0, 0, 64, 4};
    args.groups = 3;
    EXPECT_FALSE(algo->build(layout, args).ops.empty()) << name;
    args.groups = 2;
    try {
      (void)algo->build(layout, args);
      FAIL() << name << ": 2 groups of 3 do not tile nodes of 2";
    } catch (const lanes::Error& e) {
      EXPECT_EQ(e.code(), lanes::Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(std::string(lanes::algos::to_string(coll)) + " " + name +
                                           ": 2 groups do not tile 6 ranks"),
                std::string::npos)
          << e.what();
    }
  }
}

// Every G a search can settle on gives every rank the right values, for every base and the
// allreduce, on regular and irregular layouts, every root.
TEST(GroupSearch, EveryChoiceOfGIsCorrect) {
  using lanes::algos::Collective;
  using lanes::algos::Layout;
  for (const Layout& layout : {Layout::blocks(8, 2, 2), Layout::blocks(12, 4, 2),
                               Layout::from_node_sizes({3, 3, 2}, 1), Layout::blocks(6, 3, 1)}) {
    for (const Collective coll : {Collective::reduce, Collective::allreduce}) {
      for (const lanes::algos::Algorithm* a : lanes::algos::algorithms_for(coll)) {
        const lanes::algos::Algorithm& algo = *a;
        if (!lanes::algos::has_group_choice(coll, algo.name)) continue;
        for (const int groups : lanes::algos::hierarchical_group_choices(coll, layout)) {
          for (const std::size_t bytes : {std::size_t{8}, std::size_t{8 * 29}}) {
            for (int root = 0; root < (coll == Collective::reduce ? layout.size : 1); ++root) {
              std::vector<lanes::algos::Schedule> schedules;
              for (int r = 0; r < layout.size; ++r) {
                lanes::algos::CollArgs args{coll, r, root, bytes, 8};
                args.groups = groups;
                schedules.push_back(algo.build(layout, args));
              }
              const lanes::algos::SimResult res =
                  lanes::algos::simulate_schedules(coll, layout, root, bytes, schedules);
              ASSERT_TRUE(res.ok) << algo.name << " G " << groups << " on " << layout.describe()
                                  << ", root " << root << ": " << res.error;
            }
          }
        }
      }
    }
  }
}
