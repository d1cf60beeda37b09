// Binomial-tree gather.
//
// Source: the classic binomial tree, as in MPICH's MPIR_Gather_intra_binomial (R. Thakur,
// R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1), 2005); the mirror image of the binomial scatter.
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p; the subtree of
// vr != 0 is [vr, vr + min(lowbit(vr), p - vr)), the root's is everything. A rank receives from
// each child vr + 2^j (2^j < lowbit(vr), smallest subtree first, one after the other) that
// child's subtree blocks, then sends its whole subtree's blocks to vr - lowbit(vr). Intermediate
// ranks collect their subtree in scratch in relative-rank order (their own block copied in
// first); leaves send straight from the send buffer; the root receives straight into its
// receive buffer and copies its own block. A subtree whose ranks wrap past p - 1 is not
// contiguous in the root's receive buffer and goes to it as two messages.
//
// Cost: ceil(log2 p) * alpha + beta * m * (p - 1) / p for m = p * block bytes (the root receives
// every block but its own exactly once; when p is a power of two, round i brings it the 2^i
// blocks of its child vr = 2^i, so the largest subtree comes last).
//
// Applies: any p and any layout. Round- and volume-optimal in the one-ported model; uses only
// each sender's default lane.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_gather_binomial(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "binomial", true);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int rank = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region mine{Buffer::send, 0, b};
  if (p == 1) {
    s.copy(mine, {Buffer::recv, 0, b});
    s.finalize();
    return s;
  }
  const int rounds = ceil_log2(p);
  s.rounds = rounds;
  const int vr = (rank - args.root + p) % p;
  const auto actual = [&](int v) { return (v + args.root) % p; };
  // A sender alone off its node in its round uses all of the node's lanes (round_lanes): in the
  // round of `mask` the ranks v with lowbit(v) = mask send to v - mask.
  const auto lanes_at = [&](int sender, int mask) {
    return round_lanes(layout, sender, [&](int x) {
      const int v = (x - args.root + p) % p;
      return v != 0 && (v & -v) == mask && !layout.same_node(x, actual(v - mask));
    });
  };

  if (vr == 0) {
    s.copy(mine, {Buffer::recv, blocks(rank), b});
    std::optional<OpId> last;  // receives are taken one after the other
    for (int mask = 1; mask < p; mask <<= 1) {
      const int child = actual(mask);
      const int n = std::min(mask, p - mask);
      const int first = std::min(n, p - child);
      const LaneSet lane = lanes_at(child, mask);
      const int round = floor_log2(mask);
      std::vector<OpId> deps;
      if (last) deps.push_back(*last);
      last = s.recv(child, lane, {Buffer::recv, blocks(child), blocks(first)}, deps, round);
      if (first < n) {
        last = s.recv(child, lane, {Buffer::recv, 0, blocks(n - first)}, {*last}, round);
      }
    }
    s.finalize();
    return s;
  }

  const int low = vr & -vr;
  const int n = std::min(low, p - vr);
  const int parent = actual(vr - low);
  const LaneSet my_lane = lanes_at(rank, low);
  const int round = floor_log2(low);
  if (n == 1) {
    s.send(parent, my_lane, mine, {}, round);
    s.finalize();
    return s;
  }
  s.scratch_bytes = blocks(n);
  std::vector<OpId> have = {s.copy(mine, {Buffer::scratch, 0, b})};
  std::optional<OpId> last;
  for (int mask = 1; mask < low; mask <<= 1) {
    const int c = vr + mask;
    if (c >= p) break;
    const int child = actual(c);
    std::vector<OpId> deps;
    if (last) deps.push_back(*last);
    last = s.recv(child, lanes_at(child, mask),
                  {Buffer::scratch, blocks(mask), blocks(std::min(mask, p - c))}, deps,
                  floor_log2(mask));
    have.push_back(*last);
  }
  // To the root, the part up to the end of its receive buffer goes first, the rest second.
  int first = n;
  if (vr - low == 0) first = std::min(n, p - rank);
  const OpId sent = s.send(parent, my_lane, {Buffer::scratch, 0, blocks(first)}, have, round);
  if (first < n) {
    s.send(parent, my_lane, {Buffer::scratch, blocks(first), blocks(n - first)}, {sent}, round);
  }
  s.finalize();
  return s;
}

// Cost: the root's child 2^j ranks away brings min(2^j, p - 2^j) blocks; partners n or more ranks
// apart are on different nodes, and in those rounds one rank per node sends (one flow).
double cost_gather_binomial(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  const auto b = static_cast<double>(in.bytes);
  double t = 0;
  for (long long dist = 1; dist < p; dist *= 2) {
    const double bytes = static_cast<double>(std::min(dist, p - dist)) * b;
    t += in.nodes > 1 && dist >= in.ppn ? rail_time(bytes, 1.0, in, m) : shm_time(bytes, m);
  }
  return t;
}

}  // namespace lanes::algos
