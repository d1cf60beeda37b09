// The NUMA domains of one node's ranks, for on-node phases whose copies stay local: after S. Li,
// T. Hoefler, M. Snir, "NUMA-aware shared-memory collective communication for MPI" (HPDC 2013),
// a phase moves each byte across NUMA nodes once, between ranks that stand for each other in
// their domains, and does the rest inside the domains.
//
// The ranks of a node are grouped by the NUMA node they are bound to (Layout::numa_of); domains
// are numbered by their first local rank. Where any rank's NUMA node is unknown (-1: unbound, or
// bound across NUMA nodes) the node is one domain, and the phases are the flat ones.
#pragma once

#include <vector>

#include "algos/layout.hpp"

namespace lanes::algos {

struct NumaDomains {
  std::vector<std::vector<int>> members;  // domain -> its local indices, ascending
  std::vector<int> domain_of;             // local index -> its domain
  std::vector<int> position_of;           // local index -> its place among its domain's members

  int count() const { return static_cast<int>(members.size()); }
  // Whether a two-level phase differs from the flat one: several domains, one of them shared.
  bool two_level() const { return count() > 1 && count() < static_cast<int>(domain_of.size()); }
  // The member of domain d that stands for local index j there: j itself in its own domain,
  // otherwise the member at j's position modulo the domain's size (so that the members of a
  // domain share the others' ranks evenly).
  int proxy(int d, int j) const;
  // Whether every domain's members are consecutive local indices (then combining inside the
  // domains first and the domains in order afterwards keeps local order).
  bool contiguous() const;
};

// The domains of the node whose ranks are `mates` (communicator ranks, in local order).
NumaDomains numa_domains(const Layout& layout, const std::vector<int>& mates);
// One domain of n local ranks (what a phase uses where two levels would not differ).
NumaDomains one_domain(int n);
// The domains an on-node phase works with: numa_domains() where two levels differ from one,
// one_domain() otherwise.
NumaDomains phase_domains(const Layout& layout, const std::vector<int>& mates);

// Whether every node's domains are contiguous (NumaDomains::contiguous).
bool numa_domains_contiguous(const Layout& layout);

}  // namespace lanes::algos
