#include "algos/layout.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#include "lanes/error.hpp"

namespace lanes::algos {

bool Layout::regular() const {
  for (const auto& ranks : node_ranks) {
    if (ranks.size() != node_ranks.front().size()) return false;
  }
  return true;
}

Layout Layout::from_node_labels(const std::vector<int>& node_label_of_rank, int lanes) {
  if (node_label_of_rank.empty()) {
    throw Error(Errc::invalid_argument, "a layout needs at least one rank");
  }
  if (lanes < 1 || lanes > kMaxLanes) {
    throw Error(Errc::invalid_argument, "a layout needs 1 to " + std::to_string(kMaxLanes) +
                                            " lanes (got " + std::to_string(lanes) + ")");
  }
  Layout layout;
  layout.size = static_cast<int>(node_label_of_rank.size());
  layout.num_lanes = lanes;
  layout.num_rails = lanes;
  layout.rail_numa.assign(static_cast<std::size_t>(lanes), -1);
  layout.rail_weights.assign(static_cast<std::size_t>(lanes), 1);
  layout.numa_of.assign(node_label_of_rank.size(), -1);
  layout.node_of.resize(node_label_of_rank.size());
  layout.local_rank_of.resize(node_label_of_rank.size());
  layout.lane_of.resize(node_label_of_rank.size());
  std::unordered_map<int, int> node_of_label;
  for (int rank = 0; rank < layout.size; ++rank) {
    auto [it, inserted] = node_of_label.try_emplace(node_label_of_rank[rank], layout.num_nodes());
    if (inserted) layout.node_ranks.emplace_back();
    const int node = it->second;
    auto& ranks = layout.node_ranks[node];
    layout.node_of[rank] = node;
    layout.local_rank_of[rank] = static_cast<int>(ranks.size());
    layout.lane_of[rank] = static_cast<int>(ranks.size()) % lanes;
    ranks.push_back(rank);
  }
  layout.spread_lanes();
  return layout;
}

std::uint64_t Layout::lane_weight(int lane) const {
  const int rail = rail_of_lane(lane);
  // The lanes on this rail are lane % R + j * R below k.
  const int lowest = lane % num_rails;
  const auto sharing = static_cast<std::uint64_t>((num_lanes - 1 - lowest) / num_rails + 1);
  return std::uint64_t{rail_weights[static_cast<std::size_t>(rail)]} * kMaxLanes / sharing;
}

std::uint64_t Layout::weight_of(LaneSet lanes) const {
  std::uint64_t sum = 0;
  lanes.each([&](int lane) { sum += lane_weight(lane); });
  return sum;
}

int Layout::driver_of(int node, int lane) const {
  for (const int r : node_ranks[static_cast<std::size_t>(node)]) {
    if (lanes_of[static_cast<std::size_t>(r)].contains(lane)) return r;
  }
  throw Error(Errc::internal, "no rank of node " + std::to_string(node) + " drives lane " +
                                  std::to_string(lane) + " in " + describe());
}

void Layout::spread_lanes() {
  lanes_of.assign(static_cast<std::size_t>(size), LaneSet{});
  for (const auto& ranks : node_ranks) {
    LaneSet taken;
    for (const int r : ranks) {
      lanes_of[static_cast<std::size_t>(r)] = LaneSet::one(lane_of[static_cast<std::size_t>(r)]);
      taken.add(lane_of[static_cast<std::size_t>(r)]);
    }
    // Lanes nobody has as primary: to the rank with the fewest lanes, NUMA-local ones first,
    // ties by local rank.
    for (int lane = 0; lane < num_lanes; ++lane) {
      if (taken.contains(lane)) continue;
      const int numa = rail_numa[static_cast<std::size_t>(rail_of_lane(lane))];
      int best = -1;
      for (const bool local_only : {true, false}) {
        for (const int r : ranks) {
          const auto i = static_cast<std::size_t>(r);
          if (local_only && (numa < 0 || numa_of[i] != numa)) continue;
          if (best < 0 || lanes_of[i].count() < lanes_of[static_cast<std::size_t>(best)].count()) {
            best = r;
          }
        }
        if (best >= 0) break;
      }
      lanes_of[static_cast<std::size_t>(best)].add(lane);
    }
  }
}

Layout Layout::with_lanes(int k, int first) const {
  if (k < 1 || k > kMaxLanes) {
    throw Error(Errc::invalid_argument, "lanes must be 1.." + std::to_string(kMaxLanes) + " (got " +
                                            std::to_string(k) + ")");
  }
  if (first < 0 || first >= num_rails) {
    throw Error(Errc::invalid_argument, "first_rail must be 0.." + std::to_string(num_rails - 1) +
                                            " (got " + std::to_string(first) + ")");
  }
  Layout l = *this;
  l.num_lanes = k;
  l.first_rail = first;
  for (int& lane : l.lane_of) {
    const int rail = rail_of_lane(lane);  // this rank's primary rail
    lane = (rail - first + num_rails) % num_rails % k;
  }
  l.spread_lanes();
  return l;
}

Layout Layout::blocks(int size, int ranks_per_node, int lanes) {
  if (size < 1 || ranks_per_node < 1) {
    throw Error(Errc::invalid_argument,
                "blocks layout needs size >= 1 and ranks_per_node >= 1 (got " +
                    std::to_string(size) + ", " + std::to_string(ranks_per_node) + ")");
  }
  std::vector<int> labels(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) labels[rank] = rank / ranks_per_node;
  return from_node_labels(labels, lanes);
}

Layout Layout::from_node_sizes(const std::vector<int>& sizes, int lanes) {
  std::vector<int> labels;
  for (std::size_t node = 0; node < sizes.size(); ++node) {
    if (sizes[node] < 1) {
      throw Error(Errc::invalid_argument, "node " + std::to_string(node) + " has " +
                                              std::to_string(sizes[node]) +
                                              " ranks; every node needs at least one");
    }
    labels.insert(labels.end(), static_cast<std::size_t>(sizes[node]), static_cast<int>(node));
  }
  return from_node_labels(labels, lanes);
}

std::string Layout::describe() const {
  auto plural = [](int n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
  };
  std::string out = plural(size, "rank") + " on " + plural(num_nodes(), "node") + " (";
  // Short lists are spelled out; long ones are run-length encoded as size*count.
  constexpr int kSpelledOut = 8;
  bool first = true;
  for (int node = 0; node < num_nodes();) {
    const std::size_t node_size = node_ranks[node].size();
    int run = 1;
    if (num_nodes() > kSpelledOut) {
      while (node + run < num_nodes() && node_ranks[node + run].size() == node_size) ++run;
    }
    if (!first) out += ",";
    first = false;
    out += std::to_string(node_size);
    if (run > 1) out += "*" + std::to_string(run);
    node += run;
  }
  out += "), " + plural(num_lanes, "lane");
  return out;
}

}  // namespace lanes::algos
