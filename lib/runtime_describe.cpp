// The layout a runtime sees, for people (describe: lanes-info's text) and for scripts
// (describe_json: lanes-info --json). Both read the same records: the peers' start-up records,
// the world's layout and this process's rails.
#include <algorithm>
#include <functional>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "algos/numa_domains.hpp"
#include "lib/comm_impl.hpp"
#include "lib/node_copy.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes::detail {

namespace {

bool equal_weights(const algos::Layout& lay) {
  return std::adjacent_find(lay.rail_weights.begin(), lay.rail_weights.end(),
                            std::not_equal_to<>()) == lay.rail_weights.end();
}

// The rails (device names) behind a rank's lanes, as its own start-up record names them.
std::vector<std::string> rails_of(const algos::Layout& lay, const PeerRecord& p, int rank) {
  std::vector<std::string> out;
  lay.lanes_of[static_cast<std::size_t>(rank)].each([&](int lane) {
    out.push_back(p.rails[static_cast<std::size_t>(lay.rail_of_lane(lane)) % p.rails.size()]);
  });
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

std::string RuntimeImpl::on_node_copies() const {
  if (world_->layout().node_size_of(world_->rank()) == 1) return "none (alone on node)";
  const double slowdown = world_->cma_slowdown();
  if (slowdown <= 0) return world_->cma() ? "cma" : "staged";
  std::ostringstream o;
  o.precision(2);
  const double page = world_->cma_page_seconds();
  o << (world_->cma() ? "cma" : "staged") << " (single copy " << slowdown << "x memcpy's time";
  if (page > 0) {
    std::ostringstream us;
    us << std::fixed << std::setprecision(1) << page * 1e6;
    o << ", " << us.str() << " us a page";
  }
  // The reductions' threshold lies below the other messages' one: the line names what it stages.
  static_assert(kPullReductionSlowdownMax < transport::kSlowSingleCopyRatio);
  static_assert(kPulledReductionMin == std::size_t{2} << 20);
  static_assert(kPulledReductionMax == std::size_t{4} << 20);
  if (!world_->cma()) {
    static_assert(transport::kSlowSingleCopyStagedMax == 64 * 1024);
    const bool small_slow = transport::slow_small_single_copy(slowdown, page);
    const bool reductions_pulled = slowdown < kPullReductionSlowdownMax;
    if (small_slow) {
      o << (reductions_pulled ? ": messages up to 64 KiB staged, reductions of 2-4 MiB vectors "
                                "single-copy, the others staged"
                              : ": reductions and messages up to 64 KiB staged");
    } else {
      o << (reductions_pulled ? ": reductions of 2-4 MiB vectors single-copy, the others staged"
                              : ": reductions staged");
    }
  } else if (slowdown >= transport::kSlowSingleCopyRatio) {
    static_assert(transport::kSharedCoresSlowStagedMax == 256 * 1024);
    o << ": scatter, gather, alltoall and allgather messages up to 256 KiB staged";
  }
  o << ")";
  return o.str();
}

std::string RuntimeImpl::heap_description() const {
  if (!heap_) return heap_note_;
  std::string out = std::to_string(heap_->capacity() >> 20) + " MiB";
  if (world_->layout().node_size_of(world_->rank()) > 1 && !world_->heaps_mapped()) {
    out += " (not mapped by every process of the node: read through the kernel there)";
  }
  return out;
}

std::string RuntimeImpl::describe() const {
  std::ostringstream o;
  if (!world_) return "lanes runtime (finalized)\n";
  const auto& lay = world_->layout();
  o << "lanes: " << lay.describe() << ", bootstrap " << bootstrap_name_ << ", progress "
    << to_string(progress_) << ", on-node copies " << on_node_copies() << ", shared heap "
    << heap_description() << "\n";
  for (int node = 0; node < lay.num_nodes(); ++node) {
    const auto& ranks = lay.node_ranks[static_cast<std::size_t>(node)];
    const auto& first = peers_[static_cast<std::size_t>(ranks.front())];
    o << "node " << node << " (host " << first.node_key << "): " << ranks.size() << " ranks";
    // Where the node's ranks span NUMA nodes, its node phases run in two levels.
    const int domains = algos::phase_domains(lay, ranks).count();
    if (domains > 1) o << " in " << domains << " NUMA domains";
    o << ", rails";
    const bool equal = equal_weights(lay);
    for (std::size_t i = 0; i < first.rails.size(); ++i) {
      o << " " << i << ":" << first.rails[i];
      if (!equal && i < lay.rail_weights.size()) o << " (weight " << lay.rail_weights[i] << ")";
    }
    o << "\n";
    for (int r : ranks) {
      const auto& p = peers_[static_cast<std::size_t>(r)];
      const algos::LaneSet lanes = lay.lanes_of[static_cast<std::size_t>(r)];
      const bool one = lanes.count() == 1;
      o << "  rank " << r << ": local rank " << lay.local_rank_of[static_cast<std::size_t>(r)]
        << ", numa " << p.numa << ", drives lane" << (one ? " " : "s ") << lanes.text() << " (rail"
        << (one ? " " : "s ") << joined(rails_of(lay, p, r)) << ")\n";
    }
  }
  if (rails_) {
    o << "this process (rank " << world_->rank() << ") rails:";
    for (std::size_t i = 0; i < rails_->count(); ++i) {
      o << " " << i << ":" << rails_->device(i) << "[" << rails_->transports(i) << "]";
    }
    o << "\n";
  }
  return o.str();
}

std::string RuntimeImpl::describe_json() const {
  using json = nlohmann::ordered_json;
  if (!world_) return json{{"finalized", true}}.dump(2);
  const auto& lay = world_->layout();
  json nodes = json::array();
  for (int node = 0; node < lay.num_nodes(); ++node) {
    const auto& ranks = lay.node_ranks[static_cast<std::size_t>(node)];
    const auto& first = peers_[static_cast<std::size_t>(ranks.front())];
    json rails = json::array();
    for (std::size_t i = 0; i < first.rails.size(); ++i) {
      json rail = {{"index", i}, {"device", first.rails[i]}};
      if (i < lay.rail_weights.size()) rail["weight"] = lay.rail_weights[i];
      rails.push_back(rail);
    }
    json members = json::array();
    for (int r : ranks) {
      const auto& p = peers_[static_cast<std::size_t>(r)];
      json lanes = json::array();
      lay.lanes_of[static_cast<std::size_t>(r)].each([&](int lane) { lanes.push_back(lane); });
      members.push_back({{"rank", r},
                         {"local_rank", lay.local_rank_of[static_cast<std::size_t>(r)]},
                         {"numa", p.numa},
                         {"lanes", lanes},
                         {"rails", rails_of(lay, p, r)}});
    }
    nodes.push_back(
        {{"node", node}, {"host", first.node_key}, {"rails", rails}, {"ranks", members}});
  }
  json own = json::array();
  if (rails_) {
    for (std::size_t i = 0; i < rails_->count(); ++i) {
      own.push_back(
          {{"index", i}, {"device", rails_->device(i)}, {"transports", rails_->transports(i)}});
    }
  }
  const json doc = {{"ranks", lay.size},
                    {"nodes", nodes},
                    {"lanes", lay.num_lanes},
                    {"bootstrap", bootstrap_name_},
                    {"progress", to_string(progress_)},
                    {"on_node_copies", on_node_copies()},
                    {"shared_heap", heap_description()},
                    {"this_process", {{"rank", world_->rank()}, {"rails", own}}}};
  return doc.dump(2);
}

}  // namespace lanes::detail
