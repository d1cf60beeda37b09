#include <gtest/gtest.h>

#include <lanes/error.hpp>

#include "lib/rules.hpp"

using lanes::algos::Collective;
using lanes::detail::Rules;

TEST(Rules, FirstMatchingRuleWins) {
  const Rules r = Rules::parse(R"({"rules": [
      {"collective": "bcast", "max_bytes": 65536, "algorithm": "binomial"},
      {"collective": "bcast", "min_bytes": 65536, "min_ranks": 8, "algorithm": "full-lane"},
      {"collective": "bcast", "algorithm": "scatter-ring"},
      {"collective": "alltoall", "max_ranks": 16, "algorithm": "bruck"}]})");
  EXPECT_EQ(r.match(Collective::bcast, 100, 4), "binomial");
  EXPECT_EQ(r.match(Collective::bcast, 65536, 8), "full-lane");
  EXPECT_EQ(r.match(Collective::bcast, 65536, 4), "scatter-ring");
  EXPECT_EQ(r.match(Collective::alltoall, 1, 15), "bruck");
  EXPECT_FALSE(r.match(Collective::alltoall, 1, 16).has_value());
  EXPECT_FALSE(r.match(Collective::scatter, 1, 2).has_value());
}

TEST(Rules, EmptyTextMeansNoRules) {
  EXPECT_TRUE(Rules::parse("").empty());
}

TEST(Rules, ErrorsNameTheRuleAndField) {
  auto error_of = [](const char* json) {
    try {
      Rules::parse(json);
    } catch (const lanes::Error& e) {
      EXPECT_EQ(e.code(), lanes::Errc::invalid_argument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"rule": []})").find("expected"), std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"collective": "scan", "algorithm": "x"}]})")
                .find("unknown collective 'scan'"),
            std::string::npos);
  const std::string unknown_algo =
      error_of(R"({"rules": [{"collective": "bcast", "algorithm": "binomial"},
                             {"collective": "bcast", "algorithm": "teleport"}]})");
  EXPECT_NE(unknown_algo.find("rule 1"), std::string::npos) << unknown_algo;
  EXPECT_NE(unknown_algo.find("full-lane"), std::string::npos) << unknown_algo;
  EXPECT_NE(error_of(R"({"rules": [{"collective": "bcast", "algorithm": "binomial", "size": 3}]})")
                .find("unknown field 'size'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"collective": "bcast", "algorithm": "binomial",
                                    "max_bytes": "big"}]})")
                .find("wrong type"),
            std::string::npos);
}
