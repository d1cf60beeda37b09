#include "algos/reduce/tree.hpp"

#include <algorithm>
#include <vector>

#include "algos/common.hpp"

namespace lanes::algos {

namespace {

constexpr std::size_t kSegmentBytes = 64 * 1024;
constexpr std::size_t kMostSegments = 64;

}  // namespace

int reduce_segments(std::size_t bytes, std::size_t elem) {
  if (bytes == 0) return 0;
  const std::size_t most = std::min(kMostSegments, std::max<std::size_t>(1, bytes / elem));
  return static_cast<int>(
      std::clamp<std::size_t>((bytes + kSegmentBytes - 1) / kSegmentBytes, 1, most));
}

int binary_tree_rounds(long long p, int segments) {
  if (p <= 1) return 0;
  int height = 0;
  while ((2LL << height) <= p) ++height;
  return 2 * (segments - 1) + 2 * (height - 1) + (p >= 3 ? 2 : 1);
}

std::vector<OpId> reduce_up_tree(Schedule& s, const Layout& layout, int rank, std::size_t bytes,
                                 std::size_t elem, int segments, int step, const TreeLinks& links,
                                 Region out, std::size_t scratch_at) {
  const bool root = links.parent < 0;
  const std::size_t kids = links.children.size();
  if (kids > 0) s.scratch_bytes = std::max(s.scratch_bytes, scratch_at + kids * bytes);
  const LaneSet lanes = layout.lanes_of[static_cast<std::size_t>(rank)];
  std::vector<OpId> done;
  done.reserve(static_cast<std::size_t>(segments));
  for (int j = 0; j < segments; ++j) {
    const VectorPart part = vector_part(bytes, elem, segments, j);
    const Region own{Buffer::send, part.offset, part.bytes};
    const auto slot = [&](std::size_t c) {
      return Region{Buffer::scratch, scratch_at + c * bytes + part.offset, part.bytes};
    };
    std::vector<OpId> got;
    for (std::size_t c = 0; c < kids; ++c) {
      const TreeLinks::Child& child = links.children[c];
      got.push_back(s.recv(child.rank, layout.lanes_of[static_cast<std::size_t>(child.rank)],
                           slot(c), {}, step * j + child.base));
    }
    if (root) {
      const Region result{out.buffer, out.offset + part.offset, part.bytes};
      // The first child's partial lands on the right of the root's own contribution.
      OpId last = kids > 0 ? s.combine_into(own, slot(0), result, {got[0]}) : s.copy(own, result);
      for (std::size_t c = 1; c < kids; ++c) last = s.combine(slot(c), result, {last, got[c]});
      done.push_back(last);
      continue;
    }
    if (kids == 0) {
      done.push_back(s.send(links.parent, lanes, own, {}, step * j + links.base));
      continue;
    }
    // The partial builds up in the first child's slot: own contribution on its left.
    OpId last = s.combine(own, slot(0), {got[0]}, true);
    for (std::size_t c = 1; c < kids; ++c) last = s.combine(slot(c), slot(0), {last, got[c]});
    done.push_back(s.send(links.parent, lanes, slot(0), {last}, step * j + links.base));
  }
  return done;
}

}  // namespace lanes::algos
