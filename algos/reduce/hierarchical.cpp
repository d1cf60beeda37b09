// Hierarchical reduce: any base reduce algorithm, first inside G groups of consecutive ranks,
// then among the groups' leaders.
//
// Source: K. Hasanov and A. Lastovetsky, "Hierarchical Optimization of MPI Reduce Algorithms"
// (PaCT 2015) and "Hierarchical redesign of classic MPI reduction algorithms" (J. Supercomputing
// 73, 2017): a topology-oblivious transformation of the classic reduce algorithms (linear, chain,
// binary, binomial, in-order binary, Rabenseifner's) that arranges the p processes in G groups of
// p / G, reduces inside every group with the original algorithm and then among the group roots
// with it again; G = 1 and G = p give back the original, and the best G minimises the
// algorithm's cost formula over G (for the linear reduce (G - 1 + p / G - 1)(alpha + m beta +
// m gamma), least at G = sqrt(p)).
//
// Phases: G divides p, and the groups tile the nodes: p / G is a multiple or a divisor of the
// node size n (for a prime p only G = 1 and G = p remain: the base algorithm); group i is the
// ranks [i p / G, (i + 1) p / G), its leader its first rank, in the root's group the root.
//  1. Every group runs the base algorithm, rooted at its leader, on the layout of its ranks
//     (sub_layout: the same nodes and lanes); a leader collects its group's partial in scratch
//     (the root, when G = 1, in its receive buffer).
//  2. The G leaders run the base algorithm, rooted at the root, with their partials as inputs;
//     its rounds follow those of stage 1, and a leader alone among leaders on its node drives all
//     of the node's lanes (nobody else on the node sends then).
// Every group's contributions are combined in the base algorithm's order inside the group, and
// the groups' partials in its order among the leaders: with in-order-binary, rank order.
//
// Cost: the base algorithm's cost on one group (p / G ranks: n / (p / G) groups per node when
// smaller than a node, p / G / n nodes when larger) plus its cost on the G leaders (one per node
// when a group spans a node or more); G is the one with the least such cost under the default
// machine parameters (hierarchical_groups), the same in the builder and in the formula, unless
// the call names G (CollArgs::groups): the runtime's LANES_HIERARCHY_GROUPS, a fixed number or
// the one its search measured fastest among hierarchical_group_choices (lib/group_search.hpp),
// which include G = 1, the base algorithm, so that the transformation is never slower than its
// base but for the search's noise.
//
// Order: the groups are ranges of consecutive ranks and the leaders stand in group order, so the
// transformation keeps its base's rank order: always for linear, in-order-binary and
// rabenseifner, toward root 0 for chain and binomial (whose root's group is then led by rank 0
// and the leaders' reduce goes to group 0), not in general for binary (Algorithm::rank_order).
//
// Applies: any p and any layout, with every base reduce (hierarchical-<base>). On irregular
// layouts the groups tile the nodes only as far as the largest node's size allows.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <lanes/error.hpp>

#include "algos/reduce/hierarchical.hpp"

#include "algos/common.hpp"
#include "algos/compose.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

CostInput cost_input_of(const Layout& layout, std::size_t bytes) {
  CostInput in;
  in.nodes = layout.num_nodes();
  for (const auto& ranks : layout.node_ranks) {
    in.ppn = std::max<long long>(in.ppn, static_cast<long long>(ranks.size()));
  }
  in.lanes = layout.num_lanes;
  in.bytes = bytes;
  in.regular = layout.regular();
  return in;
}

CostInput group_shape(const CostInput& in, long long g) {
  CostInput out = in;
  out.ppn = std::min(g, in.ppn);
  out.nodes = (g + in.ppn - 1) / in.ppn;
  return out;
}

CostInput leader_shape(const CostInput& in, long long groups, long long g) {
  CostInput out = in;
  out.ppn = g >= in.ppn ? 1 : (in.ppn + g - 1) / g;
  out.nodes = (groups + out.ppn - 1) / out.ppn;
  return out;
}

