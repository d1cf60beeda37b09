// Layout: the plain-data picture of a communicator that algorithms see. Ranks, the node of
// each rank, its index on the node, and the lane (rail) it drives by default. Built by lib/
// from bootstrap + topology; built directly by tests for any scale.
#pragma once

#include <string>
#include <vector>

namespace lanes::algos {

struct Layout {
  int size = 1;                    // p
  int num_lanes = 1;               // k: lanes (rails) usable off-node
  std::vector<int> node_of;        // rank -> node index, nodes numbered 0..N-1 by first rank
  std::vector<int> local_rank_of;  // rank -> index on its node
  std::vector<int> lane_of;        // rank -> lane it drives by default (0..k-1)
  std::vector<std::vector<int>> node_ranks;  // node -> its ranks ordered by local rank

  int num_nodes() const { return static_cast<int>(node_ranks.size()); }
  int node_size_of(int rank) const { return static_cast<int>(node_ranks[node_of[rank]].size()); }
  bool same_node(int a, int b) const { return node_of[a] == node_of[b]; }
  bool regular() const;  // every node holds the same number of ranks

  // Nodes given per rank (any labels; renumbered by first appearance), local ranks in rank
  // order, lane of local rank i = i mod lanes.
  static Layout from_node_labels(const std::vector<int>& node_label_of_rank, int lanes);
  // Consecutive blocks of n ranks form a node (the last one may be smaller).
  static Layout blocks(int size, int ranks_per_node, int lanes);
  // Nodes of the given sizes, in order (irregular layouts).
  static Layout from_node_sizes(const std::vector<int>& sizes, int lanes);

  std::string describe() const;  // e.g. "8 ranks on 3 nodes (3,3,2), 2 lanes"
};

}  // namespace lanes::algos
