// Linear (direct) scatterv.
//
// Source: the flat tree of MPICH's MPIR_Scatterv_allcomm_linear and Open MPI's basic linear
// scatterv; the blocks of the linear scatter (scatter/linear.cpp) made of per-rank sizes and
// displacements.
//
// Phases: one. The root copies its own block from its displacement in the send buffer to the
// receive buffer and posts a send of block i straight from its displacement to every rank i !=
// root, all at once; every other rank posts one receive into its receive buffer. Empty blocks
// travel as empty messages: a rank whose size disagrees with the root's then fails with a
// mismatch instead of waiting for a message that never comes. Every message goes over the lanes
// the root drives.
//
// Cost: one round in the fully ported model: alpha + beta * max_i m_i; one-ported, as the root's
// sends share its k lanes, (p - 1) * alpha + beta * sum_{i != root} m_i / k at best.
//
// Applies: any p and any layout. Local: a rank other than the root needs only its own size.
#include "algos/common.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule build_scatterv_linear(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "linear");
  const int p = layout.size;
  const int root = args.root;
  Schedule s;
  const Block own = args.blocks[static_cast<std::size_t>(args.rank)];
  if (p > 1) s.rounds = 1;
  if (args.rank != root) {
    s.recv(root, layout.lanes_of[root], {Buffer::recv, 0, own.bytes});
    s.finalize();
    return s;
  }
  if (own.bytes > 0) s.copy({Buffer::send, own.offset, own.bytes}, {Buffer::recv, 0, own.bytes});
  for (int step = 1; step < p; ++step) {
    const int to = (root + step) % p;
    const Block b = args.blocks[static_cast<std::size_t>(to)];
    s.send(to, layout.lanes_of[root], {Buffer::send, b.bytes > 0 ? b.offset : 0, b.bytes});
  }
  s.finalize();
  return s;
}

const VAlgorithm valgorithm_scatterv_linear{
    "linear", VCollective::scatterv, build_scatterv_linear, true,
    "the root sends every rank its block directly; one round"};

}  // namespace lanes::algos
