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
  if (lanes < 1) {
    throw Error(Errc::invalid_argument,
                "a layout needs at least one lane (got " + std::to_string(lanes) + ")");
  }
  Layout layout;
  layout.size = static_cast<int>(node_label_of_rank.size());
  layout.num_lanes = lanes;
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
  return layout;
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
