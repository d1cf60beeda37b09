// Ring allgatherv.
//
// Source: the ring allgather of MPICH's MPIR_Allgatherv_intra_ring (R. Thakur, R. Rabenseifner,
// W. Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005),
// with blocks of per-rank sizes.
//
// Phases: the own block is copied from the send buffer to its displacement in the receive
// buffer; then in steps s = 0..p-2 rank r sends block (r - s) mod p to rank r + 1 and receives
// block (r - s - 1) mod p from rank r - 1, each straight into its displacement. A step's send
// forwards what the step before received; empty blocks travel as empty messages, so that ranks
// whose sizes disagree fail with a mismatch instead of waiting.
//
// Cost: (p - 1) * alpha + beta * (sum_i m_i - m_r) for rank r, each step as long as its largest
// block; neighbours in rank order are mostly on one node, so few blocks cross nodes at a time.
//
// Applies: any p and any layout; for large blocks. Not local (allgatherv's sizes are known to
// every rank anyway).
#include <vector>

#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule build_allgatherv_ring(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "ring");
  const int p = layout.size;
  const int r = args.rank;
  Schedule s;
  const auto block = [&](int i) { return args.blocks[static_cast<std::size_t>(i)]; };
  const Block own = block(r);
  if (own.bytes > 0) s.copy({Buffer::send, 0, own.bytes}, {Buffer::recv, own.offset, own.bytes});
  const int to = (r + 1) % p;
  const int from = (r - 1 + p) % p;
  std::vector<OpId> previous;  // the step before's send and receive (the block sent next)
  for (int step = 0; step < p - 1; ++step) {
    const Block out = block((r - step + p) % p);
    // The own block goes out from the send buffer, the others from where they arrived.
    const Region src = step == 0 ? Region{Buffer::send, 0, out.bytes}
                                 : Region{Buffer::recv, out.bytes > 0 ? out.offset : 0, out.bytes};
    const OpId sent = s.send(to, layout.lanes_of[r], src, previous, step);
    const Block in = block((r - step - 1 + 2 * p) % p);
    const OpId got = s.recv(from, layout.lanes_of[from],
                            {Buffer::recv, in.bytes > 0 ? in.offset : 0, in.bytes}, previous, step);
    previous = {sent, got};
  }
  s.rounds = p - 1;
  s.finalize();
  return s;
}

const VAlgorithm valgorithm_allgatherv_ring{
    "ring", VCollective::allgatherv, build_allgatherv_ring, false,
    "ring: each block travels around the ranks, p - 1 steps"};

}  // namespace lanes::algos
