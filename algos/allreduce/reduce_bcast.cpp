// Reduce-then-broadcast allreduce: a binomial reduce to rank 0, then a binomial broadcast from it.
//
// Source: the non-overlapping allreduce of Open MPI (ompi_coll_base_allreduce_intra_nonoverlapping:
// reduce to rank 0, then broadcast), the textbook composition (R. Thakur, R. Rabenseifner,
// W. Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005,
// section 4.4), and the allreduce that the hierarchical transformation of K. Hasanov and
// A. Lastovetsky starts from ("Hierarchical redesign of classic MPI reduction algorithms",
// J. Supercomputing 73, 2017).
//
// Phases:
//  1. Binomial reduce to rank 0 (reduce/binomial.cpp): every partial is its subtree in rank order,
//     rank 0 combines into its receive buffer.
//  2. Binomial broadcast of the result from rank 0 (bcast/binomial.cpp), in the rounds after
//     phase 1's, into every rank's receive buffer; a rank receives only once its phase-1 ops are
//     done (in place, the result overwrites its input).
// Rank 0 computes the result once, so every rank gets the same bits.
//
// Cost: ceil(log2 p) (alpha + beta m + gamma m) for the reduce plus ceil(log2 p) (alpha + beta m)
// for the broadcast (each as its own formula prices it). Rounds: 2 ceil(log2 p).
//
// Order: the binomial reduce toward rank 0 is in rank order: rank order on every layout
// (Algorithm::rank_order).
//
// Applies: any p and any layout; short vectors on few ranks (twice the rounds of recursive
// doubling, but each rank sends the vector about once and combines it about once).
#include <vector>

#include "algos/common.hpp"
#include "algos/compose.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allreduce_reduce_bcast(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "reduce-bcast", false);
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const Schedule reduce =
      build_reduce_binomial(layout, {Collective::reduce, args.rank, 0, m, args.elem});
  const Schedule bcast = build_bcast_binomial(layout, {Collective::bcast, args.rank, 0, m, 1});
  Splice first;
  first.self = args.rank;
  Splice second = first;
  second.first_round = reduce.rounds;
  second.after = splice(s, reduce, layout, first);
  second.buffers.scratch = s.scratch_bytes;
  splice(s, bcast, layout, second);
  s.rounds = reduce.rounds + bcast.rounds;
  s.finalize();
  return s;
}

double cost_allreduce_reduce_bcast(const CostInput& in, const MachineParams& m) {
  return cost_reduce_binomial(in, m) + cost_bcast_binomial(in, m);
}

const Algorithm algorithm_allreduce_reduce_bcast{
    "reduce-bcast",
    Collective::allreduce,
    build_allreduce_reduce_bcast,
    nullptr,
    "binomial reduce to rank 0, then binomial bcast; 2 ceil(log2 p) rounds",
    cost_allreduce_reduce_bcast,
    rank_order_always};

}  // namespace lanes::algos
