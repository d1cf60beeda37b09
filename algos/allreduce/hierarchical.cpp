// Hierarchical allreduce: a binomial reduce inside G groups of consecutive ranks, an allreduce
// among the groups' leaders, a binomial broadcast inside every group.
//
// Source: K. Hasanov and A. Lastovetsky, "Hierarchical redesign of classic MPI reduction
// algorithms" (J. Supercomputing 73, 2017), which extends their hierarchical transformation of
// reduce to allreduce. Here it is applied to the reduce-then-broadcast allreduce: the p processes
// in G groups of p / G, a reduce inside every group to its leader, an allreduce among the G
// leaders, a broadcast inside every group; G = 1 is the reduce-then-broadcast allreduce, G = p the
// leaders' allreduce alone.
//
// Phases: G divides p and the groups tile the nodes (as in reduce/hierarchical.cpp); group i is
// the ranks [i p / G, (i + 1) p / G), its leader its first rank.
//  1. Binomial reduce (reduce/binomial.cpp) inside every group to its leader, into scratch (into
//     the receive buffer when G = 1).
//  2. Among the G leaders, an allreduce of their partials into their receive buffers: recursive
//     doubling or Rabenseifner's, whichever the cost model prices cheapest with G; a leader alone
//     among leaders on its node drives all of the node's lanes.
//  3. Binomial broadcast (bcast/binomial.cpp) inside every group from its leader; a rank receives
//     once its phase-1 ops are done (in place, the result overwrites its input).
// Each phase's rounds follow the previous one's. The leaders' allreduce gives them the same bits,
// and the broadcast copies them, so every rank ends with the same bits.
//
// Order: a group's partial is its ranks in order (binomial toward the group's first rank), the
// leaders' allreduce combines the groups in order: rank order on every layout.
//
// Cost: binomial reduce and binomial broadcast on one group (p / G ranks) plus the leaders'
// allreduce on the G leaders (one per node when a group spans a node or more), each as its own
// formula prices it; G and the leaders' algorithm are the pair with the least cost under the
// default machine parameters, the same in the builder and in the formula; where the call names G
// (CollArgs::groups: LANES_HIERARCHY_GROUPS, a number or the one its search measured fastest),
// the leaders' algorithm is the cheaper one for that G.
//
// Applies: any p and any layout; for p with divisors near the node size, where the groups follow
// the nodes and only one rank per node (or per group) crosses the network.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "algos/common.hpp"
#include "algos/compose.hpp"
#include "algos/cost_model.hpp"
#include "algos/reduce/hierarchical.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

namespace {

struct LeaderAlgorithm {
  BuildFn build;
  CostFn cost;
};

// The leaders' candidates combine in rank order on every layout (ring does not), so the whole
// does too.
const LeaderAlgorithm kLeaderAlgorithms[] = {
    {build_allreduce_recursive_doubling, cost_allreduce_recursive_doubling},
    {build_allreduce_rabenseifner, cost_allreduce_rabenseifner},
};

struct Plan {
  long long groups = 1;
  const LeaderAlgorithm* leaders = &kLeaderAlgorithms[0];
};

double plan_cost(const Plan& plan, const CostInput& in, long long p, const MachineParams& m) {
  const long long g = p / plan.groups;
  const CostInput group = group_shape(in, g);
  return cost_reduce_binomial(group, m) + cost_bcast_binomial(group, m) +
         plan.leaders->cost(leader_shape(in, plan.groups, g), m);
}

// The cheapest plan under the default parameters; with `only` > 0, among those of `only` groups.
Plan choose(long long p, const CostInput& in, long long only = 0) {
  const MachineParams reference;
  Plan best{only > 0 ? only : 1, &kLeaderAlgorithms[0]};
  double least = plan_cost(best, in, p, reference);
  for (const long long groups : group_counts(std::max(1LL, p), in.ppn)) {
    if (only > 0 && groups != only) continue;
    for (const LeaderAlgorithm& leaders : kLeaderAlgorithms) {
      const Plan plan{groups, &leaders};
      const double t = plan_cost(plan, in, p, reference);
      if (t < least) {
        best = plan;
        least = t;
      }
    }
  }
  return best;
}

}  // namespace

