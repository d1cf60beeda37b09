#include "algos/numa_domains.hpp"

#include <map>

namespace lanes::algos {

int NumaDomains::proxy(int d, int j) const {
  const auto& mine = members[static_cast<std::size_t>(d)];
  if (domain_of[static_cast<std::size_t>(j)] == d) return j;
  const auto place = static_cast<std::size_t>(position_of[static_cast<std::size_t>(j)]);
  return mine[place % mine.size()];
}

bool NumaDomains::contiguous() const {
  for (const auto& m : members) {
    if (m.back() - m.front() + 1 != static_cast<int>(m.size())) return false;
  }
  return true;
}

NumaDomains one_domain(int n) {
  NumaDomains out;
  out.members.emplace_back();
  for (int i = 0; i < n; ++i) {
    out.members[0].push_back(i);
    out.domain_of.push_back(0);
    out.position_of.push_back(i);
  }
  return out;
}

NumaDomains numa_domains(const Layout& layout, const std::vector<int>& mates) {
  const auto n = mates.size();
  bool known = !layout.numa_of.empty();
  for (const int r : mates) {
    if (!known || layout.numa_of[static_cast<std::size_t>(r)] < 0) known = false;
  }
  if (!known) return one_domain(static_cast<int>(n));
  NumaDomains out;
  out.domain_of.assign(n, 0);
  out.position_of.resize(n);
  std::map<int, int> domain_of_numa;  // NUMA node -> domain, by first local index
  for (std::size_t i = 0; i < n; ++i) {
    const int numa = layout.numa_of[static_cast<std::size_t>(mates[i])];
    const auto [at, added] = domain_of_numa.try_emplace(numa, out.count());
    if (added) out.members.emplace_back();
    auto& members = out.members[static_cast<std::size_t>(at->second)];
    out.domain_of[i] = at->second;
    out.position_of[i] = static_cast<int>(members.size());
    members.push_back(static_cast<int>(i));
  }
  return out;
}

NumaDomains phase_domains(const Layout& layout, const std::vector<int>& mates) {
  NumaDomains domains = numa_domains(layout, mates);
  if (domains.two_level()) return domains;
  return one_domain(static_cast<int>(mates.size()));
}

bool numa_domains_contiguous(const Layout& layout) {
  for (const auto& mates : layout.node_ranks) {
    if (!phase_domains(layout, mates).contiguous()) return false;
  }
  return true;
}

}  // namespace lanes::algos
