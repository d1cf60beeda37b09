#include "algos/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <lanes/error.hpp>
#include <sstream>

#include "algos/registry.hpp"

namespace lanes::algos {

MachineParams MachineParams::parse(const std::string& text) {
  MachineParams m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string key;
    double value = 0;
    if (!(fields >> key)) continue;
    if (!(fields >> value)) {
      throw Error(Errc::invalid_argument, "calibration: no number after '" + key + "'");
    }
    if (key == "alpha_shm")
      m.alpha_shm = value;
    else if (key == "beta_shm")
      m.beta_shm = value;
    else if (key == "alpha_rail")
      m.alpha_rail = value;
    else if (key == "beta_rail")
      m.beta_rail = value;
    else if (key == "rails")
      m.rails = std::max(1, static_cast<int>(value));
    else if (key == "node_bytes_per_s")
      m.node_bytes_per_s = value;
    else {
      throw Error(Errc::invalid_argument,
                  "calibration: unknown key '" + key +
                      "' (known: alpha_shm beta_shm alpha_rail beta_rail rails node_bytes_per_s)");
    }
  }
  return m;
}

std::string MachineParams::to_text() const {
  std::ostringstream o;
  o.precision(6);
  o << "alpha_shm " << alpha_shm << "        # s per on-node message\n"
    << "beta_shm " << beta_shm << "         # s per byte copied on-node by one process\n"
    << "alpha_rail " << alpha_rail << "       # s per off-node message\n"
    << "beta_rail " << beta_rail << "        # s per byte on one rail at full rate\n"
    << "rails " << rails << "                # physical rails per node\n"
    << "node_bytes_per_s " << node_bytes_per_s << "  # per-node injection limit, 0: none\n";
  return o.str();
}

double rail_time(double bytes, double flows, const CostInput& in, const MachineParams& m) {
  // Flows spread over min(lanes, rails) rails; each rail's rate is shared by its flows.
  const double used_rails = std::max(1, std::min(in.lanes, m.rails));
  const double per_rail = std::max(1.0, flows / used_rails);
  double beta = m.beta_rail * per_rail;
  if (m.node_bytes_per_s > 0) beta = std::max(beta, flows / m.node_bytes_per_s);
  return m.alpha_rail + bytes * beta;
}

double shm_time(double bytes, const MachineParams& m) {
  return m.alpha_shm + bytes * m.beta_shm;
}

int ceil_log(long long x, long long base) {
  int r = 0;
  for (long long v = 1; v < x; v *= base) ++r;
  return r;
}

std::vector<Prediction> predict(Collective coll, const CostInput& in, const MachineParams& m) {
  // Applicability judged on a small layout of the same kind (regular or not, same lanes).
  const int n = static_cast<int>(std::clamp<long long>(in.ppn, 1, 8));
  const int nodes = static_cast<int>(std::clamp<long long>(in.nodes, 1, 4));
  std::vector<int> sizes(static_cast<std::size_t>(nodes), n);
  if (!in.regular && nodes > 1) sizes.back() = std::max(1, n - 1);
  if (!in.regular && nodes == 1) sizes = {n, std::max(1, n - 1)};
  const Layout sample = Layout::from_node_sizes(sizes, std::max(1, in.lanes));
  std::vector<Prediction> out;
  for (const Algorithm* algo : algorithms_for(coll)) {
    if (algo->cost == nullptr) continue;
    if (algo->applicable != nullptr && !algo->applicable(sample)) continue;
    out.push_back({std::string(algo->name), algo->cost(in, m)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Prediction& a, const Prediction& b) { return a.seconds < b.seconds; });
  return out;
}

}  // namespace lanes::algos
