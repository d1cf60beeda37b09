#include "lib/world_layout.hpp"

#include <algorithm>
#include <lanes/error.hpp>
#include <map>

namespace lanes::detail {

namespace {

std::string rail_list(const std::vector<topo::NetDevice>& rails) {
  std::string s;
  for (const auto& r : rails) s += (s.empty() ? "" : ",") + r.name;
  return s.empty() ? "none" : s;
}

}  // namespace

algos::Layout build_world_layout(const std::vector<StartupRecord>& records, int node_size,
                                 int lanes, const std::vector<std::uint32_t>& rail_weights) {
  const int p = static_cast<int>(records.size());
  const std::size_t rails = records.front().rails.size();
  for (int r = 1; r < p; ++r) {
    if (records[static_cast<std::size_t>(r)].rails.size() != rails) {
      throw Error(Errc::topology,
                  "rank 0 drives " + std::to_string(rails) + " rails (" +
                      rail_list(records.front().rails) + ") but rank " + std::to_string(r) +
                      " drives " +
                      std::to_string(records[static_cast<std::size_t>(r)].rails.size()) + " (" +
                      rail_list(records[static_cast<std::size_t>(r)].rails) +
                      "): every process needs the same number of rails; set LANES_RAILS");
    }
  }
  const int k = lanes > 0 ? lanes : static_cast<int>(rails);

  std::vector<int> label(static_cast<std::size_t>(p));
  bool use_launcher_order = node_size == 0;
  if (node_size > 0) {
    for (int r = 0; r < p; ++r) {
      label[static_cast<std::size_t>(r)] = r / node_size;
      const int first = r / node_size * node_size;
      if (records[static_cast<std::size_t>(r)].node_key !=
          records[static_cast<std::size_t>(first)].node_key) {
        throw Error(
            Errc::invalid_argument,
            "LANES_NODE_SIZE=" + std::to_string(node_size) + " puts rank " + std::to_string(first) +
                " (host " + records[static_cast<std::size_t>(first)].node_key + ") and rank " +
                std::to_string(r) + " (host " + records[static_cast<std::size_t>(r)].node_key +
                ") on one node: emulated nodes must stay within a host");
      }
    }
  } else {
    std::map<std::string, int> ids;
    for (int r = 0; r < p; ++r) {
      const auto& key = records[static_cast<std::size_t>(r)].node_key;
      auto it = ids.emplace(key, static_cast<int>(ids.size())).first;
      label[static_cast<std::size_t>(r)] = it->second;
    }
  }
  algos::Layout layout = algos::Layout::from_node_labels(label, k);

  // Order each node's ranks by the launcher's local rank when it gives a permutation.
  if (use_launcher_order) {
    for (auto& ranks : layout.node_ranks) {
      std::vector<int> locals;
      for (int r : ranks)
        locals.push_back(records[static_cast<std::size_t>(r)].launcher_local_rank);
      std::vector<int> sorted = locals;
      std::sort(sorted.begin(), sorted.end());
      bool permutation = true;
      for (std::size_t i = 0; i < sorted.size(); ++i)
        permutation &= sorted[i] == static_cast<int>(i);
      if (!permutation) continue;
      std::sort(ranks.begin(), ranks.end(), [&](int a, int b) {
        return records[static_cast<std::size_t>(a)].launcher_local_rank <
               records[static_cast<std::size_t>(b)].launcher_local_rank;
      });
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        layout.local_rank_of[static_cast<std::size_t>(ranks[i])] = static_cast<int>(i);
      }
    }
  }

  // The rails: rank 0's NUMA locality (every node is taken to be alike) and the weights.
  layout.num_rails = static_cast<int>(rails);
  layout.rail_numa.clear();
  for (const auto& d : records.front().rails) layout.rail_numa.push_back(d.numa_node);
  if (rail_weights.size() != rails) {
    throw Error(Errc::internal, std::to_string(rail_weights.size()) + " rail weights for " +
                                    std::to_string(rails) + " rails");
  }
  layout.rail_weights = rail_weights;
  for (int r = 0; r < p; ++r) {
    layout.numa_of[static_cast<std::size_t>(r)] = records[static_cast<std::size_t>(r)].numa;
  }
  // Primary lane of each rank: NUMA-nearest rail first, then round robin (topo::assign_rails);
  // the lanes nobody has as primary go to the ranks with the fewest (Layout::spread_lanes).
  for (const auto& ranks : layout.node_ranks) {
    std::vector<int> numa;
    for (int r : ranks) numa.push_back(records[static_cast<std::size_t>(r)].numa);
    const std::vector<int> rail_of =
        topo::assign_rails(numa, records[static_cast<std::size_t>(ranks.front())].rails);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      layout.lane_of[static_cast<std::size_t>(ranks[i])] = rail_of[i] % k;
    }
  }
  layout.spread_lanes();
  return layout;
}

}  // namespace lanes::detail
