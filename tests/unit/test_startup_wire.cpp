// lib/startup_wire.hpp: the record every process contributes to the start-up exchange.
#include "lib/startup_wire.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <lanes/error.hpp>
#include <vector>

using lanes::detail::decode_startup_record;
using lanes::detail::encode_startup_record;
using lanes::detail::StartupRecord;

TEST(StartupWire, ARecordSurvivesTheWire) {
  StartupRecord rec;
  rec.node_key = "host-a";
  rec.launcher_local_rank = 3;
  rec.cores = 2;
  rec.calibration = "alpha_shm 1e-6\n";
  rec.rules = "{}";
  rec.rail_weights = {100, 50};
  const std::vector<std::byte> addresses = {std::byte{1}, std::byte{2}};
  for (const int groups : {0, -1, 4}) {
    rec.hierarchy_groups = groups;
    std::vector<std::byte> back;
    const StartupRecord out = decode_startup_record(encode_startup_record(rec, addresses), back);
    EXPECT_EQ(out.node_key, rec.node_key);
    EXPECT_EQ(out.launcher_local_rank, 3);
    EXPECT_EQ(out.cores, 2);
    EXPECT_EQ(out.calibration, rec.calibration);
    EXPECT_EQ(out.rules, rec.rules);
    EXPECT_EQ(out.rail_weights, rec.rail_weights);
    EXPECT_EQ(out.hierarchy_groups, groups);
    EXPECT_EQ(back, addresses);
  }
}

TEST(StartupWire, RefusesAHierarchySettingNoRankWrites) {
  StartupRecord rec;
  rec.hierarchy_groups = -2;
  std::vector<std::byte> back;
  EXPECT_THROW(decode_startup_record(encode_startup_record(rec, {}), back), lanes::Error);
}

TEST(StartupWire, TheHostIdTravels) {
  StartupRecord rec;
  rec.node_key = "node0";
  rec.host_id = "0b3c6f52-7d4e-4a8e-9c1f-2f6d0e8a1b23";
  std::vector<std::byte> back;
  EXPECT_EQ(decode_startup_record(encode_startup_record(rec, {}), back).host_id, rec.host_id);
}
