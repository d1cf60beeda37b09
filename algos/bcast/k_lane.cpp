// k-lane broadcast: the k-ported divide-and-conquer broadcast over nodes, with k ranks of a node
// acting as its k ports.
//
// Source: J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms" (2020):
// the construction of k-lane tree algorithms from k-ported ones, exemplified with broadcast.
//
// Phases: N nodes; K = min(k, smallest node size) for k = num_lanes. On every node the local
// ranks are numbered relative to an entry rank (the root on the root's node, local rank 0
// elsewhere), v = (local rank - entry's local rank + n) mod n, and cut into K groups of
// consecutive v whose sizes differ by at most one; the first rank of group j is the node's
// local root j (local root 0 is the entry).
//  1. On the root's node the root broadcasts the message to its other K - 1 local roots
//     (binomial over the local roots; ceil(log2 K) rounds).
//  2. The k-ported algorithm of bcast/kported.cpp over nodes with K ports: a node range
//     [s, e) with root node r is split into min(K + 1, e - s) near-equal subranges, and the
//     local root j of r sends the whole message over its lanes to the entry rank of the first node
//     of the j-th other subrange (one send per local root: each rank is one-ported). A node the
//     first time it receives spreads the data from its entry to its other local roots (binomial,
//     ceil(log2 K) rounds), which then act as its ports. ceil(log_{K+1} N) such steps.
//  3. Each local root broadcasts the message to its group, about n / K ranks (binomial over the
//     group, shared memory).
// A rank's sends to other nodes and its sends on its node form two chains, each starting once it
// holds the data: an entry serves as port 0 while it spreads, and a local root done as a port
// goes on with its group.
//
// Cost: with c = ceil(log2 K), T = ceil(log_{K+1} N) and g = ceil(n_max / K) (the largest
// group), c + T (1 + c) + ceil(log2 g) rounds, each rank sending at most once per round
// (ports = 1); for m bytes T (alpha + beta m) between nodes with K lanes busy per node, and
// (c (T + 1) + ceil(log2 g)) (alpha' + beta' m) on the nodes.
//
// Applies: any p and any layout (irregular ones use K of the smallest node). Few rounds between
// nodes for small messages; every step moves the whole message.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/binomial_tree.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/kported_split.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

namespace {

struct NodeSend {
  int step, port, to_node;
};

// A node's part in the k-ported broadcast over nodes: when (step) and from which node and port
// it receives (step -1 for the root's node), and its sends.
struct NodeRole {
  int recv_step = -1;
  int from_node = -1;
  int from_port = -1;
  std::vector<NodeSend> sends;
};

NodeRole node_role(int num_nodes, int ports, int root_node, int node) {
  NodeRole role;
  for (const KPortedStep& step : kported_steps(num_nodes, ports, root_node, node)) {
    for (const KPortedTarget& target : step.targets) {
      if (node == step.root) role.sends.push_back({step.step, target.port, target.first});
      if (node == target.first) role = {step.step, step.root, target.port, {}};
    }
  }
  return role;
}

}  // namespace

