#include "algos/registry.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "algos/common.hpp"

namespace lanes::algos {

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> algorithms = {
      // bcast
      {"binomial", Collective::bcast, build_bcast_binomial, nullptr,
       "binomial tree, ceil(log2 p) rounds of the whole message", cost_bcast_binomial},
      {"kported", Collective::bcast, build_bcast_kported, nullptr,
       "k-ported divide and conquer, k = lanes concurrent sends, ceil(log_{k+1} p) rounds",
       cost_bcast_kported},
      {"scatter-allgather", Collective::bcast, build_bcast_scatter_allgather, nullptr,
       "binomial scatter of p blocks, recursive-doubling allgather (fold for non-powers of two)",
       cost_bcast_scatter_allgather},
      {"scatter-ring", Collective::bcast, build_bcast_scatter_ring, nullptr,
       "binomial scatter of p blocks, ring allgather in p-1 steps", cost_bcast_scatter_ring},
      {"scatter-ring-bwsave", Collective::bcast, build_bcast_scatter_ring_bwsave, nullptr,
       "scatter-ring that never sends a rank a block it holds from the scatter",
       cost_bcast_scatter_ring_bwsave},
      {"hierarchical", Collective::bcast, build_bcast_hierarchical, nullptr,
       "binomial among node leaders, then binomial on every node", cost_bcast_hierarchical},
      {"full-lane", Collective::bcast, build_bcast_full_lane, regular_layout,
       "scatter on the root's node, n concurrent bcasts between nodes, allgather on every node",
       cost_bcast_full_lane},
      {"k-lane", Collective::bcast, build_bcast_k_lane, nullptr,
       "k-ported over nodes with k ranks per node as the ports, then bcast on every node",
       cost_bcast_k_lane},
      {"pipeline", Collective::bcast, build_bcast_pipeline, nullptr,
       "one part per lane, pipelined in segments along a chain of the nodes on its lane",
       cost_bcast_pipeline},
      // (end of bcast)
      // scatter
      {"binomial", Collective::scatter, build_scatter_binomial, nullptr,
       "binomial tree, each child gets its subtree's blocks; ceil(log2 p) rounds",
       cost_scatter_binomial},
      {"linear", Collective::scatter, build_scatter_linear, nullptr,
       "the root sends every block directly, all posted at once; one round", cost_scatter_linear},
      {"kported", Collective::scatter, build_scatter_kported, nullptr,
       "k-ported divide and conquer over k + 1 subranges; ceil(log_{k+1} p) rounds",
       cost_scatter_kported},
      {"full-lane", Collective::scatter, build_scatter_full_lane, regular_layout,
       "scatter on the root's node, then n binomial scatters over the nodes; regular layouts",
       cost_scatter_full_lane},
      {"k-lane", Collective::scatter, build_scatter_k_lane, nullptr,
       "k-ported scatter over nodes, k ranks per node acting as the k ports", cost_scatter_k_lane},
      // (end of scatter)
      // gather
      {"linear", Collective::gather, build_gather_linear, nullptr,
       "every rank sends its block directly to the root; one round", cost_gather_linear},
      {"binomial", Collective::gather, build_gather_binomial, nullptr,
       "binomial tree, each rank sends its subtree's blocks up; ceil(log2 p) rounds",
       cost_gather_binomial},
      // (end of gather)
      // alltoall
      {"pairwise", Collective::alltoall, build_alltoall_pairwise, nullptr,
       "p-1 steps, step s sends to r+s and receives from r-s", cost_alltoall_pairwise},
      {"kported", Collective::alltoall, build_alltoall_kported, nullptr,
       "ceil((p-1)/k) rounds, each sending k blocks to r+d on lanes 0..k-1", cost_alltoall_kported},
      {"bruck", Collective::alltoall, build_alltoall_bruck, nullptr,
       "message combining, ceil(log2 p) rounds of about p/2 blocks", cost_alltoall_bruck},
      {"full-lane", Collective::alltoall, build_alltoall_full_lane, regular_layout,
       "node-local combining alltoall, then n concurrent alltoalls of n-block messages",
       cost_alltoall_full_lane},
      {"k-lane", Collective::alltoall, build_alltoall_k_lane, regular_layout,
       "N-1 node rounds of n steps to distinct remote ranks, then an on-node round",
       cost_alltoall_k_lane},
      {"windowed", Collective::alltoall, build_alltoall_windowed, nullptr,
       "pairwise steps with 2k in flight, so every lane of a node stays busy",
       cost_alltoall_windowed},
      // (end of alltoall)
      // allgather
      {"linear", Collective::allgather, build_allgather_linear, nullptr,
       "direct exchange with every rank, all messages posted at once", cost_allgather_linear},
      {"ring", Collective::allgather, build_allgather_ring, nullptr,
       "p-1 steps, each forwarding the last block received to r+1", cost_allgather_ring},
      {"recursive-doubling", Collective::allgather, build_allgather_recursive_doubling, nullptr,
       "log2 p rounds of doubling exchanges; non-powers of two fold onto a power of two",
       cost_allgather_recursive_doubling},
      {"bruck", Collective::allgather, build_allgather_bruck, nullptr,
       "dissemination, ceil(log2 p) rounds, final rotation", cost_allgather_bruck},
      {"node-aware", Collective::allgather, build_allgather_node_aware, nullptr,
       "gather to node leaders, ring among leaders, broadcast on each node",
       cost_allgather_node_aware},
      // (end of allgather)
      // reduce
      {"binomial", Collective::reduce, build_reduce_binomial, nullptr,
       "binomial tree, each rank combines its subtree in rank order; ceil(log2 p) rounds",
       cost_reduce_binomial, rank_order_at_root_zero},
      {"full-lane", Collective::reduce, build_reduce_full_lane, regular_layout,
       "node reduce-scatter, n concurrent binomial reduces of m/n between nodes, gather at root",
       cost_reduce_full_lane, rank_order_on_consecutive_nodes_root_node_zero},
      {"linear", Collective::reduce, build_reduce_linear, nullptr,
       "every rank sends to the root, which combines them in rank order; p - 1 rounds",
       cost_reduce_linear, rank_order_always},
      {"chain", Collective::reduce, build_reduce_chain, nullptr,
       "segments pipelined along the chain p-1 -> ... -> 0 relative to the root", cost_reduce_chain,
       rank_order_at_root_zero},
      {"binary", Collective::reduce, build_reduce_binary, nullptr,
       "segments pipelined up a heap-ordered binary tree, two rounds per level",
       cost_reduce_binary},
      {"in-order-binary", Collective::reduce, build_reduce_in_order_binary, nullptr,
       "binary tree of rank ranges rooted at 0, combined in rank order; a hop to the root",
       cost_reduce_in_order_binary, rank_order_always},
      {"rabenseifner", Collective::reduce, build_reduce_rabenseifner, nullptr,
       "recursive-halving reduce-scatter, binomial gather to the root; non-powers of two fold",
       cost_reduce_rabenseifner, rank_order_always},
      {"hierarchical-linear", Collective::reduce, build_reduce_hierarchical_linear, nullptr,
       "linear inside G groups of p/G ranks, then among their leaders; G by the cost model",
       cost_reduce_hierarchical_linear, rank_order_always},
      {"hierarchical-chain", Collective::reduce, build_reduce_hierarchical_chain, nullptr,
       "chain inside G groups of p/G ranks, then among their leaders; G by the cost model",
       cost_reduce_hierarchical_chain, rank_order_at_root_zero},
      {"hierarchical-binary", Collective::reduce, build_reduce_hierarchical_binary, nullptr,
       "binary inside G groups of p/G ranks, then among their leaders; G by the cost model",
       cost_reduce_hierarchical_binary},
      {"hierarchical-binomial", Collective::reduce, build_reduce_hierarchical_binomial, nullptr,
       "binomial inside G groups of p/G ranks, then among their leaders; G by the cost model",
       cost_reduce_hierarchical_binomial, rank_order_at_root_zero},
      {"hierarchical-in-order-binary", Collective::reduce,
       build_reduce_hierarchical_in_order_binary, nullptr,
       "in-order-binary inside G groups, then among their leaders; rank order; G by the model",
       cost_reduce_hierarchical_in_order_binary, rank_order_always},
      {"hierarchical-rabenseifner", Collective::reduce, build_reduce_hierarchical_rabenseifner,
       nullptr, "rabenseifner inside G groups of p/G ranks, then among their leaders",
       cost_reduce_hierarchical_rabenseifner, rank_order_always},
      // (end of reduce)
      // allreduce
      {"recursive-doubling", Collective::allreduce, build_allreduce_recursive_doubling, nullptr,
       "log2 p rounds exchanging and combining the whole vector; non-powers of two fold",
       cost_allreduce_recursive_doubling, rank_order_always},
      {"ring", Collective::allreduce, build_allreduce_ring, nullptr,
       "ring reduce-scatter then ring allgather of p parts; 2(p-1) steps, bandwidth-optimal",
       cost_allreduce_ring},
      {"full-lane", Collective::allreduce, build_allreduce_full_lane, regular_layout,
       "node reduce-scatter, n concurrent allreduces of m/n between nodes, node allgather",
       cost_allreduce_full_lane, rank_order_on_consecutive_nodes},
      {"rabenseifner", Collective::allreduce, build_allreduce_rabenseifner, nullptr,
       "recursive-halving reduce-scatter, recursive-doubling allgather; non-powers of two fold",
       cost_allreduce_rabenseifner, rank_order_always},
      {"reduce-bcast", Collective::allreduce, build_allreduce_reduce_bcast, nullptr,
       "binomial reduce to rank 0, then binomial bcast; 2 ceil(log2 p) rounds",
       cost_allreduce_reduce_bcast, rank_order_always},
      {"hierarchical", Collective::allreduce, build_allreduce_hierarchical, nullptr,
       "binomial reduce in G groups, allreduce among leaders, binomial bcast; G by the model",
       cost_allreduce_hierarchical, rank_order_always},
      // (end of allreduce)
      // barrier
      {"dissemination", Collective::barrier, build_barrier_dissemination, nullptr,
       "ceil(log2 p) rounds, rank r signals r + 2^j and waits for r - 2^j",
       cost_barrier_dissemination},
      // (end of barrier)
      // reduce_scatter_block
      {"ring", Collective::reduce_scatter_block, build_reduce_scatter_block_ring, nullptr,
       "p-1 steps, each passing one block's partial to r+1", cost_reduce_scatter_block_ring},
      {"pairwise", Collective::reduce_scatter_block, build_reduce_scatter_block_pairwise, nullptr,
       "every block straight to its owner, all at once; combined in rank order",
       cost_reduce_scatter_block_pairwise, rank_order_always},
      {"recursive-halving", Collective::reduce_scatter_block,
       build_reduce_scatter_block_recursive_halving, nullptr,
       "log2 p halving steps, each sending half the remaining blocks; non-powers of two fold",
       cost_reduce_scatter_block_recursive_halving},
      // (end of reduce_scatter_block)
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
