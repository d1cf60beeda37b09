// lanes-model: what the cost model predicts for every applicable algorithm of a collective at
// any scale, and which one selection would choose.
//   lanes-model --collective bcast --nodes 10000 --ppn 32 --rails 2 --bytes 1048576
//               [--lanes K] [--calibration FILE] [--irregular]
//               [--cores C [--single-copy-min B] [--exchange-copy-min B] [--cma-slowdown X]]
//               (one node whose processes share C cores)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <lanes/error.hpp>
#include <sstream>
#include <string>

#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "algos/reduce/hierarchical.hpp"
#include "algos/registry.hpp"
#include "algos/shared_cores.hpp"

namespace {

int usage(const char* why) {
  if (why != nullptr) std::fprintf(stderr, "lanes-model: %s\n", why);
  std::fprintf(stderr,
               "usage: lanes-model --collective "
               "bcast|scatter|gather|alltoall|allgather|reduce|allreduce|\n"
               "                                reduce_scatter_block|barrier\n"
               "                   --nodes N --ppn n --bytes B [--rails R] [--lanes K]\n"
               "                   [--calibration FILE] [--irregular]\n"
               "                   [--cores C [--single-copy-min B] [--exchange-copy-min B]\n"
               "                    [--cma-slowdown X]]\n"
               "B: the bcast or reduction vector, or one block for the other collectives.\n"
               "--cores: one node whose n processes share C < n cores, priced from the\n"
               "schedules run on C cores; messages from --single-copy-min bytes count one\n"
               "copy, smaller ones two (default: all two), and from --exchange-copy-min\n"
               "bytes those of a rank that sends all before it receives (an alltoall's);\n"
               "a single copy takes X times beta_shm per byte (default 1; LANES_INFO=1\n"
               "prints the node's ratio).\n");
  return 2;
}

bool parse_collective(const std::string& s, lanes::algos::Collective& c) {
  using lanes::algos::Collective;
  for (Collective x : lanes::algos::kCollectives) {
    if (s == lanes::algos::to_string(x)) {
      c = x;
      return true;
    }
  }
  return false;
}

std::string format_time(double s) {
  char buf[64];
  if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%10.2f us", s * 1e6);
  else if (s < 1.0)
    std::snprintf(buf, sizeof buf, "%10.3f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%10.3f s ", s);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lanes::algos;
  Collective coll = Collective::bcast;
  bool have_coll = false;
  CostInput in;
  MachineParams m;
  std::string calibration;
  int lanes = 0;
  int cores = 0;
  SingleCopyFrom single_copy;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--collective")
        have_coll = parse_collective(next(), coll);
      else if (a == "--nodes")
        in.nodes = std::stoll(next());
      else if (a == "--ppn")
        in.ppn = std::stoll(next());
      else if (a == "--bytes")
        in.bytes = std::stoull(next());
      else if (a == "--rails")
        m.rails = std::stoi(next());
      else if (a == "--lanes")
        lanes = std::stoi(next());
      else if (a == "--calibration")
        calibration = next();
      else if (a == "--cores")
        cores = std::stoi(next());
      else if (a == "--single-copy-min")
        single_copy.any = std::stoull(next());
      else if (a == "--exchange-copy-min")
        single_copy.exchange = std::stoull(next());
      else if (a == "--cma-slowdown")
        single_copy.slowdown = std::stod(next());
      else if (a == "--irregular")
        in.regular = false;
      else if (a == "--help" || a == "-h")
        return usage(nullptr), 0;
      else
        return usage(("unknown argument " + a).c_str());
    } catch (const std::exception& e) {
      return usage((a + ": " + e.what()).c_str());
    }
  }
  if (!have_coll)
    return usage(
        "--collective must be bcast, scatter, gather, alltoall, allgather, reduce, allreduce, "
        "reduce_scatter_block or barrier");
  if (in.nodes < 1 || in.ppn < 1 || m.rails < 1) return usage("nodes, ppn and rails must be >= 1");
  try {
    if (!calibration.empty()) {
      std::ifstream f(calibration);
      if (!f) return usage(("cannot read " + calibration).c_str());
      std::stringstream text;
      text << f.rdbuf();
      const int rails = m.rails;
      m = MachineParams::parse(text.str(), "--calibration file '" + calibration + "'");
      if (rails != 1) m.rails = rails;  // the command line wins
    }
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "lanes-model: %s\n", e.what());
    return 1;
  }
  in.lanes = lanes > 0 ? lanes : m.rails;
  if (cores < 0 || (cores > 0 && in.nodes != 1)) return usage("--cores needs --nodes 1");
  auto predictions = predict(coll, in, m);
  const bool shared = cores > 0 && in.ppn > cores;
  std::vector<SharedCoreRun> runs;  // with `shared`, each prediction's run
  if (shared) {
    const Layout node = Layout::blocks(static_cast<int>(in.ppn), static_cast<int>(in.ppn), 1);
    const auto ranked =
        rank_on_shared_cores(predictions, coll, node, in.bytes, m, cores, single_copy);
    predictions.clear();
    for (const auto& c : ranked) {
      predictions.push_back(c.prediction);
      runs.push_back(c.run);
    }
  }
  std::printf("%s of %zu bytes on %lld nodes x %lld processes%s, %d rails, %d lanes (%s)\n",
              to_string(coll), in.bytes, in.nodes, in.ppn, in.regular ? "" : " (irregular)",
              m.rails, in.lanes, calibration.empty() ? "default parameters" : calibration.c_str());
  if (shared) std::printf("on %d shared cores (list schedule of every rank's ops)\n", cores);
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    std::printf("  %-22s %s", predictions[i].algorithm.c_str(),
                format_time(predictions[i].seconds).c_str());
    if (shared) {
      std::printf("  (work %s, %d hand-offs)", format_time(runs[i].work_s).c_str(),
                  runs[i].handoffs);
    }
    if (coll == Collective::reduce) {
      if (const int groups = hierarchical_groups_of(predictions[i].algorithm, in); groups > 0) {
        std::printf("  (G = %d group%s of %lld)", groups, groups == 1 ? "" : "s", in.p() / groups);
      }
    }
    std::printf("\n");
  }
  if (predictions.empty()) {
    std::printf("no algorithm with a cost formula applies\n");
    return 1;
  }
  std::printf("chosen: %s\n", predictions.front().algorithm.c_str());
  return 0;
}
