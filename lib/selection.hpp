// Which algorithm serves a call: a pure function of the call's collective and size, the layout,
// the requested name (CallOptions::algorithm, else LANES_<COLL>_ALGORITHM), LANES_RULES and the
// cost model's parameters. Identical on every rank given the same inputs (rank 0's rules and
// calibration are shared at start-up). Throws lanes::Error(invalid_argument) for an unknown
// name, and for a non-commutative operation no algorithm in rank order can serve.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "algos/schedule.hpp"
#include "algos/shared_cores.hpp"
#include "lib/config.hpp"
#include "lib/rules.hpp"

namespace lanes::detail {

struct SelectionInput {
  algos::Collective coll = algos::Collective::bcast;
  std::size_t bytes = 0;
  const algos::Layout* layout = nullptr;
  bool rank_order = false;  // a non-commutative operation: algorithms in rank order only
  std::string requested;    // CallOptions::algorithm; "" or "auto": the configuration's
  const Config* config = nullptr;
  const Rules* rules = nullptr;
  const algos::MachineParams* machine = nullptr;
  // A one-node communicator: where its processes outnumber the node's cores, the model prices
  // each candidate from its schedules on those cores (algos/shared_cores.hpp).
  struct SharedCores {
    int cores = 0;                        // cores the node's processes share; 0: not known
    algos::SingleCopyFrom single_copy{};  // the node channels' thresholds
  } shared;
};

struct Selection {
  std::string algorithm;
  // Why, for LANES_INFO: "CallOptions::algorithm", "LANES_BCAST_ALGORITHM", "LANES_RULES",
  // "model" or "fallback" (the named algorithm does not apply to the layout).
  std::string source;
  std::string not_applicable;              // with "fallback": the name that did not apply
  std::vector<algos::Prediction> ranking;  // with "model": its candidates, cheapest first
};

Selection select_algorithm(const SelectionInput& in);

// The variable naming `coll`'s algorithm (LANES_BCAST_ALGORITHM, ...) and its value; the barrier
// has none ("auto").
std::string configured_algorithm(const Config& cfg, algos::Collective coll, const char** source);

}  // namespace lanes::detail
