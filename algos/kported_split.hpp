// The divide step of the k-ported broadcast and scatter (J. L. Träff, "k-ported vs. k-lane
// Broadcast, Scatter, and Alltoall Algorithms", 2020), in one place: the k-ported and k-lane
// algorithms and the k-lane ones' node-level recursion all follow it.
//
// A range [lo, hi) of members with local root r (first [0, size) and the root) is split into
// min(k + 1, hi - lo) near-equal subranges, the larger ones first. In one step r reaches the first
// member of every subrange that does not hold r, the j-th of them on port j, and that member
// becomes its subrange's local root; r stays the local root of its own. Every member goes on with
// the subrange that holds it until that is itself alone.
#pragma once

#include <vector>

namespace lanes::algos {

// A subrange [first, end) that the local root reaches on `port`.
struct KPortedTarget {
  int port = 0;
  int first = 0;
  int end = 0;
  int size() const { return end - first; }
};

// One step of the recursion as `member` sees it: the local root of the range holding the member,
// and the subranges that root reaches (the member is that root, or the first of one of them, or
// waits).
struct KPortedStep {
  int step = 0;
  int root = 0;
  std::vector<KPortedTarget> targets;
};

// Every step of the recursion over [0, size) from `root` with `ports` ports, along the ranges
// that hold `member`.
std::vector<KPortedStep> kported_steps(int size, int ports, int root, int member);

}  // namespace lanes::algos