int hierarchical_allreduce_groups(const CostInput& in) {
  return static_cast<int>(choose(in.p(), in).groups);
}

Schedule build_allreduce_hierarchical(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "hierarchical", false);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  if (p == 1) {
    s.copy({Buffer::send, 0, m}, {Buffer::recv, 0, m});
    s.finalize();
    return s;
  }
  // The call's G (CollArgs::groups) with the leaders' algorithm the model prices cheapest for it,
  // else both from the model.
  if (args.groups > 0) check_groups(Collective::allreduce, "hierarchical", layout, args.groups);
  const Plan plan = choose(p, cost_input_of(layout, m), args.groups);
  const int groups = static_cast<int>(plan.groups);
  const int g = p / groups;
  const int mine = r / g;
  const bool leads = r == mine * g;
  const bool partial_in_scratch = groups > 1 && g > 1;
  std::vector<int> ranks(static_cast<std::size_t>(g));
  for (int x = 0; x < g; ++x) ranks[static_cast<std::size_t>(x)] = mine * g + x;
  std::vector<int> leaders(static_cast<std::size_t>(groups));
  for (int i = 0; i < groups; ++i) leaders[static_cast<std::size_t>(i)] = i * g;
  const Layout group = sub_layout(layout, ranks, false);
  const Layout heads = sub_layout(layout, leaders, true);
  const int self = r - mine * g;

  // 1. Reduce inside the group.
  std::vector<OpId> reduced;
  int reduce_rounds = 0;
  if (g > 1) {
    const Schedule part = build_reduce_binomial(group, {Collective::reduce, self, 0, m, args.elem});
    reduce_rounds = part.rounds;
    Splice how;
    how.ranks = ranks;
    how.layout = &group;
    how.self = self;
    if (partial_in_scratch) how.buffers.recv = Buffer::scratch;
    how.buffers.scratch = partial_in_scratch && leads ? m : 0;
    how.shared_nodes = true;
    reduced = splice(s, part, layout, how);
  }

  // 2. Allreduce among the leaders (every rank knows its rounds: they set phase 3's).
  std::vector<OpId> ready = reduced;
  int leader_rounds = 0;
  if (groups > 1) {
    const Schedule part =
        plan.leaders->build(heads, {Collective::allreduce, leads ? mine : 0, 0, m, args.elem});
    leader_rounds = part.rounds;
    if (leads) {
      if (partial_in_scratch) s.scratch_bytes = std::max(s.scratch_bytes, m);
      Splice how;
      how.ranks = leaders;
      how.layout = &heads;
      how.self = mine;
      if (partial_in_scratch) how.buffers.send = Buffer::scratch;
      how.buffers.scratch = s.scratch_bytes;
      how.first_round = reduce_rounds;
      how.after = reduced;
      ready = splice(s, part, layout, how);
    }
  }

  // 3. Broadcast inside the group.
  int bcast_rounds = 0;
  if (g > 1) {
    const Schedule part = build_bcast_binomial(group, {Collective::bcast, self, 0, m, 1});
    bcast_rounds = part.rounds;
    Splice how;
    how.ranks = ranks;
    how.layout = &group;
    how.self = self;
    how.buffers.scratch = s.scratch_bytes;
    how.first_round = reduce_rounds + leader_rounds;
    how.after = ready;
    how.shared_nodes = true;
    splice(s, part, layout, how);
  }
  s.rounds = reduce_rounds + leader_rounds + bcast_rounds;
  s.finalize();
  return s;
}

double cost_allreduce_hierarchical(const CostInput& in, const MachineParams& m) {
  return plan_cost(choose(in.p(), in), in, in.p(), m);
}

const Algorithm algorithm_allreduce_hierarchical{
    "hierarchical",
    Collective::allreduce,
    build_allreduce_hierarchical,
    nullptr,
    "binomial reduce in G groups, allreduce among leaders, binomial bcast; G by the model",
    cost_allreduce_hierarchical,
    rank_order_always};

}  // namespace lanes::algos
