// Linear (direct) gather.
//
// Source: the flat tree, e.g. Open MPI's "basic linear" gather (ompi/mca/coll/basic).
//
// Phases: one. Every rank but the root sends its block straight from its send buffer to the
// root, which receives block r into its receive buffer at r * block bytes, all receives posted
// at once; the root copies its own block. Every message goes over the lanes its sender drives.
//
// Cost: one round in the fully ported model (rounds = 1, ports = p - 1: the root has p - 1
// receives in that round): alpha + beta * b for blocks of b bytes; with the root's receives
// sharing its k lanes, (p - 1) * alpha + beta * (p - 1) * b / k at best.
//
// Applies: any p and any layout; best for small p or small blocks.
#include <algorithm>
#include <string>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_gather_linear(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "linear", true);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int rank = args.rank;
  const int root = args.root;
  const Region mine{Buffer::send, 0, b};
  if (p > 1) {
    s.rounds = 1;
    s.ports = p - 1;
  }
  if (rank != root) {
    s.send(root, layout.lanes_of[rank], mine, {}, 0);
    s.finalize();
    return s;
  }
  s.ops.reserve(static_cast<std::size_t>(p));
  s.copy(mine, {Buffer::recv, static_cast<std::size_t>(root) * b, b});
  for (int d = 1; d < p; ++d) {
    const int from = (root + d) % p;
    s.recv(from, layout.lanes_of[from], {Buffer::recv, static_cast<std::size_t>(from) * b, b}, {},
           0);
  }
  s.finalize();
  return s;
}

// Cost: the root's receives start one after another: n - 1 on the node, and p - n off it, spread
// over its k lanes (min(k, p - n) flows) that share its rails; the two kinds overlap.
double cost_gather_linear(const CostInput& in, const MachineParams& m) {
  const auto b = static_cast<double>(in.bytes);
  const double on = static_cast<double>(in.ppn - 1) * shm_time(b, m);
  const long long remote = in.p() - in.ppn;
  if (remote == 0) return on;
  const auto flows =
      static_cast<double>(std::min(static_cast<long long>(std::max(1, in.lanes)), remote));
  const double off = static_cast<double>(remote - 1) * m.alpha_rail +
                     rail_time(static_cast<double>(remote) * b / flows, flows, in, m);
  return std::max(on, off);
}

const Algorithm algorithm_gather_linear{
    "linear",
    Collective::gather,
    build_gather_linear,
    nullptr,
    "every rank sends its block directly to the root; one round",
    cost_gather_linear};

}  // namespace lanes::algos
