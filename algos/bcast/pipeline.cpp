// Lane-pipelined broadcast: the message cut into one part per lane, each part pipelined in
// segments along a chain of the nodes on its own lane, and handed out on every node as it passes.
//
// Source: J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms" (2020),
// section on k-lane broadcast: "the k lanes of each node are used to pipeline k disjoint blocks
// of the message through a linear array of the N nodes", which reaches c / (k R) (1 + (N - 2) / S)
// for S segments; the same construction as the full-lane broadcast with the binomial tree over
// nodes replaced by a pipelined chain.
//
// Phases: nodes are numbered along the chain relative to the root's node, u = (node - root's
// node) mod N. The message of c bytes is cut into one part per lane in proportion to the lanes'
// weights (boundaries on 64 bytes), over k' = min(k, max(1, c / 32 KiB)) lanes so that no part
// is smaller than 32 KiB (a small message is one part on lane 0), part l into S_l segments of
// about 64 KiB (at most 64 and at most 2048 / k, so that no pair exchanges more messages than a
// tag numbers). On every node the
// carrier of lane l is the rank that drives it (the root, on its node, for the lanes it drives).
//  1. The root hands each segment of a part it does not carry to that part's carrier on its node
//     (shared memory), segment j in round j.
//  2. The carrier of lane l on node u receives segment j from the carrier on node u - 1 over
//     lane l (on the root's node: holds it or gets it from the root), then forwards it over
//     lane l to the carrier on node u + 1 and to every other rank of node u but the root
//     (shared memory), all in round j + u + 1. Forwards wait only for that segment.
// Rounds: S + N for S = the largest S_l; segment j of every lane leaves node u in round j + u + 1.
//
// Cost: every hop moves one segment of every lane at once, so a step takes (c / S) / B for the
// node's combined lane rate B, and the last segment reaches node N - 1 after S + N - 2 steps:
// c / B (1 + (N - 2) / S) between nodes, which is c / (k R) (1 + (N - 2) / S) for k lanes of
// rate R, plus one start-up alpha per hop along the chain (the segments behind the first are
// sent while it travels, so their start-ups overlap). On a node a carrier copies each segment to
// the n - 1 other ranks; when that is slower than the wire it sets the step.
//
// Applies: any p and any layout (irregular ones too; the carriers are per node). For large
// messages on several nodes, where it approaches the link bound c / (k R) that the tree-based
// broadcasts miss by a factor of ceil(log2 N).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "algos/bcast/message_blocks.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

namespace {

constexpr std::size_t kSegmentBytes = 64 * 1024;
constexpr std::size_t kMinPart = 32 * 1024;
constexpr std::size_t kPartAlign = 64;

// Lanes that carry a part of a message of `bytes`.
int lanes_used(std::size_t bytes, int lanes) {
  return static_cast<int>(
      std::clamp<std::size_t>(bytes / kMinPart, 1, static_cast<std::size_t>(lanes)));
}

// Segments of a lane part of `bytes` with k lanes.
int segments_of(std::size_t bytes, int lanes) {
  if (bytes == 0) return 0;
  const std::size_t most = std::max<std::size_t>(1, std::min<std::size_t>(64, 2048 / lanes));
  return static_cast<int>(
      std::clamp<std::size_t>((bytes + kSegmentBytes - 1) / kSegmentBytes, 1, most));
}

// [begin, end) of lane l's part of `bytes`, cut in proportion to the lane weights.
struct Part {
  std::size_t begin = 0;
  std::size_t bytes = 0;
};

Part lane_part(const Layout& layout, std::size_t bytes, int lane) {
  const int used = lanes_used(bytes, layout.num_lanes);
  if (lane >= used) return {bytes, 0};
  std::uint64_t total = 0, before = 0;
  for (int l = 0; l < used; ++l) {
    total += layout.lane_weight(l);
    if (l < lane) before += layout.lane_weight(l);
  }
  const auto boundary = [&](std::uint64_t w) -> std::size_t {
    if (w >= total) return bytes;
    const std::uint64_t exact = bytes / total * w + bytes % total * w / total;
    return static_cast<std::size_t>(exact / kPartAlign * kPartAlign);
  };
  const std::size_t lo = boundary(before);
  return {lo, boundary(before + layout.lane_weight(lane)) - lo};
}

}  // namespace

