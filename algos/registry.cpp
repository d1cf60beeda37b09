#include "algos/registry.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "algos/common.hpp"

namespace lanes::algos {

const std::vector<Algorithm>& all_algorithms() {
  // Copies of the entries each algorithm's file defines, in algorithms.def's order. They are
  // constant-initialized, so their order of initialization does not matter.
  static const std::vector<Algorithm> algorithms = {
#define LANES_ALGORITHM(id, file) algorithm_##id,
#include "algos/algorithms.def"
#undef LANES_ALGORITHM
  };
  return algorithms;
}

const Algorithm* find_algorithm(Collective coll, std::string_view name) {
  for (const Algorithm& algo : all_algorithms()) {
    if (algo.coll == coll && algo.name == name) return &algo;
  }
  return nullptr;
}

std::vector<const Algorithm*> algorithms_for(Collective coll) {
  std::vector<const Algorithm*> out;
  for (const Algorithm& algo : all_algorithms()) {
    if (algo.coll == coll) out.push_back(&algo);
  }
  return out;
}

const char* fallback_algorithm(Collective coll) {
  switch (coll) {
    case Collective::bcast:
    case Collective::scatter:
    case Collective::reduce:
      return "binomial";
    case Collective::gather:
    case Collective::allgather:
      return "linear";
    case Collective::alltoall:
      return "pairwise";
    case Collective::allreduce:
      return "recursive-doubling";
    case Collective::barrier:
      return "dissemination";
    case Collective::reduce_scatter_block:
      return "ring";
  }
  return "linear";
}

std::string algorithm_names(Collective coll) {
  std::string out;
  for (const Algorithm* algo : algorithms_for(coll)) {
    if (!out.empty()) out += ", ";
    out += algo->name;
  }
  return out;
}

}  // namespace lanes::algos
