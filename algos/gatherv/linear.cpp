// Linear (direct) gatherv.
//
// Source: the flat tree of MPICH's MPIR_Gatherv_allcomm_linear and Open MPI's basic linear
// gatherv; the mirror image of the linear scatterv.
//
// Phases: one. The root copies its own block from the send buffer to its displacement in the
// receive buffer and posts a receive of block i straight into its displacement from every rank
// i != root, all at once; every other rank sends its block from its send buffer. Empty blocks
// travel as empty messages, so that a size that disagrees with the root's fails as a mismatch
// instead of leaving a rank waiting. Every message goes over the lanes its sender drives.
//
// Cost: one round in the fully ported model: alpha + beta * max_i m_i; one-ported at the root,
// (p - 1) * alpha + beta * sum_{i != root} m_i / k at best for the root's k lanes.
//
// Applies: any p and any layout. Local: a rank other than the root needs only its own size.
#include "algos/common.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule build_gatherv_linear(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "linear");
  const int p = layout.size;
  const int root = args.root;
  const int rank = args.rank;
  Schedule s;
  const Block own = args.blocks[static_cast<std::size_t>(rank)];
  if (p > 1) s.rounds = 1;
  if (rank != root) {
    s.send(root, layout.lanes_of[rank], {Buffer::send, 0, own.bytes});
    s.finalize();
    return s;
  }
  if (own.bytes > 0) s.copy({Buffer::send, 0, own.bytes}, {Buffer::recv, own.offset, own.bytes});
  for (int step = 1; step < p; ++step) {
    const int from = (root + step) % p;
    const Block b = args.blocks[static_cast<std::size_t>(from)];
    s.recv(from, layout.lanes_of[from], {Buffer::recv, b.bytes > 0 ? b.offset : 0, b.bytes});
  }
  s.finalize();
  return s;
}

const VAlgorithm valgorithm_gatherv_linear{
    "linear", VCollective::gatherv, build_gatherv_linear, true,
    "every rank sends its block to the root directly; one round"};

}  // namespace lanes::algos
