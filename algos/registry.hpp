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

// Declarations of every algorithm's builder, one file each under algos/<collective>/.
// bcast
Schedule build_bcast_binomial(const Layout& layout, const CollArgs& args);
Schedule build_bcast_kported(const Layout& layout, const CollArgs& args);
Schedule build_bcast_scatter_allgather(const Layout& layout, const CollArgs& args);
Schedule build_bcast_scatter_ring(const Layout& layout, const CollArgs& args);
Schedule build_bcast_scatter_ring_bwsave(const Layout& layout, const CollArgs& args);
Schedule build_bcast_hierarchical(const Layout& layout, const CollArgs& args);
Schedule build_bcast_full_lane(const Layout& layout, const CollArgs& args);
Schedule build_bcast_k_lane(const Layout& layout, const CollArgs& args);
Schedule build_bcast_pipeline(const Layout& layout, const CollArgs& args);
// (end of bcast)
// scatter
Schedule build_scatter_binomial(const Layout& layout, const CollArgs& args);
Schedule build_scatter_linear(const Layout& layout, const CollArgs& args);
Schedule build_scatter_kported(const Layout& layout, const CollArgs& args);
Schedule build_scatter_full_lane(const Layout& layout, const CollArgs& args);
Schedule build_scatter_k_lane(const Layout& layout, const CollArgs& args);
// (end of scatter)
// gather
Schedule build_gather_linear(const Layout& layout, const CollArgs& args);
Schedule build_gather_binomial(const Layout& layout, const CollArgs& args);
// (end of gather)
// alltoall
Schedule build_alltoall_pairwise(const Layout& layout, const CollArgs& args);
Schedule build_alltoall_kported(const Layout& layout, const CollArgs& args);
Schedule build_alltoall_bruck(const Layout& layout, const CollArgs& args);
Schedule build_alltoall_full_lane(const Layout& layout, const CollArgs& args);
Schedule build_alltoall_k_lane(const Layout& layout, const CollArgs& args);
Schedule build_alltoall_windowed(const Layout& layout, const CollArgs& args);
// (end of alltoall)
// allgather
Schedule build_allgather_linear(const Layout& layout, const CollArgs& args);
Schedule build_allgather_ring(const Layout& layout, const CollArgs& args);
Schedule build_allgather_recursive_doubling(const Layout& layout, const CollArgs& args);
Schedule build_allgather_bruck(const Layout& layout, const CollArgs& args);
Schedule build_allgather_node_aware(const Layout& layout, const CollArgs& args);
// (end of allgather)
// reduce
Schedule build_reduce_binomial(const Layout& layout, const CollArgs& args);
Schedule build_reduce_full_lane(const Layout& layout, const CollArgs& args);
Schedule build_reduce_linear(const Layout& layout, const CollArgs& args);
Schedule build_reduce_chain(const Layout& layout, const CollArgs& args);
Schedule build_reduce_binary(const Layout& layout, const CollArgs& args);
Schedule build_reduce_in_order_binary(const Layout& layout, const CollArgs& args);
Schedule build_reduce_rabenseifner(const Layout& layout, const CollArgs& args);
Schedule build_reduce_hierarchical_linear(const Layout& layout, const CollArgs& args);
Schedule build_reduce_hierarchical_chain(const Layout& layout, const CollArgs& args);
Schedule build_reduce_hierarchical_binary(const Layout& layout, const CollArgs& args);
Schedule build_reduce_hierarchical_binomial(const Layout& layout, const CollArgs& args);
Schedule build_reduce_hierarchical_in_order_binary(const Layout& layout, const CollArgs& args);
Schedule build_reduce_hierarchical_rabenseifner(const Layout& layout, const CollArgs& args);
// (end of reduce)
// allreduce
Schedule build_allreduce_recursive_doubling(const Layout& layout, const CollArgs& args);
Schedule build_allreduce_ring(const Layout& layout, const CollArgs& args);
Schedule build_allreduce_full_lane(const Layout& layout, const CollArgs& args);
Schedule build_allreduce_rabenseifner(const Layout& layout, const CollArgs& args);
Schedule build_allreduce_reduce_bcast(const Layout& layout, const CollArgs& args);
Schedule build_allreduce_hierarchical(const Layout& layout, const CollArgs& args);
// (end of allreduce)
// barrier
Schedule build_barrier_dissemination(const Layout& layout, const CollArgs& args);
// (end of barrier)
// reduce_scatter_block
Schedule build_reduce_scatter_block_ring(const Layout& layout, const CollArgs& args);
Schedule build_reduce_scatter_block_pairwise(const Layout& layout, const CollArgs& args);
Schedule build_reduce_scatter_block_recursive_halving(const Layout& layout, const CollArgs& args);
// (end of reduce_scatter_block)

