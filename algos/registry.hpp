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
struct CostInput;
struct MachineParams;
// Closed-form predicted time of one call (cost_model.hpp), usable at any scale.
using CostFn = double (*)(const CostInput& in, const MachineParams& m);
// Reductions: whether the algorithm combines every result in rank order, rank 0's contribution
// leftmost (r_0 (+) r_1 (+) ... (+) r_{p-1}), on `layout` with `root` (reduce; 0 otherwise), as
// a non-commutative operation needs (predicates in common.hpp).
using RankOrderFn = bool (*)(const Layout& layout, int root);

struct Algorithm {
  std::string_view name;  // "binomial", "pairwise", ...
  Collective coll;
  BuildFn build;
  ApplicableFn applicable;  // nullptr: always applicable
  std::string_view summary;
  CostFn cost = nullptr;
  RankOrderFn rank_order = nullptr;  // nullptr: not in rank order, or not known to be
};

const std::vector<Algorithm>& all_algorithms();
// nullptr when unknown.
const Algorithm* find_algorithm(Collective coll, std::string_view name);
std::vector<const Algorithm*> algorithms_for(Collective coll);
// What serves `coll` where the algorithm asked for does not apply to the layout, and where the
// model has no candidate: an algorithm that applies to every layout.
const char* fallback_algorithm(Collective coll);
// Comma-separated names, for error messages and lanes-info.
std::string algorithm_names(Collective coll);

// Every algorithm's builder, cost formula and registry entry, defined in its own file and listed
// once in algorithms.def.
#define LANES_ALGORITHM(id, file)                                  \
  Schedule build_##id(const Layout& layout, const CollArgs& args); \
  double cost_##id(const CostInput& in, const MachineParams& m);   \
  extern const Algorithm algorithm_##id;
#include "algos/algorithms.def"
#undef LANES_ALGORITHM

}  // namespace lanes::algos
