// k-ported divide-and-conquer scatter.
//
// Source: J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms" (2020):
// the straightforward divide-and-conquer k-ported scatter.
//
// Phases: every rank follows the same recursion over absolute ranks. A range [s, e) with local
// root r (initially [0, p) and the root) is split into min(k + 1, e - s) subranges whose sizes
// differ by at most one. In one round r sends the blocks of each subrange that does not contain
// r to that subrange's first rank (at most k concurrent sends; the j-th of them is port j, and
// every send goes over the lanes its sender drives); that rank becomes the local root of its
// subrange, and r stays the local root of its own. Every rank continues with the subrange it
// belongs to until its range is itself. Ranges are absolute, so the blocks of a subrange are
// contiguous in the root's send buffer (no range wraps around the root). A local root other than
// the root receives its range's blocks once, into scratch (in rank order) when the range holds more
// than itself, and copies its own block out; a rank whose range is only itself receives straight
// into its receive buffer. The sends of one port are chained, so at most k sends of a rank are in
// flight.
//
// Cost: ceil(log_{k+1} p) * alpha + beta * m * (p - 1) / (p * k) at best for m = p * block
// bytes with k = num_lanes ports (the root sends every block but its own exactly once, k at a
// time).
//
// Applies: any p, any layout; ports = k = num_lanes. Round-optimal and volume-optimal for k
// ports.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/kported_split.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_scatter_kported(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "kported", true);
  const int p = layout.size;
  const int k = layout.num_lanes;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int me = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region own{Buffer::recv, 0, b};
  if (p == 1) {
    s.copy({Buffer::send, 0, b}, own);
    s.finalize();
    return s;
  }
  s.rounds = ceil_log(p, k + 1);
  s.ports = k;

  // Where this rank holds the blocks of its range once it is a local root: the root in its send
  // buffer (block x at x * b), others in scratch from the first rank of the range they received.
  Buffer held = Buffer::send;
  int held_lo = 0;
  std::optional<OpId> got;                                             // the receive
  std::vector<std::optional<OpId>> last(static_cast<std::size_t>(k));  // last send per port
  if (me == args.root) s.copy({Buffer::send, blocks(me), b}, own);
  for (const KPortedStep& step : kported_steps(p, k, args.root, me)) {
    const int root = step.root;
    const LaneSet lanes = layout.lanes_of[root];
    for (const KPortedTarget& target : step.targets) {
      const int first = target.first;
      const int n = target.size();
      if (me == root) {
        std::vector<OpId> deps;
        if (got) deps.push_back(*got);
        if (last[target.port]) deps.push_back(*last[target.port]);
        last[target.port] =
            s.send(first, lanes, {held, blocks(first - held_lo), blocks(n)}, deps, step.step);
      } else if (me == first) {
        if (n == 1) {
          s.recv(root, lanes, own, {}, step.step);
        } else {
          s.scratch_bytes = blocks(n);
          held = Buffer::scratch;
          held_lo = first;
          got = s.recv(root, lanes, {Buffer::scratch, 0, blocks(n)}, {}, step.step);
          s.copy({Buffer::scratch, 0, b}, own, {*got});
        }
      }
    }
  }
  s.finalize();
  return s;
}

// Cost: round t splits ranges of len_t ranks (len_0 = p) into k + 1 subranges, keeps the first
// and largest (len_{t+1} = ceil(len_t / (k + 1))) and sends the blocks of the others, k messages
// at once; while a range spans more than a node (len_t > n) the round leaves the node, one local
// root per node sending all of them over the lanes it drives. On the node, the largest message
// sets the round.
double cost_scatter_kported(const CostInput& in, const MachineParams& m) {
  const long long ports = std::max(1, in.lanes);
  const auto b = static_cast<double>(in.bytes);
  double t = 0;
  for (long long len = in.p(); len > 1; len = (len + ports) / (ports + 1)) {
    const long long kept = (len + ports) / (ports + 1);
    // The second subrange, the largest one sent.
    const long long sent = len / (ports + 1) + (len % (ports + 1) > 1 ? 1 : 0);
    t += in.nodes > 1 && len > in.ppn ? rail_time(static_cast<double>(len - kept) * b, 1.0, in, m)
                                      : shm_time(static_cast<double>(sent) * b, m);
  }
  return t;
}

const Algorithm algorithm_scatter_kported{
    "kported",
    Collective::scatter,
    build_scatter_kported,
    nullptr,
    "k-ported divide and conquer over k + 1 subranges; ceil(log_{k+1} p) rounds",
    cost_scatter_kported};

}  // namespace lanes::algos
