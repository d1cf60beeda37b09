#include "algos/registry.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace lanes::algos {

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> algorithms = {
      // bcast
      {"binomial", Collective::bcast, build_bcast_binomial, nullptr,
       "binomial tree, ceil(log2 p) rounds of the whole message"},
      // (end of bcast)
      // scatter
      {"binomial", Collective::scatter, build_scatter_binomial, nullptr,
       "binomial tree, each child gets its subtree's blocks; ceil(log2 p) rounds"},
      // (end of scatter)
      // gather
      // (end of gather)
      // alltoall
      {"pairwise", Collective::alltoall, build_alltoall_pairwise, nullptr,
       "p-1 steps, step s sends to r+s and receives from r-s"},
      // (end of alltoall)
      // allgather
      {"linear", Collective::allgather, build_allgather_linear, nullptr,
       "direct exchange with every rank, all messages posted at once"},
      // (end of allgather)
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

std::string algorithm_names(Collective coll) {
  std::string out;
  for (const Algorithm* algo : algorithms_for(coll)) {
    if (!out.empty()) out += ", ";
    out += algo->name;
  }
  return out;
}

}  // namespace lanes::algos
