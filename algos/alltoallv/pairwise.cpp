// Pairwise-exchange alltoallv.
//
// Source: the shifted pairwise exchange of MPICH's MPIR_Alltoallv_intra_pairwise_sendrecv_replace
// and MPIR_Alltoall_intra_pairwise (R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of
// Collective Communication Operations in MPICH", IJHPCA 19(1), 2005), with blocks of per-pair
// sizes, as alltoall/pairwise.cpp.
//
// Phases: the own block is copied from the send to the receive buffer; then in steps
// s = 1..p-1 rank r sends its block for rank (r+s) mod p and receives its block from rank
// (r-s) mod p, each at its displacement, every step after the previous one's send and receive
// completed. Empty blocks travel as empty messages, so that a pair whose sizes disagree fails
// with a mismatch instead of one side waiting.
//
// Cost: (p - 1) * alpha + beta * sum_s max(m_out(s), m_in(s)).
//
// Applies: any p and any layout. Local: a rank needs only its own blocks. Uses each sender's
// lanes.
#include <vector>

#include "algos/alltoallv/steps.hpp"
#include "algos/vcollectives.hpp"
#include "lanes/error.hpp"

namespace lanes::algos {

Schedule alltoallv_steps(const Layout& layout, const VArgs& args, int window) {
  const int p = layout.size;
  const int r = args.rank;
  Schedule s;
  const Block own_out = args.send[static_cast<std::size_t>(r)];
  const Block own_in = args.recv[static_cast<std::size_t>(r)];
  if (own_out.bytes != own_in.bytes) {
    throw Error(Errc::invalid_argument, "alltoallv: rank " + std::to_string(r) + " sends itself " +
                                            std::to_string(own_out.bytes) + " bytes but expects " +
                                            std::to_string(own_in.bytes));
  }
  if (own_out.bytes > 0) {
    s.copy({Buffer::send, own_out.offset, own_out.bytes},
           {Buffer::recv, own_in.offset, own_in.bytes});
  }
  std::vector<std::vector<OpId>> done(static_cast<std::size_t>(p));  // each step's two ops
  for (int step = 1; step < p; ++step) {
    const std::vector<OpId> after =
        step > window ? done[static_cast<std::size_t>(step - window)] : std::vector<OpId>{};
    const int to = (r + step) % p;
    const int from = (r - step + p) % p;
    const int round = (step - 1) / window;
    const Block out = args.send[static_cast<std::size_t>(to)];
    const Block in = args.recv[static_cast<std::size_t>(from)];
    done[static_cast<std::size_t>(step)] = {
        s.send(to, layout.lanes_of[r], {Buffer::send, out.bytes > 0 ? out.offset : 0, out.bytes},
               after, round),
        s.recv(from, layout.lanes_of[from], {Buffer::recv, in.bytes > 0 ? in.offset : 0, in.bytes},
               after, round)};
  }
  s.rounds = p > 1 ? (p - 1 + window - 1) / window : 0;
  s.finalize();
  return s;
}

Schedule build_alltoallv_pairwise(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "pairwise");
  return alltoallv_steps(layout, args, 1);
}

const VAlgorithm valgorithm_alltoallv_pairwise{
    "pairwise", VCollective::alltoallv, build_alltoallv_pairwise, true,
    "pairwise exchange, one step at a time; p - 1 steps"};

}  // namespace lanes::algos
