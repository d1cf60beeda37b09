// lib/selection.cpp: which algorithm serves a call, as a pure function of its inputs.
#include "lib/selection.hpp"

#include <gtest/gtest.h>

#include <lanes/error.hpp>
#include <string>

#include "algos/registry.hpp"

using lanes::algos::Collective;
using lanes::algos::Layout;
using lanes::detail::Config;
using lanes::detail::Rules;
using lanes::detail::Selection;
using lanes::detail::SelectionInput;

namespace {

struct Fixture {
  Config config;
  Rules rules;
  lanes::algos::MachineParams machine;
  Layout layout = Layout::blocks(8, 2, 2);  // 4 nodes of 2, 2 lanes

  SelectionInput input(Collective coll, std::size_t bytes, std::string requested = "") const {
    SelectionInput in;
    in.coll = coll;
    in.bytes = bytes;
    in.layout = &layout;
    in.requested = std::move(requested);
    in.config = &config;
    in.rules = &rules;
    in.machine = &machine;
    return in;
  }
};

std::string error_of(const SelectionInput& in) {
  try {
    lanes::detail::select_algorithm(in);
  } catch (const lanes::Error& e) {
    EXPECT_EQ(e.code(), lanes::Errc::invalid_argument);
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Selection, ANamedAlgorithmIsTakenAsItIs) {
  Fixture f;
  const Selection s =
      lanes::detail::select_algorithm(f.input(Collective::bcast, 1 << 20, "kported"));
  EXPECT_EQ(s.algorithm, "kported");
  EXPECT_EQ(s.source, "CallOptions::algorithm");
  EXPECT_TRUE(s.ranking.empty());
}

TEST(Selection, TheVariableServesWhenTheCallAsksForAuto) {
  Fixture f;
  f.config.scatter_algorithm = "linear";
  for (const char* requested : {"", "auto"}) {
    const Selection s =
        lanes::detail::select_algorithm(f.input(Collective::scatter, 64, requested));
    EXPECT_EQ(s.algorithm, "linear");
    EXPECT_EQ(s.source, "LANES_SCATTER_ALGORITHM");
  }
  EXPECT_EQ(lanes::detail::select_algorithm(f.input(Collective::scatter, 64, "kported")).algorithm,
            "kported");  // the call's own name comes first
}

TEST(Selection, UnknownNamesNameTheirSource) {
  Fixture f;
  EXPECT_NE(error_of(f.input(Collective::bcast, 8, "nope")).find("CallOptions::algorithm='nope'"),
            std::string::npos);
  f.config.alltoall_algorithm = "nope";
  const std::string e = error_of(f.input(Collective::alltoall, 8));
  EXPECT_NE(e.find("LANES_ALLTOALL_ALGORITHM='nope'"), std::string::npos) << e;
  EXPECT_NE(e.find("pairwise"), std::string::npos) << e;  // the available ones listed
}

TEST(Selection, RulesComeBeforeTheModel) {
  Fixture f;
  f.rules = Rules::parse(R"({"rules": [{"collective": "bcast", "max_bytes": 1024,
                                        "algorithm": "scatter-ring"}]})");
  const Selection ruled = lanes::detail::select_algorithm(f.input(Collective::bcast, 100));
  EXPECT_EQ(ruled.algorithm, "scatter-ring");
  EXPECT_EQ(ruled.source, "LANES_RULES");
  const Selection modelled = lanes::detail::select_algorithm(f.input(Collective::bcast, 4096));
  EXPECT_EQ(modelled.source, "model");
}

