#include <gtest/gtest.h>

#include <lanes/error.hpp>
#include <map>
#include <string>
#include <vector>

#include "lib/config.hpp"

using lanes::detail::CmaMode;
using lanes::detail::Config;
using lanes::detail::ProgressMode;

namespace {

Config parse(const std::map<std::string, std::string>& env) {
  return Config::parse([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& env) {
  try {
    parse(env);
  } catch (const lanes::Error& e) {
    EXPECT_EQ(e.code(), lanes::Errc::invalid_argument);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, Defaults) {
  const Config c = parse({});
  EXPECT_FALSE(c.rails.has_value());
  EXPECT_EQ(c.node_size, 0);
  EXPECT_EQ(c.lanes, 0);
  EXPECT_EQ(c.progress, ProgressMode::automatic);
  EXPECT_EQ(c.ucx_tls, "^sm");
  EXPECT_EQ(c.cma, CmaMode::automatic);
  EXPECT_FALSE(c.check);
  EXPECT_EQ(c.timeout_s, 0);
  EXPECT_EQ(c.bcast_algorithm, "auto");
}

TEST(Config, ParsesEveryVariable) {
  const Config c = parse({{"LANES_RAILS", "mlx5_0:1,mlx5_1:1"},
                          {"LANES_NODE_SIZE", "4"},
                          {"LANES_LANES", "3"},
                          {"LANES_RAIL_WEIGHTS", "100,50.5"},
                          {"LANES_PROGRESS", "wait"},
                          {"LANES_UCX_TLS", "rc,ud"},
                          {"LANES_CMA", "0"},
                          {"LANES_CHECK", "1"},
                          {"LANES_TIMEOUT", "30"},
                          {"LANES_INFO", "1"},
                          {"LANES_BCAST_ALGORITHM", "binomial"},
                          {"LANES_SCATTER_ALGORITHM", "binomial"},
                          {"LANES_ALLTOALL_ALGORITHM", "pairwise"}});
  ASSERT_TRUE(c.rails.has_value());
  EXPECT_EQ(*c.rails, (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1"}));
  EXPECT_EQ(c.node_size, 4);
  EXPECT_EQ(c.lanes, 3);
  EXPECT_EQ(c.rail_weights, (std::vector<double>{100, 50.5}));
  EXPECT_EQ(c.progress, ProgressMode::wait);
  EXPECT_EQ(c.ucx_tls, "rc,ud");
  EXPECT_EQ(c.cma, CmaMode::off);
  EXPECT_TRUE(c.check);
  EXPECT_EQ(c.timeout_s, 30);
  EXPECT_EQ(c.info, 1);
  EXPECT_EQ(c.alltoall_algorithm, "pairwise");
}

TEST(Config, RailsAutoMeansDiscovery) {
  EXPECT_FALSE(parse({{"LANES_RAILS", "auto"}}).rails.has_value());
  EXPECT_EQ(parse({{"LANES_RAILS", "lo,lo"}}).rails->size(), 2u);
}

TEST(Config, InvalidValuesNameTheVariable) {
  EXPECT_NE(error_of({{"LANES_NODE_SIZE", "two"}}).find("LANES_NODE_SIZE='two'"),
            std::string::npos);
  EXPECT_NE(error_of({{"LANES_NODE_SIZE", "-1"}}).find("LANES_NODE_SIZE"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_PROGRESS", "fast"}}).find("spin, yield, wait or auto"),
            std::string::npos);
  EXPECT_NE(error_of({{"LANES_CHECK", "maybe"}}).find("LANES_CHECK"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_RAILS", "eth0,,eth1"}}).find("empty entries"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_RAILS", "eth0,"}}).find("LANES_RAILS"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_TIMEOUT", "1.5x"}}).find("LANES_TIMEOUT"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_UCX_TLS", ""}}).find("LANES_UCX_TLS"), std::string::npos);
  for (const char* weights : {"1,0", "1,-2", "fast", "1,,2", "1e999", "nan"}) {
    EXPECT_NE(error_of({{"LANES_RAIL_WEIGHTS", weights}}).find("LANES_RAIL_WEIGHTS"),
              std::string::npos)
        << weights;
  }
}

TEST(Config, IntegersAreDigitsInRange) {
  // Each numeric variable and the range the error message gives for it.
  const std::map<std::string, std::string> ranges = {{"LANES_NODE_SIZE", "from 0 to 1048576"},
                                                     {"LANES_LANES", "from 0 to 64"},
                                                     {"LANES_TIMEOUT", "from 0 to 2147483648"},
                                                     {"LANES_INFO", "from 0 to 2"}};
  for (const auto& [name, range] : ranges) {
    for (const char* value : {"-1", "-0", "+2", " 2", "2 ", "2.0", "2.5", "1e1", "0x2", "true",
                              "two", "", "99999999999999999999", "2,3"}) {
      const std::string message = error_of({{name, value}});
      EXPECT_NE(message.find(name + "='" + value + "' is not valid: expected an integer " + range),
                std::string::npos)
          << name << "=" << value << ": " << message;
    }
    EXPECT_EQ(error_of({{name, "0"}}), "") << name;
    EXPECT_EQ(error_of({{name, "2"}}), "") << name;
    EXPECT_EQ(error_of({{name, "02"}}), "") << name;  // leading zeros are still decimal
  }
  EXPECT_NE(error_of({{"LANES_NODE_SIZE", "1048577"}}).find("LANES_NODE_SIZE"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_LANES", "65"}}).find("LANES_LANES='65'"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_TIMEOUT", "2147483649"}}).find("LANES_TIMEOUT"), std::string::npos);
  EXPECT_NE(error_of({{"LANES_INFO", "3"}}).find("LANES_INFO='3'"), std::string::npos);
  // The bounds themselves are accepted.
  const Config top = parse({{"LANES_NODE_SIZE", "1048576"},
                            {"LANES_LANES", "64"},
                            {"LANES_TIMEOUT", "2147483648"},
                            {"LANES_INFO", "2"}});
  EXPECT_EQ(top.node_size, 1048576);
  EXPECT_EQ(top.lanes, 64);
  EXPECT_EQ(top.timeout_s, 2147483648.0);
  EXPECT_EQ(top.info, 2);
  EXPECT_EQ(parse({{"LANES_NODE_SIZE", "007"}}).node_size, 7);
}

TEST(Config, RailWeightsArePlainPositiveNumbers) {
  EXPECT_EQ(parse({{"LANES_RAIL_WEIGHTS", "1e2,0.5,3"}}).rail_weights,
            (std::vector<double>{100, 0.5, 3}));
  for (const char* weights :
       {" 1", "1 ", "+1", "1,inf", "0x10", "1e-999", "true", "1;2", "1,2x", "-0"}) {
    EXPECT_NE(error_of({{"LANES_RAIL_WEIGHTS", weights}})
                  .find(std::string("LANES_RAIL_WEIGHTS='") + weights +
                        "' is not valid: expected comma-separated positive numbers"),
              std::string::npos)
        << weights;
  }
}

TEST(Config, CmaSlowdownIsAutoOrAPositiveNumber) {
  EXPECT_EQ(parse({}).cma_slowdown, 0.0);
  EXPECT_EQ(parse({{"LANES_CMA_SLOWDOWN", "auto"}}).cma_slowdown, 0.0);
  EXPECT_EQ(parse({{"LANES_CMA_SLOWDOWN", "2.2"}}).cma_slowdown, 2.2);
  EXPECT_EQ(parse({{"LANES_CMA_SLOWDOWN", "3e0"}}).cma_slowdown, 3.0);
  for (const char* value : {"0", "-1", "", " 2", "2 ", "inf", "nan", "two", "1,2"}) {
    EXPECT_NE(error_of({{"LANES_CMA_SLOWDOWN", value}})
                  .find(std::string("LANES_CMA_SLOWDOWN='") + value +
                        "' is not valid: expected auto or a positive number"),
              std::string::npos)
        << value;
  }
}

TEST(Config, HeapSizeIsAutoOrWholeMiB) {
  EXPECT_EQ(parse({}).heap_mib, -1);
  EXPECT_EQ(parse({{"LANES_HEAP_SIZE", "auto"}}).heap_mib, -1);
  EXPECT_EQ(parse({{"LANES_HEAP_SIZE", "0"}}).heap_mib, 0);
  EXPECT_EQ(parse({{"LANES_HEAP_SIZE", "4096"}}).heap_mib, 4096);
  for (const char* value : {"-1", "", "1.5", "4G", "two"}) {
    EXPECT_NE(error_of({{"LANES_HEAP_SIZE", value}}).find("LANES_HEAP_SIZE"), std::string::npos)
        << value;
  }
}

TEST(Config, HierarchyGroupsAreTheModelsASearchOrANumber) {
  EXPECT_EQ(parse({}).hierarchy_groups, 0);
  EXPECT_FALSE(parse({}).hierarchy_search);
  EXPECT_FALSE(parse({{"LANES_HIERARCHY_GROUPS", "model"}}).hierarchy_search);
  EXPECT_TRUE(parse({{"LANES_HIERARCHY_GROUPS", "search"}}).hierarchy_search);
  EXPECT_EQ(parse({{"LANES_HIERARCHY_GROUPS", "search"}}).hierarchy_groups, 0);
  EXPECT_EQ(parse({{"LANES_HIERARCHY_GROUPS", "4"}}).hierarchy_groups, 4);
  for (const char* value : {"0", "-2", "", "2.0", "auto", "Search", " 2"}) {
    EXPECT_NE(error_of({{"LANES_HIERARCHY_GROUPS", value}})
                  .find(std::string("LANES_HIERARCHY_GROUPS='") + value +
                        "' is not valid: expected model, search or an integer from 1 to"),
              std::string::npos)
        << value;
  }
}

TEST(Config, TableListsEveryVariableOnce) {
  std::map<std::string, int> seen;
  for (const auto& v : lanes::detail::config_table()) {
    EXPECT_EQ(std::string(v.name).rfind("LANES_", 0), 0u);
    EXPECT_GT(std::string(v.help).size(), 10u);
    ++seen[v.name];
  }
  for (const char* name : {"LANES_RAILS",
                           "LANES_NODE_SIZE",
                           "LANES_LANES",
                           "LANES_RAIL_WEIGHTS",
                           "LANES_PROGRESS",
                           "LANES_UCX_TLS",
                           "LANES_CMA",
                           "LANES_CMA_SLOWDOWN",
                           "LANES_HEAP_SIZE",
                           "LANES_CHECK",
                           "LANES_TIMEOUT",
                           "LANES_FINALIZE_TIMEOUT",
                           "LANES_INFO",
                           "LANES_BCAST_ALGORITHM",
                           "LANES_SCATTER_ALGORITHM",
                           "LANES_ALLTOALL_ALGORITHM",
                           "LANES_BARRIER_ALGORITHM",
                           "LANES_HIERARCHY_GROUPS",
                           "LANES_MPI_COLLS",
                           "LANES_MPI_STATS"}) {
    EXPECT_EQ(seen[name], 1) << name;
  }
  EXPECT_EQ(seen.size(), 27u);
}
