// Algorithms are named by strings and registered in one place (registry.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

using BuildFn = Schedule (*)(const Layout& layout, const CollArgs& args);
using ApplicableFn = bool (*)(const Layout& layout);

struct Algorithm {
  std::string_view name;  // "binomial", "pairwise", ...
  Collective coll;
  BuildFn build;
  ApplicableFn applicable;  // nullptr: always applicable
  std::string_view summary;
};

const std::vector<Algorithm>& all_algorithms();
// nullptr when unknown.
const Algorithm* find_algorithm(Collective coll, std::string_view name);
std::vector<const Algorithm*> algorithms_for(Collective coll);
// Comma-separated names, for error messages and lanes-info.
std::string algorithm_names(Collective coll);

// Declarations of every algorithm's builder, one file each under algos/<collective>/.
// bcast
Schedule build_bcast_binomial(const Layout& layout, const CollArgs& args);
// (end of bcast)
// scatter
Schedule build_scatter_binomial(const Layout& layout, const CollArgs& args);
// (end of scatter)
// gather
// (end of gather)
// alltoall
Schedule build_alltoall_pairwise(const Layout& layout, const CollArgs& args);
// (end of alltoall)
// allgather
Schedule build_allgather_linear(const Layout& layout, const CollArgs& args);
// (end of allgather)

}  // namespace lanes::algos
