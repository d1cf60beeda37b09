// Builds the world Layout from what every process reported at start-up: nodes from the
// launcher (or LANES_NODE_SIZE), local ranks, the rails with their NUMA nodes and weights, and
// the lanes each rank drives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "lib/agreement.hpp"
#include "topo/topology.hpp"

namespace lanes::detail {

struct StartupRecord {
  std::string node_key;
  std::string host_id;  // the kernel's boot id: processes with the same one share its CPUs
  int launcher_local_rank = -1;
  int numa = -1;
  int cores = 1;
  std::string
      cpus;  // the CPUs this process may run on, one bit each (cpu i: byte i / 8, bit i % 8)
  std::vector<topo::NetDevice> rails;
  std::string calibration;           // cost-model parameters (rank 0's are used by everyone)
  std::string rules;                 // selection rules, JSON (rank 0's are used by everyone)
  std::vector<double> rail_weights;  // LANES_RAIL_WEIGHTS (rank 0's are used by everyone)
  // LANES_HIERARCHY_GROUPS (rank 0's is used by everyone): G, 0 the model's, -1 search.
  int hierarchy_groups = 0;
  std::optional<Failure> failure;  // this rank's own set-up failed: every rank throws
};

// `rail_weights`: relative bandwidth of each rail (one per rail). Throws
// lanes::Error(invalid_argument) for a LANES_NODE_SIZE that spans hosts and
// lanes::Error(topology) when processes have different numbers of rails.
algos::Layout build_world_layout(const std::vector<StartupRecord>& records, int node_size,
                                 int lanes, const std::vector<std::uint32_t>& rail_weights);

}  // namespace lanes::detail
