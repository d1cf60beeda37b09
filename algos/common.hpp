// Small helpers every algorithm uses.
#pragma once

#include <algorithm>
#include <string_view>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

int ceil_log2(int p);   // smallest r with 2^r >= p (0 for p <= 1)
int floor_log2(int x);  // largest r with 2^r <= x, for x >= 1

// [lo, lo + len) split into `parts` near-equal subranges, the larger ones first: the divide step
// of the k-ported algorithms (parts = k + 1).
struct RangeSplit {
  int lo, len, parts;
  int start(int i) const { return lo + i * (len / parts) + std::min(i, len % parts); }
  int part_of(int x) const {
    const int big = len / parts + 1;
    const int in_big = (len % parts) * big;
    const int o = x - lo;
    return o < in_big ? o / big : len % parts + (o - in_big) / (len / parts);
  }
};

// The lanes of an off-node transfer from `sender` in a round in which `sends_off(x)` tells
// whether rank x sends off its node: every lane of the node when no other rank of the sender's
// node does, else the lanes the sender drives (the rule the simulator checks). Sender and
// receiver call it alike, so both name the same lanes.
template <class SendsOff>
LaneSet round_lanes(const Layout& layout, int sender, SendsOff&& sends_off) {
  for (const int x : layout.node_ranks[static_cast<std::size_t>(layout.node_of[sender])]) {
    if (x != sender && sends_off(x)) return layout.lanes_of[sender];
  }
  return layout.all_lanes();
}

// Part i of a vector of `bytes` bytes cut into `parts` near-equal parts at `elem`-byte element
// boundaries, the larger parts first (a part may be empty when there are fewer elements).
struct VectorPart {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};
VectorPart vector_part(std::size_t bytes, std::size_t elem, int parts, int i);

// For Algorithm::applicable: every node holds the same number of ranks.
bool regular_layout(const Layout& layout);

// Throws lanes::Error(invalid_argument) when args.rank (or, with `rooted`, args.root) lies outside
// the layout, naming the algorithm.
void check_args(const Layout& layout, const CollArgs& args, std::string_view algorithm,
                bool rooted);

}  // namespace lanes::algos
