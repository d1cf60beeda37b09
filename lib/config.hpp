// Configuration: one table of LANES_* variables (name, default, meaning), read once into an
// immutable Config. Nothing below lib/ reads the environment.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lanes::detail {

struct ConfigVar {
  const char* name;
  const char* default_value;
  std::string help;
};

// Every variable lanes reads, in the order lanes-info and the README list them.
const std::vector<ConfigVar>& config_table();

enum class ProgressMode { spin, yield, wait, automatic };
enum class CmaMode { automatic, on, off };

struct Config {
  std::optional<std::vector<std::string>> rails;  // LANES_RAILS
  int node_size = 0;                              // LANES_NODE_SIZE (0: from the bootstrap)
  int lanes = 0;                                  // LANES_LANES (0: number of rails)
  std::vector<double> rail_weights;               // LANES_RAIL_WEIGHTS (empty: calibration)
  ProgressMode progress = ProgressMode::automatic;
  std::string ucx_tls = "^sm";
  CmaMode cma = CmaMode::automatic;
  double cma_slowdown = 0;  // LANES_CMA_SLOWDOWN (0: timed at start-up)
  long long heap_mib = -1;  // LANES_HEAP_SIZE in MiB (-1: the host's memory; 0: no heap)
  bool check = false;
  double timeout_s = 0;            // 0: never
  double finalize_timeout_s = 10;  // the closing barrier's bound; 0: never
  int info = 0;
  std::string bcast_algorithm = "auto";
  std::string scatter_algorithm = "auto";
  std::string alltoall_algorithm = "auto";
  std::string allgather_algorithm = "auto";
  std::string gather_algorithm = "auto";
  std::string reduce_algorithm = "auto";
  std::string allreduce_algorithm = "auto";
  std::string reduce_scatter_block_algorithm = "auto";
  std::string barrier_algorithm = "auto";
  // LANES_HIERARCHY_GROUPS: a fixed G (0: none), or search (lib/group_search.hpp).
  int hierarchy_groups = 0;
  bool hierarchy_search = false;
  std::string calibration;  // LANES_CALIBRATION: cost-model parameters file
  std::string rules;        // LANES_RULES: JSON selection rules file
  // Names of the UCX_* variables set (the user's UCX settings, which lanes' own settings of its
  // rail contexts leave alone). Filled by from_environment().
  std::vector<std::string> ucx_variables;

  // Throws lanes::Error(invalid_argument) naming the variable and its accepted values.
  static Config parse(const std::function<const char*(const char*)>& lookup);
  static Config from_environment();
};

// The value lanes would use for `name` (environment or default), for lanes-info.
std::string config_value(const ConfigVar& var);

const char* to_string(ProgressMode m);

}  // namespace lanes::detail