// Cost formulas (cost_model.hpp), defined beside their algorithms.
double cost_bcast_binomial(const CostInput& in, const MachineParams& m);
double cost_scatter_binomial(const CostInput& in, const MachineParams& m);
double cost_alltoall_pairwise(const CostInput& in, const MachineParams& m);
double cost_allgather_linear(const CostInput& in, const MachineParams& m);
double cost_bcast_kported(const CostInput& in, const MachineParams& m);
double cost_bcast_scatter_allgather(const CostInput& in, const MachineParams& m);
double cost_bcast_scatter_ring(const CostInput& in, const MachineParams& m);
double cost_bcast_scatter_ring_bwsave(const CostInput& in, const MachineParams& m);
double cost_bcast_hierarchical(const CostInput& in, const MachineParams& m);
double cost_bcast_full_lane(const CostInput& in, const MachineParams& m);
double cost_bcast_k_lane(const CostInput& in, const MachineParams& m);
double cost_bcast_pipeline(const CostInput& in, const MachineParams& m);
double cost_scatter_linear(const CostInput& in, const MachineParams& m);
double cost_scatter_kported(const CostInput& in, const MachineParams& m);
double cost_scatter_full_lane(const CostInput& in, const MachineParams& m);
double cost_scatter_k_lane(const CostInput& in, const MachineParams& m);
double cost_gather_linear(const CostInput& in, const MachineParams& m);
double cost_gather_binomial(const CostInput& in, const MachineParams& m);
double cost_alltoall_kported(const CostInput& in, const MachineParams& m);
double cost_alltoall_bruck(const CostInput& in, const MachineParams& m);
double cost_alltoall_full_lane(const CostInput& in, const MachineParams& m);
double cost_alltoall_k_lane(const CostInput& in, const MachineParams& m);
double cost_alltoall_windowed(const CostInput& in, const MachineParams& m);
double cost_allgather_ring(const CostInput& in, const MachineParams& m);
double cost_allgather_recursive_doubling(const CostInput& in, const MachineParams& m);
double cost_allgather_bruck(const CostInput& in, const MachineParams& m);
double cost_allgather_node_aware(const CostInput& in, const MachineParams& m);
double cost_reduce_binomial(const CostInput& in, const MachineParams& m);
double cost_reduce_full_lane(const CostInput& in, const MachineParams& m);
double cost_allreduce_recursive_doubling(const CostInput& in, const MachineParams& m);
double cost_allreduce_ring(const CostInput& in, const MachineParams& m);
double cost_allreduce_full_lane(const CostInput& in, const MachineParams& m);
double cost_barrier_dissemination(const CostInput& in, const MachineParams& m);
double cost_reduce_scatter_block_ring(const CostInput& in, const MachineParams& m);
double cost_reduce_scatter_block_pairwise(const CostInput& in, const MachineParams& m);
double cost_reduce_linear(const CostInput& in, const MachineParams& m);
double cost_reduce_chain(const CostInput& in, const MachineParams& m);
double cost_reduce_binary(const CostInput& in, const MachineParams& m);
double cost_reduce_in_order_binary(const CostInput& in, const MachineParams& m);
double cost_reduce_rabenseifner(const CostInput& in, const MachineParams& m);
double cost_reduce_hierarchical_linear(const CostInput& in, const MachineParams& m);
double cost_reduce_hierarchical_chain(const CostInput& in, const MachineParams& m);
double cost_reduce_hierarchical_binary(const CostInput& in, const MachineParams& m);
double cost_reduce_hierarchical_binomial(const CostInput& in, const MachineParams& m);
double cost_reduce_hierarchical_in_order_binary(const CostInput& in, const MachineParams& m);
double cost_reduce_hierarchical_rabenseifner(const CostInput& in, const MachineParams& m);
double cost_allreduce_rabenseifner(const CostInput& in, const MachineParams& m);
double cost_allreduce_reduce_bcast(const CostInput& in, const MachineParams& m);
double cost_allreduce_hierarchical(const CostInput& in, const MachineParams& m);
double cost_reduce_scatter_block_recursive_halving(const CostInput& in, const MachineParams& m);
// (end of costs)

}  // namespace lanes::algos
