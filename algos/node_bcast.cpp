#include "algos/node_bcast.hpp"

#include <algorithm>

#include "algos/common.hpp"
#include "algos/numa_domains.hpp"

namespace lanes::algos {

int node_bcast_rounds(const Layout& layout, int node) {
  const auto& ranks = layout.node_ranks[static_cast<std::size_t>(node)];
  const NumaDomains domains = phase_domains(layout, ranks);
  if (domains.count() == 1) return ceil_log2(static_cast<int>(ranks.size()));
  std::size_t largest = 0;
  for (const auto& members : domains.members) largest = std::max(largest, members.size());
  return ceil_log2(domains.count()) + ceil_log2(static_cast<int>(largest));
}

TreeBcast append_node_bcast(Schedule& s, const Layout& layout, int me, int source, int first_round,
                            Region data, std::vector<OpId> held) {
  const auto& ranks = layout.node_ranks[static_cast<std::size_t>(layout.node_of[me])];
  const NumaDomains domains = phase_domains(layout, ranks);
  const auto driven = [&](int sender, const TreeEdge&) { return layout.lanes_of[sender]; };
  const int from = layout.local_rank_of[source];
  const int mine = layout.local_rank_of[me];
  const int d = domains.count();
  const int ds = domains.domain_of[static_cast<std::size_t>(from)];
  // The local rank that leads domain e.
  const auto leader = [&](int e) {
    return e == ds ? from : domains.members[static_cast<std::size_t>(e)].front();
  };
  const int dm = domains.domain_of[static_cast<std::size_t>(mine)];
  TreeBcast out;
  std::vector<OpId> after = std::move(held);
  int round = first_round;
  if (d > 1) {
    // Among the domains' leaders, numbered from the source's domain.
    if (mine == leader(dm)) {
      const auto rank_of = [&](int w) {
        return ranks[static_cast<std::size_t>(leader((w + ds) % d))];
      };
      const TreeBcast among = append_binomial_bcast(s, BinomialTree(d), (dm - ds + d) % d, round,
                                                    rank_of, driven, data, after);
      out.received = among.received;
      out.last = among.last;
      if (among.received) after = {*among.received};
    }
    round += ceil_log2(d);
  }
  // Inside the domain, numbered from its leader.
  const auto& members = domains.members[static_cast<std::size_t>(dm)];
  const int m = static_cast<int>(members.size());
  const int lead = domains.position_of[static_cast<std::size_t>(leader(dm))];
  const int v = (domains.position_of[static_cast<std::size_t>(mine)] - lead + m) % m;
  const auto rank_of = [&](int w) {
    return ranks[static_cast<std::size_t>(members[static_cast<std::size_t>((w + lead) % m)])];
  };
  const TreeBcast inside =
      append_binomial_bcast(s, BinomialTree(m), v, round, rank_of, driven, data, after);
  if (inside.received) out.received = inside.received;
  out.last.insert(out.last.end(), inside.last.begin(), inside.last.end());
  return out;
}

}  // namespace lanes::algos
