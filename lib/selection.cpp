#include "lib/selection.hpp"

#include <algorithm>
#include <lanes/error.hpp>

#include "algos/registry.hpp"

namespace lanes::detail {

using algos::Collective;

namespace {

bool applies(const algos::Algorithm& algo, const algos::Layout& layout) {
  return algo.applicable == nullptr || algo.applicable(layout);
}

// Whether `algo` serves a non-commutative operation on `layout`: it combines in rank order (a
// reduce at least toward root 0: other roots then go through rank 0, reroot_reduce).
bool serves_rank_order(const algos::Algorithm& algo, const algos::Layout& layout) {
  return algo.rank_order != nullptr && algo.rank_order(layout, 0);
}

// The algorithms of `coll` that apply to `layout` and serve a non-commutative operation on it.
std::string rank_order_names(Collective coll, const algos::Layout& layout) {
  std::string names;
  for (const algos::Algorithm* a : algos::algorithms_for(coll)) {
    if (applies(*a, layout) && serves_rank_order(*a, layout)) {
      names += (names.empty() ? "" : ", ") + std::string(a->name);
    }
  }
  return names.empty() ? "none" : names;
}

// On shared cores, the model runs every candidate's schedules (algos/shared_cores.hpp) up to
// this many processes per node: beyond, that costs more than a call (0.5 s at 256 processes).
constexpr int kMaxSharedRun = 64;

// The cost model's cheapest algorithm that applies to the layout (with `rank_order`, among
// those that combine in rank order; algorithms without a cost formula come last).
Selection model_choice(const SelectionInput& in) {
  const algos::Layout& layout = *in.layout;
  algos::CostInput cost;
  cost.nodes = layout.num_nodes();
  for (const auto& ranks : layout.node_ranks) {
    cost.ppn = std::max<long long>(cost.ppn, static_cast<long long>(ranks.size()));
  }
  cost.lanes = layout.num_lanes;
  cost.bytes = in.bytes;
  cost.regular = layout.regular();
  Selection out;
  out.source = "model";
  out.ranking = algos::predict(in.coll, cost, *in.machine);
  if (layout.num_nodes() == 1 && in.shared.cores > 0 && layout.size > in.shared.cores &&
      layout.size <= kMaxSharedRun) {
    const auto ranked =
        algos::rank_on_shared_cores(out.ranking, in.coll, layout, in.bytes, *in.machine,
                                    in.shared.cores, in.shared.single_copy);
    out.ranking.clear();
    for (const auto& c : ranked) out.ranking.push_back(c.prediction);
  }
  for (const auto& candidate : out.ranking) {
    const algos::Algorithm* algo = algos::find_algorithm(in.coll, candidate.algorithm);
    if (applies(*algo, layout) && (!in.rank_order || serves_rank_order(*algo, layout))) {
      out.algorithm = candidate.algorithm;
      return out;
    }
  }
  if (!in.rank_order) {
    out.algorithm = algos::fallback_algorithm(in.coll);
    return out;
  }
  for (const algos::Algorithm* algo : algos::algorithms_for(in.coll)) {
    if (applies(*algo, layout) && serves_rank_order(*algo, layout)) {
      out.algorithm = algo->name;
      return out;
    }
  }
  throw Error(Errc::invalid_argument,
              std::string("no ") + algos::to_string(in.coll) +
                  " algorithm combines in rank order on " + layout.describe() +
                  ", which a non-commutative user operation needs (algorithms: " +
                  algos::algorithm_names(in.coll) + ")");
}

}  // namespace

std::string configured_algorithm(const Config& cfg, Collective coll, const char** source) {
  switch (coll) {
    case Collective::bcast:
      *source = "LANES_BCAST_ALGORITHM";
      return cfg.bcast_algorithm;
    case Collective::scatter:
      *source = "LANES_SCATTER_ALGORITHM";
      return cfg.scatter_algorithm;
    case Collective::alltoall:
      *source = "LANES_ALLTOALL_ALGORITHM";
      return cfg.alltoall_algorithm;
    case Collective::allgather:
      *source = "LANES_ALLGATHER_ALGORITHM";
      return cfg.allgather_algorithm;
    case Collective::gather:
      *source = "LANES_GATHER_ALGORITHM";
      return cfg.gather_algorithm;
    case Collective::reduce:
      *source = "LANES_REDUCE_ALGORITHM";
      return cfg.reduce_algorithm;
    case Collective::allreduce:
      *source = "LANES_ALLREDUCE_ALGORITHM";
      return cfg.allreduce_algorithm;
    case Collective::reduce_scatter_block:
      *source = "LANES_REDUCE_SCATTER_BLOCK_ALGORITHM";
      return cfg.reduce_scatter_block_algorithm;
    case Collective::barrier:
      *source = "LANES_BARRIER_ALGORITHM";
      return cfg.barrier_algorithm;
  }
  return "auto";
}

Selection select_algorithm(const SelectionInput& in) {
  const algos::Layout& layout = *in.layout;
  std::string name = in.requested;
  const char* source = "CallOptions::algorithm";
  if (name.empty() || name == "auto") name = configured_algorithm(*in.config, in.coll, &source);
  if (name == "auto") {
    // A rule's algorithm that is not in rank order does not serve a non-commutative operation:
    // the model chooses among those that are.
    auto ruled = in.rules->match(in.coll, in.bytes, layout.size);
    const algos::Algorithm* rule_algo = ruled ? algos::find_algorithm(in.coll, *ruled) : nullptr;
    if (!ruled ||
        (in.rank_order && (rule_algo == nullptr || !serves_rank_order(*rule_algo, layout)))) {
      return model_choice(in);
    }
    name = *ruled;
    source = "LANES_RULES";
  }
  const algos::Algorithm* algo = algos::find_algorithm(in.coll, name);
  if (algo == nullptr) {
    throw Error(Errc::invalid_argument,
                std::string(source) + "='" + name + "' is not a " + algos::to_string(in.coll) +
                    " algorithm; available: " + algos::algorithm_names(in.coll));
  }
  if (!applies(*algo, layout)) {
    Selection out;
    if (in.rank_order) {
      out = model_choice(in);
    } else {
      out.algorithm = algos::fallback_algorithm(in.coll);
    }
    out.source = "fallback";
    out.not_applicable = name;
    return out;
  }
  if (in.rank_order && !serves_rank_order(*algo, layout)) {
    throw Error(Errc::invalid_argument,
                std::string(source) + "='" + name + "': " + algos::to_string(in.coll) + " " + name +
                    " does not combine in rank order on " + layout.describe() +
                    ", which a non-commutative user operation needs; " + algos::to_string(in.coll) +
                    " algorithms that do here: " + rank_order_names(in.coll, layout));
  }
  return Selection{name, source, "", {}};
}

}  // namespace lanes::detail
