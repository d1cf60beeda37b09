// Linear (direct) scatter.
//
// Source: the flat tree, e.g. Open MPI's "basic linear" scatter (ompi/mca/coll/basic); the fully
// ported extreme of J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall
// Algorithms" (2020), with k = p - 1.
//
// Phases: one. The root copies its own block from the send buffer to the receive buffer and
// posts a send of block i straight from its send buffer to every rank i != root, all at once;
// every other rank posts one receive into its receive buffer. Every message goes over the lanes
// the root drives.
//
// Cost: one round in the fully ported model (rounds = 1, ports = p - 1: the root has p - 1 sends
// in that round): alpha + beta * b for blocks of b bytes; one-ported, as the root's sends really
// share its k lanes, (p - 1) * alpha + beta * (p - 1) * b / k at best.
//
// Applies: any p and any layout; best for small p or small blocks, where the root's p - 1
// start-ups are cheaper than the log p rounds of a tree.
#include <algorithm>
#include <string>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_scatter_linear(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "linear", true);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int rank = args.rank;
  const int root = args.root;
  const Region own{Buffer::recv, 0, b};
  if (p > 1) {
    s.rounds = 1;
    s.ports = p - 1;
  }
  if (rank != root) {
    s.recv(root, layout.lanes_of[root], own, {}, 0);
    s.finalize();
    return s;
  }
  s.ops.reserve(static_cast<std::size_t>(p));
  s.copy({Buffer::send, static_cast<std::size_t>(root) * b, b}, own);
  for (int d = 1; d < p; ++d) {
    const int to = (root + d) % p;
    s.send(to, layout.lanes_of[root], {Buffer::send, static_cast<std::size_t>(to) * b, b}, {}, 0);
  }
  s.finalize();
  return s;
}

// Cost: the root's sends start one after another: n - 1 on the node, and p - n off it, which
// share the lanes the root drives; the two kinds overlap.
double cost_scatter_linear(const CostInput& in, const MachineParams& m) {
  const auto b = static_cast<double>(in.bytes);
  const double on = static_cast<double>(in.ppn - 1) * shm_time(b, m);
  const long long remote = in.p() - in.ppn;
  if (remote == 0) return on;
  const double off = static_cast<double>(remote - 1) * m.alpha_rail +
                     rail_time(static_cast<double>(remote) * b, 1.0, in, m);
  return std::max(on, off);
}

const Algorithm algorithm_scatter_linear{
    "linear",
    Collective::scatter,
    build_scatter_linear,
    nullptr,
    "the root sends every block directly, all posted at once; one round",
    cost_scatter_linear};

}  // namespace lanes::algos
