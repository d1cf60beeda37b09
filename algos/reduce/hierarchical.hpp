// The hierarchical transformation of a reduction (reduce/hierarchical.cpp): G groups of p / G
// consecutive ranks, a base algorithm inside every group, then among the groups' leaders. The
// number of groups comes from the cost model.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

// The shape the runtime prices a call on `layout` with (nodes, the largest node, lanes).
CostInput cost_input_of(const Layout& layout, std::size_t bytes);
// The shape of one group of g consecutive ranks of `in`, and that of the leaders of `groups`
// such groups (g = p / groups).
CostInput group_shape(const CostInput& in, long long g);
CostInput leader_shape(const CostInput& in, long long groups, long long g);
// The numbers of groups the transformation considers for p ranks in nodes of n: the divisors G of
// p whose groups tile the nodes (p / G a multiple or a divisor of n, so that the shapes above are
// exact), ascending; G = 1 (the base algorithm) always.
std::vector<long long> group_counts(long long p, long long n);

// The cost of `base` transformed with `groups` groups of p / groups ranks: inside the groups,
// then among the leaders.
double hierarchical_cost(CostFn base, const CostInput& in, long long p, long long groups,
                         const MachineParams& m);
// The number of groups G (of group_counts, the smallest of the cheapest) that the cost model
// prices cheapest for `base`, with the default parameters: the builders see no calibration, and
// the choice must be the same on every rank and in the cost formula. G = 1 and G = p are the base
// algorithm itself.
int hierarchical_groups(CostFn base, long long p, const CostInput& in);
// G for the reduce algorithm named `algorithm` (hierarchical-<base>) on the shape `in`, as its
// builder chooses it; 0 for any other algorithm. For lanes-model and the results' tables.
int hierarchical_groups_of(std::string_view algorithm, const CostInput& in);

// Whether `algorithm` of `coll` takes a number of groups G (CollArgs::groups): a reduce
// transformed with one (hierarchical-<base>), or the hierarchical allreduce.
bool has_group_choice(Collective coll, std::string_view algorithm);
// The numbers of groups such an algorithm on `layout` can take, each a different schedule,
// ascending: group_counts, for a reduce without G = p (G = 1 again: the base algorithm).
std::vector<int> hierarchical_group_choices(Collective coll, const Layout& layout);
// The G the cost model takes for such an algorithm on the shape `in` (what it builds with
// CollArgs::groups = 0), 0 for any other algorithm.
int model_groups(Collective coll, std::string_view algorithm, const CostInput& in);
// The hierarchical allreduce's G under the cost model (allreduce/hierarchical.cpp).
int hierarchical_allreduce_groups(const CostInput& in);
// Throws lanes::Error(invalid_argument) naming `algorithm` and the valid numbers when `groups`
// is not one of hierarchical_group_choices(coll, layout).
void check_groups(Collective coll, std::string_view algorithm, const Layout& layout, int groups);

// The transformed reduce with `groups` groups (a divisor of p).
Schedule build_reduce_hierarchical(const Layout& layout, const CollArgs& args, BuildFn base,
                                   int groups);

}  // namespace lanes::algos
