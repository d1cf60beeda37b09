// The recursive-halving reduce-scatter that Rabenseifner's reduce and allreduce share.
#pragma once

#include <utility>
#include <vector>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

struct Halving {
  // Per step k: the part ranges [first, second) a rank keeps and hands over.
  std::vector<std::pair<int, int>> kept, given;
  std::vector<OpId> last;  // the ops after which the kept parts hold their combination
};

// Over q = 2^levels virtual ranks (virtual rank v is rank real(v)), starting from parts [0, q):
// in step k (round first_round + k) v hands the half of its remaining parts that the partner
// v ^ 2^k keeps to it, and combines the partner's contribution to its own half into parts(lo,
// hi), the lower virtual rank's on the left. parts(a, b): the region of parts [a, b);
// incoming(bytes): where a received half lands. Every op waits for `prev`.
template <class Real, class Parts, class Incoming>
Halving recursive_halving(Schedule& s, const Layout& layout, LaneSet lanes, int v, int levels,
                          int first_round, Real&& real, Parts&& parts, Incoming&& incoming,
                          std::vector<OpId> prev) {
  Halving h;
  int lo = 0;
  int hi = 1 << levels;
  for (int k = 0; k < levels; ++k) {
    const int bit = 1 << k;
    const int partner = real(v ^ bit);
    const int mid = lo + (hi - lo) / 2;
    const bool lower = (v & bit) == 0;
    h.kept.emplace_back(lower ? lo : mid, lower ? mid : hi);
    h.given.emplace_back(lower ? mid : lo, lower ? hi : mid);
    lo = h.kept.back().first;
    hi = h.kept.back().second;
    const Region out = parts(h.given.back().first, h.given.back().second);
    const Region mine = parts(lo, hi);
    std::vector<OpId> step;
    if (out.bytes > 0) step.push_back(s.send(partner, lanes, out, prev, first_round + k));
    if (mine.bytes > 0) {
      const OpId in =
          s.recv(partner, layout.lanes_of[partner], incoming(mine.bytes), prev, first_round + k);
      std::vector<OpId> deps = prev;
      deps.push_back(in);
      step.push_back(s.combine(incoming(mine.bytes), mine, deps, !lower));
    }
    if (!step.empty()) prev = step;
  }
  h.last = std::move(prev);
  return h;
}

}  // namespace lanes::algos
