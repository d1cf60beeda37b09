// k-ported divide-and-conquer broadcast.
//
// Source: J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms" (2020):
// the straightforward divide-and-conquer k-ported broadcast.
//
// Phases: every rank follows the same recursion. A range [s, e) of ranks with local root r
// (initially [0, p) and the root) is split into min(k + 1, e - s) subranges whose sizes differ
// by at most one. In one round r sends the whole message to the first rank of each subrange
// that does not contain r (at most k concurrent sends; the j-th of them is port j, and every
// send goes over the lanes its sender drives); that rank becomes the local root of its subrange,
// and r stays the local root of its own. Every rank continues with the subrange it belongs to until
// its range is itself. Each rank receives once; the sends of one port are chained, so at most k
// sends of a rank are in flight.
//
// Cost: ceil(log_{k+1} p) * (alpha + beta * m) for m bytes with k = num_lanes ports.
//
// Applies: any p, any layout; ports = k = num_lanes. Round-optimal for k ports; every round
// moves the whole message, so it suits small messages.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/kported_split.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_bcast_kported(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "kported", true);
  const int p = layout.size;
  const int k = layout.num_lanes;
  Schedule s;
  if (p == 1 || args.bytes == 0) return s;
  s.rounds = ceil_log(p, k + 1);
  s.ports = k;
  const int me = args.rank;
  const Region data{Buffer::recv, 0, args.bytes};

  std::optional<OpId> got;                                             // the receive of the data
  std::vector<std::optional<OpId>> last(static_cast<std::size_t>(k));  // last send per port
  for (const KPortedStep& step : kported_steps(p, k, args.root, me)) {
    for (const KPortedTarget& target : step.targets) {
      if (me == step.root) {
        std::vector<OpId> deps;
        if (got) deps.push_back(*got);
        if (last[target.port]) deps.push_back(*last[target.port]);
        last[target.port] = s.send(target.first, layout.lanes_of[me], data, deps, step.step);
      } else if (me == target.first) {
        got = s.recv(step.root, layout.lanes_of[step.root], data, {}, step.step);
      }
    }
  }
  s.finalize();
  return s;
}

// Cost: round t splits ranges of len_t ranks (len_0 = p, len_{t+1} = ceil(len_t / (k + 1))) and
// sends the whole message to min(k, len_t - 1) ranks at once; while a range spans more than a node
// (len_t > n) the round leaves the node, one local root per node sending those copies over the
// lanes it drives.
double cost_bcast_kported(const CostInput& in, const MachineParams& m) {
  const long long ports = std::max(1, in.lanes);
  const auto c = static_cast<double>(in.bytes);
  double t = 0;
  for (long long len = in.p(); len > 1; len = (len + ports) / (ports + 1)) {
    const auto copies = static_cast<double>(std::min(ports, len - 1));
    t += in.nodes > 1 && len > in.ppn ? rail_time(copies * c, 1.0, in, m) : shm_time(c, m);
  }
  return t;
}

const Algorithm algorithm_bcast_kported{
    "kported",
    Collective::bcast,
    build_bcast_kported,
    nullptr,
    "k-ported divide and conquer, k = lanes concurrent sends, ceil(log_{k+1} p) rounds",
    cost_bcast_kported};

}  // namespace lanes::algos
