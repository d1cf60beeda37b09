// Dissemination barrier.
//
// Source: D. Hensgen, R. Finkel, U. Manber, "Two algorithms for barrier synchronization",
// International Journal of Parallel Programming 17(1), 1988; the barrier of MPICH (R. Thakur,
// R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005).
//
// Phases: ceil(log2 p) rounds; in round j rank r sends a one-byte token to (r + 2^j) mod p and
// receives one from (r - 2^j) mod p, and starts round j + 1 once both are done. After round j a
// rank has heard, through chains of tokens, from the 2^(j+1) ranks before it, so after the last
// round from every rank: none leaves before all arrived (the simulator checks exactly that).
//
// Cost: ceil(log2 p) (alpha + beta) with one byte per message. On more than one node every round
// has a token that crosses nodes (the last rank of a node signals a rank d further on, on the
// next node), and the next round waits for it: each round costs an off-node message.
//
// Applies: any p and any layout.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_barrier_dissemination(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "dissemination", false);
  const int p = layout.size;
  const int r = args.rank;
  Schedule s;
  s.rounds = ceil_log2(p);
  s.ports = 1;
  s.scratch_bytes = 1 + static_cast<std::size_t>(s.rounds);
  const Region token{Buffer::scratch, 0, 1};
  std::vector<OpId> last;
  for (int j = 0; j < s.rounds; ++j) {
    const int to = (r + (1 << j)) % p;
    const int from = ((r - (1 << j)) % p + p) % p;
    const OpId out = s.send(to, layout.lanes_of[r], token, last, j);
    const Region in{Buffer::scratch, 1 + static_cast<std::size_t>(j), 1};
    const OpId got = s.recv(from, layout.lanes_of[from], in, last, j);
    last = {out, got};
  }
  s.finalize();
  return s;
}

double cost_barrier_dissemination(const CostInput& in, const MachineParams& m) {
  double t = 0;
  for (long long d = 1; d < in.p(); d *= 2) t += hop_time(1, in.nodes > 1, in, m);
  return t;
}

const Algorithm algorithm_barrier_dissemination{
    "dissemination",
    Collective::barrier,
    build_barrier_dissemination,
    nullptr,
    "ceil(log2 p) rounds, rank r signals r + 2^j and waits for r - 2^j",
    cost_barrier_dissemination};

}  // namespace lanes::algos
