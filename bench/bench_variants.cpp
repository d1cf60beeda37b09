#include "bench_variants.hpp"

#include <algorithm>
#include <cstdio>
#include <regex>
#include <stdexcept>

#include "algos/layout.hpp"
#include "algos/registry.hpp"

namespace lanes_bench {

namespace {

const lanes::algos::Algorithm* find(const std::string& collective, const std::string& name) {
  for (const auto& a : lanes::algos::all_algorithms()) {
    if (collective == lanes::algos::to_string(a.coll) && name == a.name) return &a;
  }
  return nullptr;
}

// The lanes count lanes::Runtime::describe() names on its first line ("..., 2 lanes, ...").
int described_lanes(const std::string& text) {
  static const std::regex pattern(R"(\), ([0-9]+) lanes?,)");
  std::smatch m;
  const std::string first = text.substr(0, text.find('\n'));
  if (std::regex_search(first, m, pattern)) return std::stoi(m[1].str());
  return 0;
}

}  // namespace

Shape layout_shape(const lanes::Runtime& rt, const lanes::Communicator& world, MPI_Comm comm) {
  Shape s;
  s.nodes = world.num_nodes();
  const int mine[2] = {world.node_rank(), world.node_size()};
  std::vector<int> all(2 * static_cast<std::size_t>(world.size()));
  MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm);
  for (std::size_t r = 0; r < all.size(); r += 2) {
    if (all[r] == 0) s.node_sizes.push_back(all[r + 1]);  // one entry per node: its first rank
    s.ppn = std::max(s.ppn, all[r + 1]);
  }
  s.default_lanes = described_lanes(rt.describe());
  return s;
}

void validate_algorithms(const Options& o) {
  for (const auto& name : o.algorithms) {
    if (name == "auto") continue;
    bool known = false;
    for (const auto& c : o.collectives) known = known || find(c, name) != nullptr;
    if (!known) {
      throw std::invalid_argument("--algorithms: '" + name +
                                  "' is not an algorithm of the collectives measured");
    }
  }
}

std::vector<Variant> variants_for(const std::string& collective, const Options& o,
                                  const Shape& shape, bool report) {
  std::vector<Variant> out;
  if (o.native) out.push_back({true, "mpi", 0, 0});
  if (!o.lanes) return out;
  std::vector<std::string> names;
  if (o.algorithms.empty()) {
    names = lanes::algorithms(collective);
  } else {
    for (const auto& name : o.algorithms) {
      if (name == "auto" || find(collective, name) != nullptr) names.push_back(name);
    }
  }
  const std::vector<int> lanes_counts =
      o.lanes_counts.empty() ? std::vector<int>{0} : o.lanes_counts;
  for (const auto& name : names) {
    for (int k : lanes_counts) {
      const int used = k > 0 ? k : shape.default_lanes;
      const auto* algo = find(collective, name);
      if (algo != nullptr && algo->applicable != nullptr) {
        const auto layout =
            lanes::algos::Layout::from_node_sizes(shape.node_sizes, std::max(used, 1));
        if (!algo->applicable(layout)) {
          if (report) {
            std::fprintf(stderr, "lanes-bench: skipping %s %s (%d lane%s): does not apply to %s\n",
                         collective.c_str(), name.c_str(), used, used == 1 ? "" : "s",
                         layout.describe().c_str());
          }
          continue;
        }
      }
      out.push_back({false, name, k, used});
    }
  }
  return out;
}

}  // namespace lanes_bench
