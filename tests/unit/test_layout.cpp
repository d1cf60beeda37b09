#include <gtest/gtest.h>

#include <vector>

#include "algos/layout.hpp"
#include "lanes/error.hpp"

namespace lanes::algos {
namespace {

TEST(Layout, FromNodeLabelsRenumbersByFirstAppearance) {
  const Layout l = Layout::from_node_labels({5, 5, 2, 5, 2, 9}, 2);
  EXPECT_EQ(l.size, 6);
  EXPECT_EQ(l.num_lanes, 2);
  EXPECT_EQ(l.num_nodes(), 3);
  EXPECT_EQ(l.node_of, (std::vector<int>{0, 0, 1, 0, 1, 2}));
  EXPECT_EQ(l.local_rank_of, (std::vector<int>{0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(l.lane_of, (std::vector<int>{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(l.node_ranks, (std::vector<std::vector<int>>{{0, 1, 3}, {2, 4}, {5}}));
  EXPECT_EQ(l.node_size_of(3), 3);
  EXPECT_EQ(l.node_size_of(5), 1);
  EXPECT_TRUE(l.same_node(0, 3));
  EXPECT_FALSE(l.same_node(0, 2));
  EXPECT_FALSE(l.regular());
}

TEST(Layout, Blocks) {
  const Layout l = Layout::blocks(8, 3, 2);
  EXPECT_EQ(l.size, 8);
  EXPECT_EQ(l.num_nodes(), 3);
  EXPECT_EQ(l.node_of, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(l.local_rank_of, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1}));
  EXPECT_EQ(l.lane_of, (std::vector<int>{0, 1, 0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(l.node_ranks, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6, 7}}));
  EXPECT_FALSE(l.regular());
  EXPECT_EQ(l.describe(), "8 ranks on 3 nodes (3,3,2), 2 lanes");
}

TEST(Layout, BlocksLargerThanSizeIsOneNode) {
  const Layout l = Layout::blocks(5, 16, 3);
  EXPECT_EQ(l.num_nodes(), 1);
  EXPECT_TRUE(l.regular());
  EXPECT_EQ(l.lane_of, (std::vector<int>{0, 1, 2, 0, 1}));
  EXPECT_EQ(l.describe(), "5 ranks on 1 node (5), 3 lanes");
}

TEST(Layout, FromNodeSizes) {
  const Layout l = Layout::from_node_sizes({1, 4, 2}, 3);
  EXPECT_EQ(l.size, 7);
  EXPECT_EQ(l.node_of, (std::vector<int>{0, 1, 1, 1, 1, 2, 2}));
  EXPECT_EQ(l.local_rank_of, (std::vector<int>{0, 0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(l.lane_of, (std::vector<int>{0, 0, 1, 2, 0, 0, 1}));
  EXPECT_FALSE(l.regular());
  EXPECT_EQ(l.describe(), "7 ranks on 3 nodes (1,4,2), 3 lanes");
}

TEST(Layout, EveryLaneOfANodeIsDriven) {
  // Nodes of 1, 4 and 2 ranks, 3 lanes: the single rank drives all three; on the node of 2,
  // lane 2 goes to the rank with fewer lanes (local rank 0 on a tie).
  const Layout l = Layout::from_node_sizes({1, 4, 2}, 3);
  EXPECT_EQ(l.lanes_of[0], LaneSet::first(3));
  EXPECT_EQ(l.lanes_of[1], LaneSet::one(0));
  EXPECT_EQ(l.lanes_of[4], LaneSet::one(0));  // local rank 3: primary lane 0, nothing else
  EXPECT_EQ(l.lanes_of[5], (LaneSet{0b101}));
  EXPECT_EQ(l.lanes_of[6], LaneSet::one(1));
  EXPECT_EQ(l.driver_of(1, 0), 1);
  EXPECT_EQ(l.driver_of(2, 2), 5);
  EXPECT_EQ(l.all_lanes(), LaneSet::first(3));
  // Two ranks, four lanes: {0, 2} and {1, 3}.
  const Layout two = Layout::blocks(4, 2, 4);
  EXPECT_EQ(two.lanes_of[0], (LaneSet{0b0101}));
  EXPECT_EQ(two.lanes_of[1], (LaneSet{0b1010}));
}

TEST(Layout, LeftoverLanesGoToNumaLocalRanks) {
  // One node, ranks on NUMA nodes 0 and 1, four rails: rails 0, 1 on NUMA 0 and 2, 3 on NUMA 1.
  Layout l = Layout::blocks(2, 2, 4);
  l.numa_of = {1, 0};
  l.rail_numa = {0, 0, 1, 1};
  l.lane_of = {2, 0};  // the NUMA-nearest primaries lib/ would give
  l.spread_lanes();
  EXPECT_EQ(l.lanes_of[0], (LaneSet{0b1100}));
  EXPECT_EQ(l.lanes_of[1], (LaneSet{0b0011}));
}

TEST(Layout, WithLanesAndLaneWeights) {
  Layout l = Layout::blocks(4, 2, 2);
  l.rail_weights = {1000, 500};
  EXPECT_EQ(l.lane_weight(0), 1000u * kMaxLanes);
  EXPECT_EQ(l.weight_of(LaneSet::first(2)), 1500u * kMaxLanes);
  // One lane of two rails: one rank per lane, both drive lane 0.
  const Layout one = l.with_lanes(1);
  EXPECT_EQ(one.num_lanes, 1);
  EXPECT_EQ(one.lanes_of, (std::vector<LaneSet>(4, LaneSet::one(0))));
  // Four lanes over two rails: lanes 0 and 2 share rail 0, so each gets half its weight.
  const Layout four = l.with_lanes(4);
  EXPECT_EQ(four.rail_of_lane(2), 0);
  EXPECT_EQ(four.lane_weight(2), 500u * kMaxLanes);
  EXPECT_EQ(four.lane_weight(3), 250u * kMaxLanes);
  EXPECT_EQ(four.lanes_of[0], (LaneSet{0b0101}));
  EXPECT_THROW(l.with_lanes(0), Error);
  EXPECT_THROW(l.with_lanes(65), Error);
  EXPECT_THROW(Layout::blocks(4, 2, 65), Error);
}

TEST(Layout, Regular) {
  EXPECT_TRUE(Layout::blocks(12, 4, 1).regular());
  EXPECT_TRUE(Layout::blocks(12, 1, 1).regular());
  EXPECT_TRUE(Layout::blocks(1, 1, 1).regular());
  EXPECT_FALSE(Layout::blocks(13, 4, 1).regular());
  EXPECT_TRUE(Layout::from_node_sizes({2, 2, 2}, 2).regular());
  EXPECT_TRUE(Layout::from_node_labels({0, 1, 0, 1}, 1).regular());
  EXPECT_FALSE(Layout::from_node_labels({0, 1, 0, 0}, 1).regular());
}

TEST(Layout, DescribeSingular) {
  EXPECT_EQ(Layout::blocks(1, 1, 1).describe(), "1 rank on 1 node (1), 1 lane");
  EXPECT_EQ(Layout::blocks(4, 1, 1).describe(), "4 ranks on 4 nodes (1,1,1,1), 1 lane");
}

TEST(Layout, DescribeLongListsRunLengthEncoded) {
  EXPECT_EQ(Layout::blocks(1024, 8, 2).describe(), "1024 ranks on 128 nodes (8*128), 2 lanes");
  EXPECT_EQ(Layout::blocks(1022, 8, 4).describe(), "1022 ranks on 128 nodes (8*127,6), 4 lanes");
  EXPECT_EQ(Layout::from_node_sizes({2, 2, 1, 3, 3, 3, 1, 1, 1}, 1).describe(),
            "17 ranks on 9 nodes (2*2,1,3*3,1*3), 1 lane");
}

TEST(Layout, DefaultIsOneRank) {
  const Layout l;
  EXPECT_EQ(l.size, 1);
  EXPECT_EQ(l.num_lanes, 1);
}

TEST(Layout, RejectsBadArguments) {
  EXPECT_THROW(Layout::from_node_labels({}, 1), Error);
  EXPECT_THROW(Layout::from_node_labels({0, 0}, 0), Error);
  EXPECT_THROW(Layout::blocks(0, 1, 1), Error);
  EXPECT_THROW(Layout::blocks(4, 0, 1), Error);
  EXPECT_THROW(Layout::from_node_sizes({2, 0, 1}, 1), Error);
  EXPECT_THROW(Layout::from_node_sizes({}, 1), Error);
  try {
    Layout::blocks(4, 2, 0);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
}

}  // namespace
}  // namespace lanes::algos
