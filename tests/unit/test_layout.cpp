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