std::vector<long long> group_counts(long long p, long long n) {
  std::vector<long long> low, high;
  for (long long d = 1; d * d <= p; ++d) {
    if (p % d != 0) continue;
    low.push_back(d);
    if (d * d != p) high.push_back(p / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  std::vector<long long> out;
  for (const long long groups : low) {
    const long long g = p / groups;
    if (groups == 1 || g % n == 0 || n % g == 0) out.push_back(groups);
  }
  return out;
}

double hierarchical_cost(CostFn base, const CostInput& in, long long p, long long groups,
                         const MachineParams& m) {
  const long long g = p / groups;
  return base(group_shape(in, g), m) + base(leader_shape(in, groups, g), m);
}

int hierarchical_groups(CostFn base, long long p, const CostInput& in) {
  const MachineParams reference;
  long long best = 1;
  double least = 0;
  for (const long long groups : group_counts(std::max(1LL, p), in.ppn)) {
    const double t = hierarchical_cost(base, in, p, groups, reference);
    if (groups == 1 || t < least) {
      best = groups;
      least = t;
    }
  }
  return static_cast<int>(best);
}

int hierarchical_groups_of(std::string_view algorithm, const CostInput& in) {
  constexpr std::string_view prefix = "hierarchical-";
  if (!algorithm.starts_with(prefix)) return 0;
  const Algorithm* base = find_algorithm(Collective::reduce, algorithm.substr(prefix.size()));
  if (base == nullptr || base->cost == nullptr) return 0;
  return hierarchical_groups(base->cost, std::max(1LL, in.p()), in);
}

bool has_group_choice(Collective coll, std::string_view algorithm) {
  constexpr std::string_view prefix = "hierarchical-";
  if (coll == Collective::allreduce) return algorithm == "hierarchical";
  return coll == Collective::reduce && algorithm.starts_with(prefix) &&
         find_algorithm(Collective::reduce, algorithm) != nullptr;
}

std::vector<int> hierarchical_group_choices(Collective coll, const Layout& layout) {
  const long long p = std::max(1, layout.size);
  std::vector<int> out;
  for (const long long groups : group_counts(p, cost_input_of(layout, 0).ppn)) {
    if (groups == 1 || groups < p || coll == Collective::allreduce) {
      out.push_back(static_cast<int>(groups));
    }
  }
  return out;
}

int model_groups(Collective coll, std::string_view algorithm, const CostInput& in) {
  if (!has_group_choice(coll, algorithm)) return 0;
  if (coll == Collective::allreduce) return hierarchical_allreduce_groups(in);
  return hierarchical_groups_of(algorithm, in);
}

void check_groups(Collective coll, std::string_view algorithm, const Layout& layout, int groups) {
  const std::vector<int> choices = hierarchical_group_choices(coll, layout);
  if (std::find(choices.begin(), choices.end(), groups) != choices.end()) return;
  std::string valid;
  for (const int g : choices) valid += (valid.empty() ? "" : ", ") + std::to_string(g);
  throw Error(Errc::invalid_argument, std::string(to_string(coll)) + " " + std::string(algorithm) +
                                          ": " + std::to_string(groups) + " groups do not tile " +
                                          std::to_string(layout.size) +
                                          " ranks in nodes of their size (valid: " + valid + ")");
}

Schedule build_reduce_hierarchical(const Layout& layout, const CollArgs& args, BuildFn base,
                                   int groups) {
  const int p = layout.size;
  const int r = args.rank;
  const int root = args.root;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  if (p == 1) {
    s.copy({Buffer::send, 0, m}, {Buffer::recv, 0, m});
    s.finalize();
    return s;
  }
  const int g = p / groups;
  const int mine = r / g;
  const int root_group = root / g;
  const auto leader = [&](int i) { return i == root_group ? root : i * g; };
  const auto members = [g](int i) {
    std::vector<int> out(static_cast<std::size_t>(g));
    for (int x = 0; x < g; ++x) out[static_cast<std::size_t>(x)] = i * g + x;
    return out;
  };
  const bool leads = r == leader(mine);
  const bool partial_in_scratch = groups > 1 && g > 1;
  std::vector<OpId> done;
  int inner_rounds = 0;
  bool one_ported = true;

  // 1. Inside the group.
  if (g > 1) {
    const std::vector<int> ranks = members(mine);
    const Layout sub = sub_layout(layout, ranks, false);
    const Schedule part =
        base(sub, {Collective::reduce, r - mine * g, leader(mine) - mine * g, m, args.elem});
    // The bases claim the same rounds on every rank of a call, set by the group's size and its
    // root (not by the nodes): the root's group and any other one give the most.
    inner_rounds = part.rounds;
    if (groups > 1) {
      const int other = mine == root_group ? (root_group + 1) % groups : root_group;
      const std::vector<int> other_ranks = members(other);
      const int sub_root = leader(other) - other * g;
      inner_rounds =
          std::max(inner_rounds, base(sub_layout(layout, other_ranks, false),
                                      {Collective::reduce, sub_root, sub_root, m, args.elem})
                                     .rounds);
    }
    one_ported = part.ports == 1;
    Splice how;
    how.ranks = ranks;
    how.layout = &sub;
    how.self = r - mine * g;
    if (partial_in_scratch) how.buffers.recv = Buffer::scratch;
    how.buffers.scratch = partial_in_scratch && leads ? m : 0;
    how.shared_nodes = true;
    done = splice(s, part, layout, how);
  }

  // 2. Among the leaders (every rank claims their rounds too: all ranks of a call claim the same,
  // which reroot_reduce relies on).
  int outer_rounds = 0;
  if (groups > 1) {
    std::vector<int> leaders(static_cast<std::size_t>(groups));
    for (int i = 0; i < groups; ++i) leaders[static_cast<std::size_t>(i)] = leader(i);
    const Layout sub = sub_layout(layout, leaders, true);
    const int self = leads ? mine : root_group;
    const Schedule part = base(sub, {Collective::reduce, self, root_group, m, args.elem});
    outer_rounds = part.rounds;
    if (leads) {
      one_ported = one_ported && part.ports == 1;
      if (partial_in_scratch) s.scratch_bytes = std::max(s.scratch_bytes, m);
      Splice how;
      how.ranks = leaders;
      how.layout = &sub;
      how.self = mine;
      if (partial_in_scratch) how.buffers.send = Buffer::scratch;
      how.buffers.scratch = s.scratch_bytes;
      how.first_round = inner_rounds;
      how.after = done;
      splice(s, part, layout, how);
    }
  }
  s.rounds = inner_rounds + outer_rounds;
  s.ports = one_ported ? 1 : 0;
  s.finalize();
  return s;
}

namespace {

Schedule build_transformed(const Layout& layout, const CollArgs& args, const char* name,
                           BuildFn base, CostFn cost) {
  check_args(layout, args, name, true);
  if (args.groups == 0) {
    const int groups = hierarchical_groups(cost, layout.size, cost_input_of(layout, args.bytes));
    return build_reduce_hierarchical(layout, args, base, groups);
  }
  check_groups(Collective::reduce, name, layout, args.groups);
  return build_reduce_hierarchical(layout, args, base, args.groups);
}

double cost_transformed(const CostInput& in, const MachineParams& m, CostFn cost) {
  return hierarchical_cost(cost, in, in.p(), hierarchical_groups(cost, in.p(), in), m);
}

}  // namespace

Schedule build_reduce_hierarchical_linear(const Layout& layout, const CollArgs& args) {
  return build_transformed(layout, args, "hierarchical-linear", build_reduce_linear,
                           cost_reduce_linear);
}
Schedule build_reduce_hierarchical_chain(const Layout& layout, const CollArgs& args) {
  return build_transformed(layout, args, "hierarchical-chain", build_reduce_chain,
                           cost_reduce_chain);
}
Schedule build_reduce_hierarchical_binary(const Layout& layout, const CollArgs& args) {
  return build_transformed(layout, args, "hierarchical-binary", build_reduce_binary,
                           cost_reduce_binary);
}
Schedule build_reduce_hierarchical_binomial(const Layout& layout, const CollArgs& args) {
  return build_transformed(layout, args, "hierarchical-binomial", build_reduce_binomial,
                           cost_reduce_binomial);
}
Schedule build_reduce_hierarchical_in_order_binary(const Layout& layout, const CollArgs& args) {
  return build_transformed(layout, args, "hierarchical-in-order-binary",
                           build_reduce_in_order_binary, cost_reduce_in_order_binary);
}
Schedule build_reduce_hierarchical_rabenseifner(const Layout& layout, const CollArgs& args) {
  return build_transformed(layout, args, "hierarchical-rabenseifner", build_reduce_rabenseifner,
                           cost_reduce_rabenseifner);
}

double cost_reduce_hierarchical_linear(const CostInput& in, const MachineParams& m) {
  return cost_transformed(in, m, cost_reduce_linear);
}
double cost_reduce_hierarchical_chain(const CostInput& in, const MachineParams& m) {
  return cost_transformed(in, m, cost_reduce_chain);
}
double cost_reduce_hierarchical_binary(const CostInput& in, const MachineParams& m) {
  return cost_transformed(in, m, cost_reduce_binary);
}
double cost_reduce_hierarchical_binomial(const CostInput& in, const MachineParams& m) {
  return cost_transformed(in, m, cost_reduce_binomial);
}
double cost_reduce_hierarchical_in_order_binary(const CostInput& in, const MachineParams& m) {
  return cost_transformed(in, m, cost_reduce_in_order_binary);
}
double cost_reduce_hierarchical_rabenseifner(const CostInput& in, const MachineParams& m) {
  return cost_transformed(in, m, cost_reduce_rabenseifner);
}

const Algorithm algorithm_reduce_hierarchical_linear{
    "hierarchical-linear",
    Collective::reduce,
    build_reduce_hierarchical_linear,
    nullptr,
    "linear inside G groups of p/G ranks, then among their leaders; G by the cost model",
    cost_reduce_hierarchical_linear,
    rank_order_always};
const Algorithm algorithm_reduce_hierarchical_chain{
    "hierarchical-chain",
    Collective::reduce,
    build_reduce_hierarchical_chain,
    nullptr,
    "chain inside G groups of p/G ranks, then among their leaders; G by the cost model",
    cost_reduce_hierarchical_chain,
    rank_order_at_root_zero};
const Algorithm algorithm_reduce_hierarchical_binary{
    "hierarchical-binary",
    Collective::reduce,
    build_reduce_hierarchical_binary,
    nullptr,
    "binary inside G groups of p/G ranks, then among their leaders; G by the cost model",
    cost_reduce_hierarchical_binary};
const Algorithm algorithm_reduce_hierarchical_binomial{
    "hierarchical-binomial",
    Collective::reduce,
    build_reduce_hierarchical_binomial,
    nullptr,
    "binomial inside G groups of p/G ranks, then among their leaders; G by the cost model",
    cost_reduce_hierarchical_binomial,
    rank_order_at_root_zero};
const Algorithm algorithm_reduce_hierarchical_in_order_binary{
    "hierarchical-in-order-binary",
    Collective::reduce,
    build_reduce_hierarchical_in_order_binary,
    nullptr,
    "in-order-binary inside G groups, then among their leaders; rank order; G by the model",
    cost_reduce_hierarchical_in_order_binary,
    rank_order_always};
const Algorithm algorithm_reduce_hierarchical_rabenseifner{
    "hierarchical-rabenseifner",
    Collective::reduce,
    build_reduce_hierarchical_rabenseifner,
    nullptr,
    "rabenseifner inside G groups of p/G ranks, then among their leaders",
    cost_reduce_hierarchical_rabenseifner,
    rank_order_always};

}  // namespace lanes::algos
