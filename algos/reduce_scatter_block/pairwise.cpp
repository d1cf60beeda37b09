// Pairwise (direct) reduce-scatter (reduce_scatter_block).
//
// Source: the pairwise-exchange reduce-scatter of MPICH (R. Thakur, R. Rabenseifner, W. Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, section
// 4.5), with all exchanges posted at once.
//
// Phases: rank r sends block j of its input to rank j for every j != r, and receives block r of
// every other rank's input into its own scratch slot, all in one round; it then combines the p
// contributions in rank order (rank 0's on the left) into its receive buffer.
//
// Cost: one round of p - 1 messages of m bytes each way, alpha + (p - 1) beta m when the sends
// overlap, plus (p - 1) gamma m; the fewest start-ups on the critical path, for small blocks.
//
// Order: rank order on every layout.
//
// Applies: any p and any layout.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_scatter_block_pairwise(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "pairwise", false);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const auto block = [m](int j) { return static_cast<std::size_t>(j) * m; };
  s.rounds = p > 1 ? 1 : 0;
  s.scratch_bytes = block(p);
  std::vector<OpId> have(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) {
    const Region slot{Buffer::scratch, block(j), m};
    if (j == r) {
      have[j] = s.copy({Buffer::send, block(r), m}, slot);
      continue;
    }
    s.send(j, layout.lanes_of[r], {Buffer::send, block(j), m}, {}, 0);
    have[j] = s.recv(j, layout.lanes_of[j], slot, {}, 0);
  }
  const Region result{Buffer::recv, 0, m};
  OpId last = s.copy({Buffer::scratch, 0, m}, result, {have[0]});
  for (int j = 1; j < p; ++j)
    last = s.combine({Buffer::scratch, block(j), m}, result, {last, have[j]});
  s.finalize();
  return s;
}

double cost_reduce_scatter_block_pairwise(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const auto b = static_cast<double>(in.bytes);
  const double others = static_cast<double>(p - 1);
  const double off = in.nodes > 1 ? static_cast<double>(p - in.ppn) : 0;
  // The off-node blocks share the node's lanes with every local rank's; on-node ones are copies.
  const double wire =
      off > 0 ? rail_time(m.overlapping(off) * b, static_cast<double>(in.ppn), in, m) : 0;
  const double local = static_cast<double>(in.ppn - 1) * shm_time(b, m);
  return std::max(wire, local) + others * combine_time(b, m);
}

const Algorithm algorithm_reduce_scatter_block_pairwise{
    "pairwise",
    Collective::reduce_scatter_block,
    build_reduce_scatter_block_pairwise,
    nullptr,
    "every block straight to its owner, all at once; combined in rank order",
    cost_reduce_scatter_block_pairwise,
    rank_order_always};

}  // namespace lanes::algos
