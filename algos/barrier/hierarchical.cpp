// Hierarchical barrier: shared-memory arrival and release on every node, NUMA domain by NUMA
// domain, and a dissemination barrier among the node leaders.
//
// Source: the flag-based shared-memory barriers of J. M. Mellor-Crummey and M. L. Scott,
// "Algorithms for scalable synchronization on shared-memory multiprocessors" (ACM TOCS 9(1),
// 1991: arrival at a parent, release by it), arranged by NUMA domain as in S. Li, T. Hoefler,
// M. Snir, "NUMA-aware shared-memory collective communication for MPI" (HPDC 2013); among the
// leaders, the dissemination barrier of D. Hensgen, R. Finkel, U. Manber, "Two algorithms for
// barrier synchronization" (IJPP 17(1), 1988).
//
// Phases, on a node whose ranks span D NUMA domains (algos/numa_domains.hpp; D = 1 where they
// are not known), each domain's leader its first local rank, the node's leader local rank 0:
//  1. Arrival: every member of a domain sends a token to its domain's leader (the node segment's
//     slots: one write each); with D > 1 each domain leader, once its members arrived, sends one
//     to the node's leader.
//  2. Among the N node leaders, once their node arrived: dissemination, ceil(log2 N) rounds.
//  3. Release, in the reverse order: the node's leader to the domain leaders, each domain leader
//     to its members.
// Rounds are numbered alike on every node: A arrival levels (0, 1 or 2: the most any node has),
// the leaders' rounds, A release levels.
//
// Cost: 2 (alpha_shm + beta_shm) on a node, plus (f - 1) alpha_shm / 4 for the f tokens the
// busiest leader takes in (each further token's receive completes without a wait of its own),
// plus ceil(log2 N) (alpha + beta) among the leaders, one flow per node; against the
// dissemination over all p ranks, whose every round crosses nodes, it saves about log2 n
// off-node rounds.
//
// Applies: any p and any layout.
#include <algorithm>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/numa_domains.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

namespace {

// Arrival levels of a node: 0 alone, 1 one domain, 2 several.
int levels_of(const Layout& layout, int node) {
  const auto& mates = layout.node_ranks[static_cast<std::size_t>(node)];
  if (mates.size() == 1) return 0;
  return phase_domains(layout, mates).count() > 1 ? 2 : 1;
}

}  // namespace

Schedule build_barrier_hierarchical(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "hierarchical", false);
  const int r = args.rank;
  const int nodes = layout.num_nodes();
  int levels = 0;
  for (int u = 0; u < nodes; ++u) levels = std::max(levels, levels_of(layout, u));
  const int among = ceil_log2(nodes);
  Schedule s;
  s.rounds = 2 * levels + among;
  if (layout.size == 1) return s;
  const int u = layout.node_of[r];
  const auto& mates = layout.node_ranks[static_cast<std::size_t>(u)];
  const NumaDomains domains = phase_domains(layout, mates);
  const int i = layout.local_rank_of[r];
  const auto& members =
      domains.members[static_cast<std::size_t>(domains.domain_of[static_cast<std::size_t>(i)])];
  const auto rank_at = [&](int local) { return mates[static_cast<std::size_t>(local)]; };
  const int domain_leader = rank_at(members.front());
  const auto node_leader = [&](int node) {
    return layout.node_ranks[static_cast<std::size_t>(node)].front();
  };
  const LaneSet lanes = layout.lanes_of[r];
  const int leaders_release = levels + among;  // node leader -> domain leaders
  const int members_release = leaders_release + levels - 1;
  // Scratch: the token sent (byte 0), then a byte per token received.
  const Region token{Buffer::scratch, 0, 1};
  std::size_t next = 1;
  const auto recv_token = [&](int peer, std::vector<OpId> deps, int round) {
    const Region into{Buffer::scratch, next++, 1};
    return s.recv(peer, layout.lanes_of[peer], into, std::move(deps), round);
  };
  const auto release_members = [&](const std::vector<OpId>& after) {
    for (const int k : members) {
      if (rank_at(k) != r) s.send(rank_at(k), lanes, token, after, members_release);
    }
  };

  if (r != domain_leader) {
    // 1. and 3. for a member: arrive, then wait for the release.
    s.send(domain_leader, lanes, token, {}, 0);
    recv_token(domain_leader, {}, members_release);
  } else {
    // 1. Arrival of the domain's members.
    std::vector<OpId> arrived;
    for (const int k : members) {
      if (rank_at(k) != r) arrived.push_back(recv_token(rank_at(k), {}, 0));
    }
    if (r != node_leader(u)) {
      // ... passed on to the node's leader; 3. its release passed on to the members.
      s.send(node_leader(u), lanes, token, arrived, 1);
      release_members({recv_token(node_leader(u), {}, leaders_release)});
    } else {
      for (const auto& other : domains.members) {
        if (rank_at(other.front()) != r)
          arrived.push_back(recv_token(rank_at(other.front()), {}, 1));
      }
      // 2. Among the node leaders.
      for (int j = 0; j < among; ++j) {
        const int to = node_leader((u + (1 << j)) % nodes);
        const int back = node_leader(((u - (1 << j)) % nodes + nodes) % nodes);
        const OpId out = s.send(to, lanes, token, arrived, levels + j);
        const OpId got = recv_token(back, arrived, levels + j);
        arrived = {out, got};
      }
      // 3. Release: the other domains' leaders, then this domain's members.
      for (const auto& other : domains.members) {
        if (rank_at(other.front()) != r)
          s.send(rank_at(other.front()), lanes, token, arrived, leaders_release);
      }
      release_members(arrived);
    }
  }
  s.scratch_bytes = next;
  s.finalize();
  return s;
}

// Cost: the arrival and the release on a node (one level: the model does not see NUMA domains),
// the node leader taking in n - 1 tokens, then the leaders' dissemination, one flow per node.
double cost_barrier_hierarchical(const CostInput& in, const MachineParams& m) {
  if (in.p() <= 1) return 0;
  double t = 0;
  if (in.ppn > 1) t += 2 * shm_time(1, m) + static_cast<double>(in.ppn - 1) * m.alpha_shm / 4;
  for (long long d = 1; d < in.nodes; d *= 2) t += rail_time(1, 1, in, m, Spread::node);
  return t;
}

const Algorithm algorithm_barrier_hierarchical{
    "hierarchical",
    Collective::barrier,
    build_barrier_hierarchical,
    nullptr,
    "shared-memory arrival and release on every node (NUMA domains first), dissemination among "
    "node leaders",
    cost_barrier_hierarchical};

}  // namespace lanes::algos
