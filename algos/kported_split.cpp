#include "algos/kported_split.hpp"

#include <algorithm>

namespace lanes::algos {

namespace {

// [lo, lo + len) split into `parts` near-equal subranges, the larger ones first.
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

}  // namespace

std::vector<KPortedStep> kported_steps(int size, int ports, int root, int member) {
  std::vector<KPortedStep> steps;
  int lo = 0;
  int hi = size;
  for (int step = 0; hi - lo > 1; ++step) {
    const RangeSplit split{lo, hi - lo, std::min(ports + 1, hi - lo)};
    const int root_part = split.part_of(root);
    const int my_part = split.part_of(member);
    KPortedStep here{step, root, {}};
    int port = 0;
    for (int i = 0; i < split.parts; ++i) {
      if (i == root_part) continue;
      here.targets.push_back({port++, split.start(i), split.start(i + 1)});
    }
    steps.push_back(std::move(here));
    if (my_part != root_part) root = split.start(my_part);
    lo = split.start(my_part);
    hi = split.start(my_part + 1);
  }
  return steps;
}

}  // namespace lanes::algos