Schedule build_bcast_pipeline(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "pipeline", true);
  const int p = layout.size;
  const std::size_t c = args.bytes;
  Schedule s;
  if (p == 1 || c == 0) return s;
  const int k = layout.num_lanes;
  const int num_nodes = layout.num_nodes();
  const int root = args.root;
  const int root_node = layout.node_of[root];
  const int me = args.rank;
  const int node = layout.node_of[me];
  const int u = (node - root_node + num_nodes) % num_nodes;
  const int next_node = (node + 1) % num_nodes;
  const int prev_node = (node - 1 + num_nodes) % num_nodes;
  const auto carrier = [&](int x, int lane) {
    if (x == root_node && layout.lanes_of[root].contains(lane)) return root;
    return layout.driver_of(x, lane);
  };
  const std::vector<int>& mates = layout.node_ranks[node];

  int most_segments = 0;
  for (int lane = 0; lane < k; ++lane) {
    most_segments = std::max(most_segments, segments_of(lane_part(layout, c, lane).bytes, k));
  }
  s.rounds = most_segments + num_nodes;

  for (int lane = 0; lane < k; ++lane) {
    const Part part = lane_part(layout, c, lane);
    const int segs = segments_of(part.bytes, k);
    const int here = carrier(node, lane);
    for (int j = 0; j < segs; ++j) {
      const std::size_t lo = part.begin + block_offset(part.bytes, segs, j);
      const std::size_t hi = part.begin + block_offset(part.bytes, segs, j + 1);
      const Region seg{Buffer::recv, lo, hi - lo};
      const int round = j + u + 1;
      // Where this rank gets segment j.
      std::optional<OpId> got;
      if (me == root) {
        if (here != root) s.send(here, layout.lanes_of[root], seg, {}, j);
      } else if (me == here) {
        got = u == 0 ? s.recv(root, layout.lanes_of[root], seg, {}, j)
                     : s.recv(carrier(prev_node, lane), LaneSet::one(lane), seg, {}, round - 1);
      } else {
        s.recv(here, layout.lanes_of[here], seg, {}, u == 0 && here == root ? j : round);
      }
      if (me != here) continue;
      // The carrier forwards it: along the chain first, then to its node.
      std::vector<OpId> after;
      if (got) after.push_back(*got);
      if (u + 1 < num_nodes)
        s.send(carrier(next_node, lane), LaneSet::one(lane), seg, after, round);
      for (const int mate : mates) {
        if (mate == me || mate == root) continue;
        s.send(mate, layout.lanes_of[me], seg, after, u == 0 && me == root ? j : round);
      }
    }
  }
  s.finalize();
  return s;
}

// Cost: S + N - 2 steps of one segment of every lane between nodes (the k lane flows of a node
// share its rails), each at least as long as a carrier's copies of a segment to the other n - 1
// ranks of its node, with one start-up per hop; one on-node hop before the chain and one after
// it.
double cost_bcast_pipeline(const CostInput& in, const MachineParams& m) {
  const double c = static_cast<double>(in.bytes);
  const int k = lanes_used(in.bytes, std::max(1, in.lanes));
  const double part = c / k;
  const int segs = std::max(1, segments_of(static_cast<std::size_t>(part), k));
  const double seg = part / segs;
  const double local = static_cast<double>(in.ppn - 1) * shm_time(seg, m);
  if (in.p() == 1) return 0;
  if (in.nodes == 1) return shm_time(seg, m) + segs * local;
  const double wire =
      rail_time(seg, static_cast<double>(k), in, m, Spread::one_lane) - m.alpha_rail;
  const double step = std::max(wire, local);
  return shm_time(seg, m) + static_cast<double>(in.nodes - 1) * m.alpha_rail +
         static_cast<double>(segs + in.nodes - 2) * step + std::max(local, shm_time(seg, m));
}

const Algorithm algorithm_bcast_pipeline{
    "pipeline",
    Collective::bcast,
    build_bcast_pipeline,
    nullptr,
    "one part per lane, pipelined in segments along a chain of the nodes on its lane",
    cost_bcast_pipeline};

}  // namespace lanes::algos
