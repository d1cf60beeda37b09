#include <gtest/gtest.h>

#include <cmath>
#include <lanes/error.hpp>

#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

using namespace lanes::algos;

TEST(CostModel, ParsesCalibrationText) {
  const MachineParams m = MachineParams::parse(
      "# measured\nalpha_shm 2e-6\nbeta_shm 1e-10\nalpha_rail 1e-5  # comment\nbeta_rail 8e-10\n"
      "rails 2\nnode_bytes_per_s 3e9\n");
  EXPECT_DOUBLE_EQ(m.alpha_shm, 2e-6);
  EXPECT_DOUBLE_EQ(m.beta_rail, 8e-10);
  EXPECT_EQ(m.rails, 2);
  EXPECT_DOUBLE_EQ(m.node_bytes_per_s, 3e9);
  const MachineParams again = MachineParams::parse(m.to_text());
  EXPECT_DOUBLE_EQ(again.alpha_rail, m.alpha_rail);
  EXPECT_EQ(again.rails, 2);
}

TEST(CostModel, RejectsUnknownKeysByName) {
  try {
    MachineParams::parse("alpha_shm 1e-6\nbandwidth 5\n");
    FAIL();
  } catch (const lanes::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth"), std::string::npos);
  }
  EXPECT_THROW(MachineParams::parse("alpha_rail fast\n"), lanes::Error);
}

TEST(CostModel, RailsShareBandwidth) {
  MachineParams m;
  m.rails = 2;
  CostInput in;
  in.lanes = 2;
  const double one = rail_time(1e6, 1, in, m);
  const double two = rail_time(1e6, 2, in, m);   // two flows on two rails: no slowdown
  const double four = rail_time(1e6, 4, in, m);  // two flows per rail
  EXPECT_DOUBLE_EQ(one, two);
  EXPECT_NEAR(four - m.alpha_rail, 2 * (one - m.alpha_rail), 1e-12);
  in.lanes = 1;  // one lane: every flow on one rail
  EXPECT_NEAR(rail_time(1e6, 2, in, m) - m.alpha_rail, 2 * (one - m.alpha_rail), 1e-12);
}

TEST(CostModel, EveryCollectiveHasPredictions) {
  CostInput in;
  in.nodes = 4;
  in.ppn = 2;
  in.lanes = 2;
  in.bytes = 1 << 20;
  MachineParams m;
  m.rails = 2;
  for (Collective c :
       {Collective::bcast, Collective::scatter, Collective::alltoall, Collective::allgather}) {
    const auto ranking = predict(c, in, m);
    ASSERT_FALSE(ranking.empty()) << to_string(c);
    for (std::size_t i = 1; i < ranking.size(); ++i) {
      EXPECT_LE(ranking[i - 1].seconds, ranking[i].seconds);
    }
    for (const auto& r : ranking) EXPECT_GT(r.seconds, 0) << r.algorithm;
  }
}

TEST(CostModel, AnswersAtHundredThousandNodes) {
  CostInput in;
  in.nodes = 100000;
  in.ppn = 32;
  in.lanes = 2;
  in.bytes = 1 << 20;
  MachineParams m;
  m.rails = 2;
  for (Collective c :
       {Collective::bcast, Collective::scatter, Collective::alltoall, Collective::allgather}) {
    const auto ranking = predict(c, in, m);
    ASSERT_FALSE(ranking.empty()) << to_string(c);
    EXPECT_TRUE(std::isfinite(ranking.front().seconds));
  }
}

TEST(CostModel, MoreBytesNeverCheaper) {
  MachineParams m;
  for (const Algorithm& a : all_algorithms()) {
    if (a.cost == nullptr) continue;
    CostInput small, big;
    small.nodes = big.nodes = 8;
    small.ppn = big.ppn = 4;
    small.bytes = 1000;
    big.bytes = 1000000;
    EXPECT_LE(a.cost(small, m), a.cost(big, m)) << to_string(a.coll) << " " << a.name;
  }
}