Schedule build_bcast_k_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "k-lane", true);
  const int p = layout.size;
  Schedule s;
  if (p == 1 || args.bytes == 0) return s;
  const int num_nodes = layout.num_nodes();
  const int root_node = layout.node_of[args.root];
  int smallest = p;
  int largest = 0;
  for (const auto& ranks : layout.node_ranks) {
    smallest = std::min(smallest, static_cast<int>(ranks.size()));
    largest = std::max(largest, static_cast<int>(ranks.size()));
  }
  const int ports = std::min(layout.num_lanes, smallest);
  const int spread_rounds = ceil_log2(ports);
  const int steps = ceil_log(num_nodes, ports + 1);
  const int final_base = spread_rounds + steps * (1 + spread_rounds);
  s.rounds = final_base + ceil_log2((largest + ports - 1) / ports);
  s.ports = 1;
  const auto step_round = [&](int step) { return spread_rounds + step * (1 + spread_rounds); };

  const int me = args.rank;
  const int node = layout.node_of[me];
  const auto node_size = [&](int x) { return static_cast<int>(layout.node_ranks[x].size()); };
  const auto rank_at = [&](int x, int w) {
    const int entry = x == root_node ? layout.local_rank_of[args.root] : 0;
    return layout.node_ranks[x][(w + entry) % node_size(x)];
  };
  const auto group_start = [&](int x, int j) {
    const int n = node_size(x);
    return j * (n / ports) + std::min(j, n % ports);
  };
  const int n = node_size(node);
  const int entry = node == root_node ? layout.local_rank_of[args.root] : 0;
  const int v = (layout.local_rank_of[me] - entry + n) % n;
  int j = 0;  // my group
  while (group_start(node, j + 1) <= v) ++j;
  const int first = group_start(node, j);
  const int group_size = group_start(node, j + 1) - first;
  const BinomialTree spread(ports);      // among the local roots of the node's groups
  const BinomialTree group(group_size);  // in this rank's group
  const bool local_root = v == first;
  const NodeRole role = node_role(num_nodes, ports, root_node, node);
  const int spread_base = role.recv_step < 0 ? 0 : step_round(role.recv_step) + 1;
  const LaneSet my_lane = layout.lanes_of[me];
  const Region data{Buffer::recv, 0, args.bytes};

  // How this rank gets the data.
  std::optional<OpId> got;
  if (me == args.root) {
    // Holds it.
  } else if (local_root && j == 0) {  // the entry of a node other than the root's
    const int from = rank_at(role.from_node, group_start(role.from_node, role.from_port));
    got = s.recv(from, layout.lanes_of[from], data, {}, step_round(role.recv_step));
  } else if (local_root) {  // from the spread among local roots
    const TreeEdge up = *spread.parent(j);
    const int from = rank_at(node, group_start(node, up.member));
    got = s.recv(from, layout.lanes_of[from], data, {}, spread_base + up.down_round);
  } else {  // from the broadcast in its group
    const TreeEdge up = *group.parent(v - first);
    const int from = rank_at(node, first + up.member);
    got = s.recv(from, layout.lanes_of[from], data, {}, final_base + up.down_round);
  }
  std::vector<OpId> start;
  if (got) start.push_back(*got);

  // On the node: the spread (local roots), then the group broadcast.
  std::vector<OpId> after = start;
  if (local_root) {
    for (const TreeEdge& child : spread.children(j)) {
      after = {s.send(rank_at(node, group_start(node, child.member)), my_lane, data, after,
                      spread_base + child.down_round)};
    }
  }
  for (const TreeEdge& child : group.children(v - first)) {
    after = {s.send(rank_at(node, first + child.member), my_lane, data, after,
                    final_base + child.down_round)};
  }

  // To other nodes: local root j serves port j.
  if (local_root) {
    after = start;
    for (const NodeSend& send : role.sends) {
      if (send.port != j) continue;
      after = {s.send(rank_at(send.to_node, 0), my_lane, data, after, step_round(send.step))};
    }
  }
  s.finalize();
  return s;
}

// Cost: with K = min(k, n) ports, s = ceil(log2 K) and T = ceil(log_{K+1} N): s on-node rounds to
// reach the root node's local roots; T steps of one off-node round, in which the K local roots of
// a node send at once (K flows), and the receiving node's s on-node rounds; last the broadcast in
// groups of ceil(n / K) ranks.
double cost_bcast_k_lane(const CostInput& in, const MachineParams& m) {
  const long long ports = std::max(1LL, std::min(static_cast<long long>(in.lanes), in.ppn));
  const int spread = ceil_log(ports, 2);
  const int steps = ceil_log(in.nodes, ports + 1);
  const int group = ceil_log((in.ppn + ports - 1) / ports, 2);
  const auto c = static_cast<double>(in.bytes);
  return (spread * (steps + 1) + group) * shm_time(c, m) +
         steps * rail_time(c, static_cast<double>(ports), in, m);
}

const Algorithm algorithm_bcast_k_lane{
    "k-lane",
    Collective::bcast,
    build_bcast_k_lane,
    nullptr,
    "k-ported over nodes with k ranks per node as the ports, then bcast on every node",
    cost_bcast_k_lane};

}  // namespace lanes::algos
