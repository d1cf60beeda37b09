// Layout: the plain-data picture of a communicator that algorithms see. Ranks, the node of each
// rank, its index on the node, the node's rails and the lanes each rank drives. Built by lib/
// from bootstrap + topology; built directly by tests for any scale.
//
// Lanes and rails: an algorithm uses k lanes (num_lanes); lane l runs over rail
// (first_rail + l) mod R of the node (R = num_rails physical NICs), so k < R leaves rails idle
// and k > R puts several lanes on one rail. Every lane of a node is driven by at least one of its
// ranks: a rank drives its primary lane (lane_of, NUMA-nearest when lib/ knows the binding), and
// the lanes nobody has as primary, which happens when a node holds fewer ranks than lanes, go to
// the ranks with the fewest lanes, NUMA-local ones first. One rank per node therefore drives all k
// lanes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algos/lane_set.hpp"

namespace lanes::algos {

struct Layout {
  int size = 1;                    // p
  int num_lanes = 1;               // k: lanes usable off-node (1..64)
  int num_rails = 1;               // R: physical rails per node
  int first_rail = 0;              // lane l runs over rail (first_rail + l) mod R
  std::vector<int> node_of;        // rank -> node index, nodes numbered 0..N-1 by first rank
  std::vector<int> local_rank_of;  // rank -> index on its node
  std::vector<int> lane_of;        // rank -> its primary lane (0..k-1)
  std::vector<LaneSet> lanes_of;   // rank -> every lane it drives (its primary among them)
  std::vector<std::vector<int>> node_ranks;  // node -> its ranks ordered by local rank
  std::vector<int> numa_of;                  // rank -> NUMA node it is bound to, -1 unknown
  std::vector<int> rail_numa;                // rail -> NUMA node of its NIC, -1 unknown
  std::vector<std::uint32_t> rail_weights;   // rail -> relative bandwidth (>= 1)

  int num_nodes() const { return static_cast<int>(node_ranks.size()); }
  int node_size_of(int rank) const { return static_cast<int>(node_ranks[node_of[rank]].size()); }
  bool same_node(int a, int b) const { return node_of[a] == node_of[b]; }
  bool regular() const;  // every node holds the same number of ranks
  int rail_of_lane(int lane) const { return (first_rail + lane) % num_rails; }
  LaneSet all_lanes() const { return LaneSet::first(num_lanes); }
  // Relative bandwidth of one lane: its rail's weight shared by the lanes on that rail.
  std::uint64_t lane_weight(int lane) const;
  std::uint64_t weight_of(LaneSet lanes) const;  // sum over the set
  // The local rank of `node` that drives `lane` first (every lane has one).
  int driver_of(int node, int lane) const;

  // Recomputes lanes_of from lane_of, numa_of and rail_numa (see the header comment).
  void spread_lanes();
  // The same communicator with k lanes starting at rail `first_rail`: each rank's primary lane
  // is its primary rail's lane mod k, and the driven sets are spread anew.
  Layout with_lanes(int k, int first = 0) const;

  // Nodes given per rank (any labels; renumbered by first appearance), local ranks in rank
  // order, primary lane of local rank i = i mod lanes, one rail per lane of equal weight.
  static Layout from_node_labels(const std::vector<int>& node_label_of_rank, int lanes);
  // Consecutive blocks of n ranks form a node (the last one may be smaller).
  static Layout blocks(int size, int ranks_per_node, int lanes);
  // Nodes of the given sizes, in order (irregular layouts).
  static Layout from_node_sizes(const std::vector<int>& sizes, int lanes);

  std::string describe() const;  // e.g. "8 ranks on 3 nodes (3,3,2), 2 lanes"
};

}  // namespace lanes::algos