// auto: the model's cheapest candidate that applies; the same answer for the same inputs.
TEST(Selection, TheModelPicksItsCheapestApplicableCandidate) {
  Fixture f;
  for (std::size_t bytes : {std::size_t{4}, std::size_t{1} << 16, std::size_t{1} << 22}) {
    for (Collective coll : {Collective::bcast, Collective::alltoall, Collective::allreduce}) {
      const Selection s = lanes::detail::select_algorithm(f.input(coll, bytes));
      ASSERT_EQ(s.source, "model");
      ASSERT_FALSE(s.ranking.empty());
      EXPECT_EQ(s.algorithm, s.ranking.front().algorithm);
      for (std::size_t i = 1; i < s.ranking.size(); ++i) {
        EXPECT_LE(s.ranking[i - 1].seconds, s.ranking[i].seconds);
      }
      EXPECT_EQ(lanes::detail::select_algorithm(f.input(coll, bytes)).algorithm, s.algorithm);
    }
  }
}

TEST(Selection, AnAlgorithmThatDoesNotApplyFallsBack) {
  Fixture f;
  f.layout = Layout::from_node_sizes({3, 2}, 2);  // irregular: full-lane does not apply
  const Selection s =
      lanes::detail::select_algorithm(f.input(Collective::bcast, 1 << 20, "full-lane"));
  EXPECT_EQ(s.source, "fallback");
  EXPECT_EQ(s.not_applicable, "full-lane");
  EXPECT_EQ(s.algorithm, lanes::algos::fallback_algorithm(Collective::bcast));
}

// Every collective's fallback exists and applies to any layout.
TEST(Selection, FallbacksApplyEverywhere) {
  for (Collective coll : lanes::algos::kCollectives) {
    const auto* algo = lanes::algos::find_algorithm(coll, lanes::algos::fallback_algorithm(coll));
    ASSERT_NE(algo, nullptr) << lanes::algos::to_string(coll);
    EXPECT_EQ(algo->applicable, nullptr) << lanes::algos::to_string(coll);
  }
}

// A non-commutative operation: only algorithms in rank order, whoever names them.
TEST(Selection, RankOrderIsRequiredOfEveryChoice) {
  Fixture f;
  SelectionInput in = f.input(Collective::reduce, 1 << 20, "binary");
  in.rank_order = true;
  const std::string e = error_of(in);
  EXPECT_NE(e.find("does not combine in rank order"), std::string::npos) << e;
  EXPECT_NE(e.find("in-order-binary"), std::string::npos) << e;  // what would
  for (Collective coll : {Collective::reduce, Collective::allreduce}) {
    SelectionInput any = f.input(coll, 1 << 20);
    any.rank_order = true;
    const Selection s = lanes::detail::select_algorithm(any);
    const auto* algo = lanes::algos::find_algorithm(coll, s.algorithm);
    ASSERT_NE(algo, nullptr);
    ASSERT_NE(algo->rank_order, nullptr) << s.algorithm;
    EXPECT_TRUE(algo->rank_order(f.layout, 0)) << s.algorithm;
  }
}

// One node whose 4 processes share 2 cores: the model runs the schedules on the cores, and the
// root sending every scatter block wins over the binomial tree that the closed form prefers.
TEST(Selection, SharedCoresPriceTheSchedulesOnTheCores) {
  Fixture f;
  f.layout = Layout::blocks(4, 4, 1);
  SelectionInput in = f.input(Collective::scatter, 40000);
  const Selection alone = lanes::detail::select_algorithm(in);
  EXPECT_EQ(alone.source, "model");
  in.shared.cores = 2;
  in.shared.single_copy = {65537, 16385};
  const Selection shared = lanes::detail::select_algorithm(in);
  EXPECT_EQ(shared.algorithm, "linear");
  ASSERT_FALSE(shared.ranking.empty());
  for (std::size_t i = 1; i < shared.ranking.size(); ++i) {
    EXPECT_LE(shared.ranking[i - 1].seconds, shared.ranking[i].seconds);
  }
  // As many cores as processes: the closed form decides, as without the field.
  in.shared.cores = 4;
  EXPECT_EQ(lanes::detail::select_algorithm(in).algorithm, alone.algorithm);
}
