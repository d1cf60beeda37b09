// Linear (direct) allgatherv.
//
// Source: the flat exchange of Open MPI's basic linear allgatherv (every rank's block sent to
// every other rank directly); the fully ported extreme of J. L. Traeff, "k-ported vs. k-lane
// Broadcast, Scatter, and Alltoall Algorithms" (2020), with k = p - 1, as allgather/linear.cpp.
//
// Phases: one. Every rank copies its own block from the send buffer to its displacement in the
// receive buffer, posts a send of it to every other rank and a receive of every other rank's
// block straight into its displacement, all at once, in the order r + 1, r + 2, ... so that the
// ranks do not all start on rank 0. Empty blocks travel as empty messages, so that ranks whose
// sizes disagree fail with a mismatch instead of waiting.
//
// Cost: one round in the fully ported model; one-ported, (p - 1) * alpha + beta * (p - 1) * m_r
// out and beta * sum_{i != r} m_i in, for rank r, over its lanes.
//
// Applies: any p and any layout; for small p or small blocks. Not local.
#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule build_allgatherv_linear(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "linear");
  const int p = layout.size;
  const int r = args.rank;
  Schedule s;
  const Block own = args.blocks[static_cast<std::size_t>(r)];
  if (own.bytes > 0) s.copy({Buffer::send, 0, own.bytes}, {Buffer::recv, own.offset, own.bytes});
  for (int step = 1; step < p; ++step) {
    const int to = (r + step) % p;
    const int from = (r - step + p) % p;
    s.send(to, layout.lanes_of[r], {Buffer::send, 0, own.bytes});
    const Block in = args.blocks[static_cast<std::size_t>(from)];
    s.recv(from, layout.lanes_of[from], {Buffer::recv, in.bytes > 0 ? in.offset : 0, in.bytes});
  }
  if (p > 1) s.rounds = 1;
  s.finalize();
  return s;
}

const VAlgorithm valgorithm_allgatherv_linear{
    "linear", VCollective::allgatherv, build_allgatherv_linear, false,
    "every rank sends its block to every other rank directly; one round"};

}  // namespace lanes::algos
