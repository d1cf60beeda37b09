#include "algos/compose.hpp"

#include <algorithm>
#include <vector>

namespace lanes::algos {

Layout sub_layout(const Layout& whole, std::span<const int> ranks, bool lone_drives_all) {
  Layout l;
  l.size = static_cast<int>(ranks.size());
  l.num_lanes = whole.num_lanes;
  l.num_rails = whole.num_rails;
  l.first_rail = whole.first_rail;
  l.rail_numa = whole.rail_numa;
  l.rail_weights = whole.rail_weights;
  const std::size_t n = ranks.size();
  l.node_of.reserve(n);
  l.local_rank_of.reserve(n);
  l.lane_of.reserve(n);
  l.lanes_of.reserve(n);
  l.numa_of.reserve(n);
  std::vector<int> renumbered(static_cast<std::size_t>(whole.num_nodes()), -1);
  for (const int x : ranks) {
    const auto i = static_cast<std::size_t>(x);
    int& node = renumbered[static_cast<std::size_t>(whole.node_of[i])];
    if (node < 0) {
      node = l.num_nodes();
      l.node_ranks.emplace_back();
    }
    auto& mates = l.node_ranks[static_cast<std::size_t>(node)];
    l.node_of.push_back(node);
    l.local_rank_of.push_back(static_cast<int>(mates.size()));
    mates.push_back(static_cast<int>(l.node_of.size()) - 1);
    l.lane_of.push_back(whole.lane_of[i]);
    l.lanes_of.push_back(whole.lanes_of[i]);
    l.numa_of.push_back(whole.numa_of[i]);
  }
  if (lone_drives_all) {
    for (const auto& mates : l.node_ranks) {
      if (mates.size() == 1) l.lanes_of[static_cast<std::size_t>(mates[0])] = l.all_lanes();
    }
  }
  return l;
}

namespace {

Region moved(const Region& r, const BufferMap& map) {
  switch (r.buffer) {
    case Buffer::send:
      return {map.send, map.send_at + r.offset, r.bytes};
    case Buffer::recv:
      return {map.recv, map.recv_at + r.offset, r.bytes};
    case Buffer::scratch:
      break;
  }
  return {Buffer::scratch, map.scratch + r.offset, r.bytes};
}

}  // namespace

std::vector<OpId> splice(Schedule& whole, const Schedule& part, const Layout& layout,
                         const Splice& how) {
  const Layout& sub = how.layout != nullptr ? *how.layout : layout;
  const auto rank_of = [&](int x) {
    return how.ranks.empty() ? x : how.ranks[static_cast<std::size_t>(x)];
  };
  // The lanes of a transfer whose sender is sub-rank x.
  const auto lanes_for = [&](int x, LaneSet lanes) {
    const auto w = static_cast<std::size_t>(rank_of(x));
    if (!how.shared_nodes || lanes.subset_of(layout.lanes_of[w])) return lanes;
    if (sub.node_size_of(x) == layout.node_size_of(rank_of(x))) return lanes;
    return layout.lanes_of[w];
  };
  const auto offset = static_cast<OpId>(whole.ops.size());
  std::vector<bool> waited_for(part.ops.size(), false);
  for (std::size_t i = 0; i < part.ops.size(); ++i) {
    Op op = part.ops[i];
    for (OpId& d : op.deps) {
      waited_for[d] = true;
      d += offset;
    }
    if (op.deps.empty()) op.deps = how.after;
    if (op.kind == OpKind::send || op.kind == OpKind::recv) {
      op.lanes = lanes_for(op.kind == OpKind::send ? how.self : op.peer, op.lanes);
      op.peer = rank_of(op.peer);
      op.round += how.first_round;
      op.msg = 0;
    }
    if (op.kind != OpKind::recv) op.src = moved(op.src, how.buffers);
    if (op.kind != OpKind::send) op.dst = moved(op.dst, how.buffers);
    if (op.acc.bytes > 0) op.acc = moved(op.acc, how.buffers);
    whole.ops.push_back(std::move(op));
  }
  if (part.scratch_bytes > 0) {
    whole.scratch_bytes = std::max(whole.scratch_bytes, how.buffers.scratch + part.scratch_bytes);
  }
  std::vector<OpId> last;
  for (std::size_t i = 0; i < part.ops.size(); ++i) {
    if (!waited_for[i]) last.push_back(offset + static_cast<OpId>(i));
  }
  return last;
}

}  // namespace lanes::algos
