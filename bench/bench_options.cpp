#include "bench_options.hpp"

#include <algorithm>
#include <climits>
#include <sstream>
#include <stdexcept>

namespace lanes_bench {

namespace {

std::vector<std::string> split_list(const std::string& option, const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  if (out.empty()) throw std::invalid_argument(option + " needs a comma-separated list");
  return out;
}

long long to_integer(const std::string& option, const std::string& text, long long lo,
                     long long hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < lo || v > hi) {
    throw std::invalid_argument(option + ": '" + text + "' is not an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

}  // namespace

const char* usage() {
  return "usage: mpirun -np P lanes-bench [options]\n"
         "  --collective LIST  bcast,scatter,alltoall,allgather (default; gather, allreduce and\n"
         "                     reduce also exist)\n"
         "  --counts LIST      MPI_INT elements per process (default 1,10,...,1000000)\n"
         "  --impl LIST        native,lanes (default both)\n"
         "  --algorithms LIST  lanes algorithms by name, auto = the runtime's choice\n"
         "                     (default: every algorithm of each collective)\n"
         "  --lanes LIST       lane counts k passed as CallOptions::lanes (default: the\n"
         "                     runtime's number of lanes)\n"
         "  --reps N           measured repetitions (default 100)\n"
         "  --warmup N         unmeasured repetitions first (default 5)\n"
         "  --settle N         unmeasured calls of a variant right before each of its\n"
         "                     measured ones (default 0; for shaped links, whose token\n"
         "                     buckets refill while a variant leaves a rail idle)\n"
         "  --root R           root of bcast, scatter, gather and reduce (default 0)\n"
         "  --check            fill inputs before and verify outputs after every repetition\n"
         "  --csv FILE         write the results as CSV\n"
         "  --times FILE       write every measured repetition's time as CSV, with its\n"
         "                     place in that repetition's order\n"
         "  --bootstrap B      auto (PMIx under a PMIx launcher, else MPI) or mpi\n"
         "  --memory M         ordinary (default) or shared: both libraries' buffers from\n"
         "                     lanes' shared heap (Runtime::allocate), which the node's\n"
         "                     processes read in place\n";
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--check") {
      o.check = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--collective" || arg == "--collectives") {
      o.collectives = split_list(arg, value);
      for (const auto& c : o.collectives) {
        if (c != "bcast" && c != "scatter" && c != "alltoall" && c != "allgather" &&
            c != "gather" && c != "allreduce" && c != "reduce")
          throw std::invalid_argument("--collective: unknown collective '" + c + "'");
      }
    } else if (arg == "--counts") {
      o.counts.clear();
      for (const auto& c : split_list(arg, value))
        o.counts.push_back(static_cast<std::size_t>(to_integer(arg, c, 0, INT_MAX)));
    } else if (arg == "--impl") {
      o.native = o.lanes = false;
      for (const auto& c : split_list(arg, value)) {
        if (c == "native")
          o.native = true;
        else if (c == "lanes")
          o.lanes = true;
        else
          throw std::invalid_argument("--impl: '" + c + "' is neither native nor lanes");
      }
    } else if (arg == "--algorithms") {
      o.algorithms = split_list(arg, value);
      if (o.algorithms == std::vector<std::string>{"all"}) o.algorithms.clear();
    } else if (arg == "--lanes") {
      o.lanes_counts.clear();
      for (const auto& c : split_list(arg, value))
        o.lanes_counts.push_back(static_cast<int>(to_integer(arg, c, 1, 1024)));
    } else if (arg == "--reps") {
      o.reps = static_cast<int>(to_integer(arg, value, 1, 100000000));
    } else if (arg == "--warmup") {
      o.warmup = static_cast<int>(to_integer(arg, value, 0, 100000000));
    } else if (arg == "--settle") {
      o.settle = static_cast<int>(to_integer(arg, value, 0, 1000));
    } else if (arg == "--root") {
      o.root = static_cast<int>(to_integer(arg, value, 0, INT_MAX));
    } else if (arg == "--csv") {
      o.csv = value;
    } else if (arg == "--times") {
      o.times = value;
    } else if (arg == "--memory") {
      if (value != "ordinary" && value != "shared")
        throw std::invalid_argument("--memory: '" + value + "' is neither ordinary nor shared");
      o.shared_memory = value == "shared";
    } else if (arg == "--bootstrap") {
      if (value != "auto" && value != "mpi")
        throw std::invalid_argument("--bootstrap: '" + value + "' is neither auto nor mpi");
      o.bootstrap = value;
    } else {
      throw std::invalid_argument("unknown option '" + arg + "'");
    }
  }
  return o;
}

}  // namespace lanes_bench
