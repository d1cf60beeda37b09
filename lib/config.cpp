#include "lib/config.hpp"

#include <unistd.h>  // environ

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <lanes/error.hpp>
#include <sstream>
#include <string_view>

#include "algos/registry.hpp"

namespace lanes::detail {

namespace {

// The algorithms come from the registry, so the list cannot fall behind it.
std::string algorithm_help(const char* what, algos::Collective coll) {
  return std::string(what) + " algorithm: " + algos::algorithm_names(coll) +
         ". auto: the cost model's choice.";
}

}  // namespace

const std::vector<ConfigVar>& config_table() {
  static const std::vector<ConfigVar> table = {
      {"LANES_RAILS", "auto",
       "Comma-separated network devices to use as rails, in lane order (e.g. mlx5_0:1,mlx5_1:1 "
       "or rail0,rail1; lo for loopback; a name may repeat). auto: OpenFabrics ports, else "
       "physical NICs, else veth interfaces, else lo. Unknown names are an error."},
      {"LANES_NODE_SIZE", "0",
       "Emulate nodes on one host: consecutive blocks of n ranks form a node. 0: nodes as the "
       "launcher reports them."},
      {"LANES_LANES", "0", "Number of lanes k the algorithms use. 0: the number of rails."},
      {"LANES_RAIL_WEIGHTS", "",
       "Relative bandwidth of each rail, comma-separated in rail order (e.g. 100,50): striping "
       "splits a message in these proportions and the cost model uses them (rank 0's are used "
       "everywhere). Empty: the rail rates of LANES_CALIBRATION, else equal rails."},
      {"LANES_PROGRESS", "auto",
       "How a waiting process polls: spin (busy poll), yield (poll, then sched_yield when idle), "
       "wait (for processes that share cores: sched_yield from the first idle poll, and sleep "
       "on the rails' event descriptors once only rails have been pending for 500 us). auto: spin "
       "unless the host runs more processes than the CPUs their affinity masks allow together "
       "(two processes bound to a core each: spin), then wait; a host is one kernel, so the "
       "nodes of an emulated cluster (network namespaces, containers) count together."},
      {"LANES_UCX_TLS", "^sm",
       "UCX transports of every rail context (UCX_TLS syntax). The default excludes UCX's "
       "shared-memory transports: on-node traffic uses lanes' own segment."},
      {"LANES_CMA", "auto",
       "Single-copy on-node transfers of large messages with process_vm_readv/writev: auto "
       "(messages above the chunk where a host is oversubscribed as for LANES_PROGRESS, or a "
       "node's chunks are below 64 KiB, and there an alltoall's above 16 KiB, but a scatter's, "
       "gather's, alltoall's and allgather's above 256 KiB where the kernel's copy takes 2.5 "
       "times memcpy's time or more; and, with a core "
       "per process, node messages above 4 KiB, or above 64 KiB where the kernel's copy takes "
       "2.5 times memcpy's time or more (LANES_CMA_SLOWDOWN) or 1.5 us or more a page, "
       "of collectives that combine nothing, as bcast, scatter, gather, alltoall and allgather, "
       "or of a rank that also receives on its node, allreduce and reduce_scatter_block of "
       "vectors above 2 MiB up to 4 MiB where the kernel's copy takes less than 1.5 times "
       "memcpy's time; otherwise "
       "staged copies through the node segment, a reduce's always, "
       "its receivers combining the pieces as they arrive, and always when the probe fails), "
       "1 (require), 0 (never)."},
      {"LANES_CMA_SLOWDOWN", "auto",
       "The kernel's single copy's time over memcpy's that the LANES_CMA rules compare with 2.5 "
       "(1.5 for reductions): "
       "auto (timed at start-up: process_vm_readv against memcpy of 1 MiB, best of 40 rounds, "
       "the median over the processes) or a positive number to use instead, which keeps runs "
       "alike on a machine whose ratio lies near a threshold (the time of a page's copy, which the "
       "probe also takes, then counts for nothing)."},
      {"LANES_HEAP_SIZE", "auto",
       "MiB that this process's shared heap may hold: the memory of Runtime::allocate (and of "
       "MPI_Alloc_mem under liblanes_mpi), which the node's other processes read in place, so "
       "that node messages from it take one memcpy by the receiver (a reduction combines them "
       "from there) rather than the kernel's copy or two copies through the node segment. "
       "Reserved, not used: pages come as the program touches them; every process of a node "
       "maps every heap of the node. auto: the host's memory, at most 64 GiB; 0: no heap "
       "(allocate returns ordinary memory)."},
      {"LANES_CHECK", "0",
       "1: before each collective all ranks confirm the same collective, root and sizes; a "
       "mismatch fails on every rank with a message naming it."},
      {"LANES_TIMEOUT", "0",
       "Whole seconds a collective may go without any progress before it fails with a timeout "
       "error. 0: never."},
      {"LANES_FINALIZE_TIMEOUT", "10",
       "Whole seconds the closing synchronisation of Runtime destruction (and MPI_Finalize "
       "under liblanes_mpi) waits for peers that do not arrive (a failed or stopped peer) "
       "before it gives up and closes anyway; LANES_TIMEOUT when that is shorter. 0: never."},
      {"LANES_INFO", "0", "1: rank 0 prints the layout at start-up and each algorithm choice."},
      {"LANES_CALIBRATION", "",
       "Cost-model parameters (a file written by lanes-calibrate; rank 0's is used everywhere). "
       "Empty: built-in defaults."},
      {"LANES_RULES", "",
       "JSON file of selection rules by collective, size range and ranks (rank 0's is used "
       "everywhere); consulted before the cost model. Empty: none."},
      {"LANES_BCAST_ALGORITHM", "auto", algorithm_help("Broadcast", algos::Collective::bcast)},
      {"LANES_SCATTER_ALGORITHM", "auto", algorithm_help("Scatter", algos::Collective::scatter)},
      {"LANES_ALLTOALL_ALGORITHM", "auto", algorithm_help("Alltoall", algos::Collective::alltoall)},
      {"LANES_ALLGATHER_ALGORITHM", "auto",
       algorithm_help("Allgather", algos::Collective::allgather)},
      {"LANES_GATHER_ALGORITHM", "auto", algorithm_help("Gather", algos::Collective::gather)},
      {"LANES_REDUCE_ALGORITHM", "auto", algorithm_help("Reduce", algos::Collective::reduce)},
      {"LANES_ALLREDUCE_ALGORITHM", "auto",
       algorithm_help("Allreduce", algos::Collective::allreduce)},
      {"LANES_REDUCE_SCATTER_BLOCK_ALGORITHM", "auto",
       algorithm_help("Reduce-scatter (equal blocks)", algos::Collective::reduce_scatter_block)},
      {"LANES_BARRIER_ALGORITHM", "auto", algorithm_help("Barrier", algos::Collective::barrier)},
      {"LANES_HIERARCHY_GROUPS", "model",
       "The number of groups G of the hierarchical-<base> reduce algorithms and of the "
       "hierarchical allreduce: model (the cost "
       "model's), search (the first blocking calls of each algorithm and vector size, to the "
       "power of two, try every G whose groups tile the nodes (a reduce's G = 1 being its base "
       "algorithm): a round untimed, then two timed; the processes then take the G whose slowest "
       "process was fastest, or the model's G where that is within 5 %, for every later call "
       "of that size; other calls take the model's G until then), or a number "
       "(a divisor of the communicator's size whose groups tile the nodes; another one fails "
       "the call). Rank 0's is used everywhere."},
      {"LANES_MPI_COLLS", "all",
       "liblanes_mpi: the MPI collectives routed through lanes, comma-separated from bcast, "
       "scatter, gather, alltoall, allgather, reduce, allreduce, reduce_scatter_block, barrier, "
       "scatterv, gatherv, allgatherv, alltoallv, ibcast, iscatter, igather, ialltoall, "
       "iallgather, iscatterv, igatherv, iallgatherv, ialltoallv; all; or none. The others go to "
       "the MPI library (so do reductions of derived datatypes, "
       "MPI_MAXLOC and MPI_MINLOC, and "
       "user-defined operations)."},
      {"LANES_MPI_STATS", "0",
       "liblanes_mpi: 1 makes rank 0 print at MPI_Finalize one line 'lanes-mpi: bcast=N ... "
       "fallback=N' to stderr: calls served by lanes and forwarded to MPI, summed over ranks."},
  };
  return table;
}

namespace {

[[noreturn]] void bad(const char* name, const std::string& value, const std::string& expected) {
  throw Error(Errc::invalid_argument,
              std::string(name) + "='" + value + "' is not valid: expected " + expected);
}

// A decimal integer written as digits alone: no sign, blanks, fraction, exponent or base prefix
// ("4", not " 4", "+4", "4.0", "4e0" or "0x4").
long parse_int(const char* name, const std::string& v, long lo, long hi) {
  long x = 0;
  const char* end = v.data() + v.size();
  const auto [stop, ec] = std::from_chars(v.data(), end, x);
  if (v.empty() || v.front() == '-' || ec != std::errc() || stop != end || x < lo || x > hi) {
    bad(name, v, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return x;
}

// A finite number above 0 in decimal or exponent form ("100", "50.5", "1e9"), nothing around it.
// `expected` names the whole value's form in the error.
double parse_positive(const char* name, const std::string& whole, const std::string& v,
                      const char* expected) {
  double x = 0;
  const char* end = v.data() + v.size();
  const auto [stop, ec] = std::from_chars(v.data(), end, x);
  if (v.empty() || ec != std::errc() || stop != end || !std::isfinite(x) || x <= 0) {
    bad(name, whole, expected);
  }
  return x;
}

bool parse_bool(const char* name, const std::string& v) {
  if (v == "1" || v == "yes" || v == "true" || v == "on") return true;
  if (v == "0" || v == "no" || v == "false" || v == "off") return false;
  bad(name, v, "0 or 1");
}

std::vector<std::string> split_list(const char* name, const std::string& v) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(v);
  while (std::getline(in, item, ',')) {
    if (item.empty()) bad(name, v, "a comma-separated list without empty entries");
    out.push_back(item);
  }
  if (out.empty() || v.back() == ',') bad(name, v, "a comma-separated list without empty entries");
  return out;
}

}  // namespace

Config Config::parse(const std::function<const char*(const char*)>& lookup) {
  Config c;
  auto get = [&](const char* name) -> std::optional<std::string> {
    const char* v = lookup(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  if (auto v = get("LANES_RAILS"); v && *v != "auto") c.rails = split_list("LANES_RAILS", *v);
  if (auto v = get("LANES_NODE_SIZE")) {
    c.node_size = static_cast<int>(parse_int("LANES_NODE_SIZE", *v, 0, 1 << 20));
  }
  if (auto v = get("LANES_LANES")) c.lanes = static_cast<int>(parse_int("LANES_LANES", *v, 0, 64));
  if (auto v = get("LANES_RAIL_WEIGHTS"); v && !v->empty()) {
    for (const std::string& w : split_list("LANES_RAIL_WEIGHTS", *v)) {
      c.rail_weights.push_back(
          parse_positive("LANES_RAIL_WEIGHTS", *v, w, "comma-separated positive numbers"));
    }
  }
  if (auto v = get("LANES_PROGRESS")) {
    if (*v == "spin")
      c.progress = ProgressMode::spin;
    else if (*v == "yield")
      c.progress = ProgressMode::yield;
    else if (*v == "wait")
      c.progress = ProgressMode::wait;
    else if (*v == "auto")
      c.progress = ProgressMode::automatic;
    else
      bad("LANES_PROGRESS", *v, "spin, yield, wait or auto");
  }
  if (auto v = get("LANES_UCX_TLS")) {
    if (v->empty()) bad("LANES_UCX_TLS", *v, "a UCX transport list such as ^sm or tcp");
    c.ucx_tls = *v;
  }
  if (auto v = get("LANES_CMA")) {
    if (*v == "auto")
      c.cma = CmaMode::automatic;
    else
      c.cma = parse_bool("LANES_CMA", *v) ? CmaMode::on : CmaMode::off;
  }
  if (auto v = get("LANES_CMA_SLOWDOWN"); v && *v != "auto") {
    c.cma_slowdown = parse_positive("LANES_CMA_SLOWDOWN", *v, *v, "auto or a positive number");
  }
  if (auto v = get("LANES_HEAP_SIZE"); v && *v != "auto") {
    c.heap_mib = parse_int("LANES_HEAP_SIZE", *v, 0, 1L << 40);
  }
  if (auto v = get("LANES_CHECK")) c.check = parse_bool("LANES_CHECK", *v);
  if (auto v = get("LANES_TIMEOUT")) {
    c.timeout_s = static_cast<double>(parse_int("LANES_TIMEOUT", *v, 0, 1L << 31));
  }
  if (auto v = get("LANES_FINALIZE_TIMEOUT")) {
    c.finalize_timeout_s =
        static_cast<double>(parse_int("LANES_FINALIZE_TIMEOUT", *v, 0, 1L << 31));
  }
  if (auto v = get("LANES_INFO")) c.info = static_cast<int>(parse_int("LANES_INFO", *v, 0, 2));
  if (auto v = get("LANES_CALIBRATION")) c.calibration = *v;
  if (auto v = get("LANES_RULES")) c.rules = *v;
  if (auto v = get("LANES_BCAST_ALGORITHM")) c.bcast_algorithm = *v;
  if (auto v = get("LANES_SCATTER_ALGORITHM")) c.scatter_algorithm = *v;
  if (auto v = get("LANES_ALLTOALL_ALGORITHM")) c.alltoall_algorithm = *v;
  if (auto v = get("LANES_ALLGATHER_ALGORITHM")) c.allgather_algorithm = *v;
  if (auto v = get("LANES_GATHER_ALGORITHM")) c.gather_algorithm = *v;
  if (auto v = get("LANES_REDUCE_ALGORITHM")) c.reduce_algorithm = *v;
  if (auto v = get("LANES_ALLREDUCE_ALGORITHM")) c.allreduce_algorithm = *v;
  if (auto v = get("LANES_REDUCE_SCATTER_BLOCK_ALGORITHM")) {
    c.reduce_scatter_block_algorithm = *v;
  }
  if (auto v = get("LANES_BARRIER_ALGORITHM")) c.barrier_algorithm = *v;
  if (auto v = get("LANES_HIERARCHY_GROUPS"); v && *v != "model") {
    if (*v == "search") {
      c.hierarchy_search = true;
    } else {
      constexpr long kMost = 1L << 20;
      long g = 0;
      const char* end = v->data() + v->size();
      const auto [stop, ec] = std::from_chars(v->data(), end, g);
      if (v->empty() || v->front() == '-' || ec != std::errc() || stop != end || g < 1 ||
          g > kMost) {
        bad("LANES_HIERARCHY_GROUPS", *v,
            "model, search or an integer from 1 to " + std::to_string(kMost));
      }
      c.hierarchy_groups = static_cast<int>(g);
    }
  }
  return c;
}

Config Config::from_environment() {
  Config c = parse([](const char* name) { return std::getenv(name); });
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (entry.starts_with("UCX_") && eq != std::string_view::npos) {
      c.ucx_variables.emplace_back(entry.substr(0, eq));
    }
  }
  return c;
}

std::string config_value(const ConfigVar& var) {
  const char* v = std::getenv(var.name);
  return v != nullptr ? std::string(v) : std::string(var.default_value);
}

const char* to_string(ProgressMode m) {
  switch (m) {
    case ProgressMode::spin:
      return "spin";
    case ProgressMode::yield:
      return "yield";
    case ProgressMode::wait:
      return "wait";
    case ProgressMode::automatic:
      return "auto";
  }
  return "?";
}

}  // namespace lanes::detail
