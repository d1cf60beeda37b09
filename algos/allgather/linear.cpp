// Linear (direct) allgather, used internally to exchange small records.
//
// Source: the direct all-to-all exchange pattern, e.g. the "linear" algorithms in MPICH and Open
// MPI's basic collectives.
//
// Phases: the own block is copied from the send buffer to its place in the receive buffer; the
// own block is sent to every other rank and every other rank's block received, all posted at
// once. The i-th message out goes to (r+i) mod p and the i-th in comes from (r-i) mod p, so that
// a one-ported reading (round i - 1) has every rank sending to and receiving from one peer.
//
// Cost: one round in the fully ported model; (p - 1) * (alpha + beta * m) for blocks of m bytes
// in the one-ported model.
//
// Applies: any p and any layout; meant for small blocks (p - 1 messages per rank).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allgather_linear(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "linear", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto block = [b](int j) { return static_cast<std::size_t>(j) * b; };
  s.ops.reserve(2 * static_cast<std::size_t>(p) - 1);
  const Region mine{Buffer::send, 0, b};
  s.copy(mine, {Buffer::recv, block(r), b});
  for (int i = 1; i < p; ++i) {
    const int to = (r + i) % p;
    const int from = (r - i + p) % p;
    s.send(to, layout.lanes_of[r], mine, {}, i - 1);
    s.recv(from, layout.lanes_of[from], {Buffer::recv, block(from), b}, {}, i - 1);
  }
  s.rounds = p - 1;
  s.finalize();
  return s;
}

// Cost: everything is posted at once: n - 1 on-node copies by this process overlap with the
// node's n * (p - n) blocks leaving over the rails.
double cost_allgather_linear(const CostInput& in, const MachineParams& m) {
  const auto c = static_cast<double>(in.bytes);
  const auto p = static_cast<double>(in.p());
  const auto n = static_cast<double>(in.ppn);
  const double off = in.nodes > 1 ? rail_time(c * (p - n), n, in, m) : 0.0;
  return std::max((n - 1) * shm_time(c, m), off);
}

const Algorithm algorithm_allgather_linear{
    "linear",
    Collective::allgather,
    build_allgather_linear,
    nullptr,
    "direct exchange with every rank, all messages posted at once",
    cost_allgather_linear};

}  // namespace lanes::algos
