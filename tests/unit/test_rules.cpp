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

namespace {

std::string error_of(const std::string& json, const std::string& source = "LANES_RULES") {
  try {
    Rules::parse(json, source);
  } catch (const lanes::Error& e) {
    EXPECT_EQ(e.code(), lanes::Errc::invalid_argument);
    return e.what();
  }
  return "no error";
}

// One bcast rule with `field` set to `value` (JSON text).
std::string bcast_rule_with(const std::string& field, const std::string& value) {
  return R"({"rules": [{"collective": "bcast", "algorithm": "binomial", ")" + field +
         "\": " + value + "}]}";
}

}  // namespace

TEST(Rules, ErrorsNameTheRuleAndField) {
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
                .find("\"max_bytes\" must be a whole number of bytes"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"collective": 3, "algorithm": "binomial"}]})")
                .find("rule 0: \"collective\" must be a string, not 3"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"collective": "bcast", "algorithm": true}]})")
                .find("rule 0 (bcast): \"algorithm\" must be a string, not true"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"collective": "bcast"}]})").find("no \"algorithm\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"algorithm": "binomial"}]})").find("no \"collective\""),
            std::string::npos);
}

TEST(Rules, ErrorsNameTheFile) {
  const std::string e = error_of(bcast_rule_with("min_ranks", "-1"), "LANES_RULES file 'r.json'");
  EXPECT_NE(e.find("LANES_RULES file 'r.json': rule 0 (bcast): \"min_ranks\""), std::string::npos)
      << e;
  EXPECT_NE(error_of("[", "LANES_RULES file 'r.json'").find("LANES_RULES file 'r.json': not valid"),
            std::string::npos);
}

TEST(Rules, BoundsAreWholeNumbersInRange) {
  const std::string bytes_max = "18446744073709551615";  // SIZE_MAX
  for (const char* field : {"min_bytes", "max_bytes"}) {
    for (const std::string value : {"-1", "1.5", "1e-3", "true", "false", "null", "\"64\"", "[1]",
                                    "{}", "18446744073709551616", "1e20", "-0.5"}) {
      const std::string e = error_of(bcast_rule_with(field, value));
      EXPECT_NE(e.find(std::string("rule 0 (bcast): \"") + field +
                       "\" must be a whole number of bytes from 0 to " + bytes_max + ", not "),
                std::string::npos)
          << field << " " << value << ": " << e;
    }
  }
  for (const char* field : {"min_ranks", "max_ranks"}) {
    for (const std::string value :
         {"-1", "2.5", "true", "\"8\"", "1e10", "2147483648", "9223372036854775808", "-1e300"}) {
      const std::string e = error_of(bcast_rule_with(field, value));
      EXPECT_NE(e.find(std::string("rule 0 (bcast): \"") + field +
                       "\" must be a whole number of ranks from 0 to 2147483647, not "),
                std::string::npos)
          << field << " " << value << ": " << e;
    }
  }
  // Whole numbers in any JSON spelling, up to the limits.
  const Rules r = Rules::parse(R"({"rules": [
      {"collective": "bcast", "min_bytes": 1e3, "max_bytes": 2048.0, "algorithm": "binomial"},
      {"collective": "bcast", "min_bytes": 2048, "max_bytes": 18446744073709551615,
       "max_ranks": 2147483647, "algorithm": "kported"},
      {"collective": "scatter", "min_ranks": 0, "max_ranks": 4e0, "algorithm": "linear"}]})");
  EXPECT_FALSE(r.match(Collective::bcast, 999, 4).has_value());
  EXPECT_EQ(r.match(Collective::bcast, 1000, 4), "binomial");
  EXPECT_EQ(r.match(Collective::bcast, 2047, 4), "binomial");
  EXPECT_EQ(r.match(Collective::bcast, 2048, 4), "kported");
  EXPECT_EQ(r.match(Collective::bcast, std::size_t{1} << 40, 1 << 30), "kported");
  EXPECT_EQ(r.match(Collective::scatter, 1, 3), "linear");
  EXPECT_FALSE(r.match(Collective::scatter, 1, 4).has_value());
}

TEST(Rules, EmptyRangesAreErrors) {
  EXPECT_NE(error_of(R"({"rules": [{"collective": "bcast", "algorithm": "binomial",
                                    "min_bytes": 100, "max_bytes": 100}]})")
                .find("min_bytes 100 is not below max_bytes 100"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"collective": "bcast", "algorithm": "binomial"},
                                   {"collective": "gather", "algorithm": "linear",
                                    "min_ranks": 9, "max_ranks": 4}]})")
                .find("rule 1 (gather): min_ranks 9 is not below max_ranks 4"),
            std::string::npos);
  EXPECT_NE(
      error_of(bcast_rule_with("max_ranks", "0")).find("min_ranks 0 is not below max_ranks 0"),
      std::string::npos);
}
