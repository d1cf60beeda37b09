// Recursive-doubling allreduce.
//
// Source: R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
// Operations in MPICH", IJHPCA 19(1), 2005, section 4.4 (recursive doubling for short vectors,
// and the fold of a non-power of two onto the largest power of two that Rabenseifner's algorithm
// uses).
//
// Phases: let q = 2^floor(log2 p) and e = p - q.
//  0. When e > 0, fold: each odd rank r < 2e sends its vector to r - 1, which combines it (its own
//     on the left) and plays virtual rank (r - 1) / 2; the other ranks r >= 2e play r - e.
//  1. Doubling round j (0..log2 q - 1): virtual rank v exchanges its partial result with virtual
//     rank v xor 2^j; both combine the lower group's partial on the left, so the two hold the
//     same bits.
//  2. When e > 0, unfold: rank r - 1 sends the result to each odd rank r < 2e.
// Every round waits for the previous round's combine; received partials land in scratch. The
// first combination reads the rank's input where it is (dst = input (+) partial), so the input is
// never copied.
//
// Cost: log2 q * (alpha + beta * m + gamma * m), plus when e > 0 two hops of alpha + beta * m and
// one more combine, for a vector of m bytes.
// Latency-optimal; moves the whole vector each round, so for short vectors.
//
// Order: the fold pairs ranks 2v and 2v + 1 with the lower one on the left, and virtual ranks
// keep the ranks' order; each doubling round puts the lower group on the left: rank order on
// every layout.
//
// Applies: any p and any layout; one-ported, each sender on the lanes it drives.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allreduce_recursive_doubling(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "recursive-doubling", false);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const PowerOfTwoFold fold(p);
  const int levels = fold.levels;
  const int first = fold.folded() ? 1 : 0;
  s.rounds = levels + (fold.folded() ? 2 : 0);
  s.ports = 1;
  const Region result{Buffer::recv, 0, m};
  const Region incoming{Buffer::scratch, 0, m};
  const LaneSet lanes = layout.lanes_of[r];

  if (fold.sits_out(r)) {
    // Folded away: contribute, then receive the result (after the send: in place, the result
    // overwrites the input).
    const OpId out = s.send(r - 1, lanes, {Buffer::send, 0, m}, {}, 0);
    s.recv(r - 1, layout.lanes_of[r - 1], result, {out}, s.rounds - 1);
    s.finalize();
    return s;
  }
  s.scratch_bytes = m;
  // The first combination reads this rank's input where it is and writes the result: no copy
  // of the input first. Later rounds send and combine the result so far.
  const Region input{Buffer::send, 0, m};
  bool have_result = false;
  OpId last = 0;
  if (fold.paired(r)) {
    const OpId in = s.recv(r + 1, layout.lanes_of[r + 1], incoming, {}, 0);
    last = s.combine_into(input, incoming, result, {in});
    have_result = true;
  }
  const int v = fold.virtual_of(r);
  for (int j = 0; j < levels; ++j) {
    const int partner = fold.real(v ^ (1 << j));
    const bool lower = (v & (1 << j)) == 0;
    const std::vector<OpId> after = have_result ? std::vector<OpId>{last} : std::vector<OpId>{};
    const OpId out = s.send(partner, lanes, have_result ? result : input, after, first + j);
    const OpId in = s.recv(partner, layout.lanes_of[partner], incoming, after, first + j);
    // In place the input is the result: the combination waits for the send either way.
    last = have_result ? s.combine(incoming, result, {out, in}, !lower)
                       : s.combine_into(input, incoming, result, {out, in}, !lower);
    have_result = true;
  }
  if (!have_result) s.copy(input, result);  // alone
  if (fold.paired(r)) s.send(r + 1, lanes, result, {last}, s.rounds - 1);
  s.finalize();
  return s;
}

double cost_allreduce_recursive_doubling(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const auto bytes = static_cast<double>(in.bytes);
  int levels = 0;
  while ((2LL << levels) <= p) ++levels;
  const bool folded = (1LL << levels) != p;
  // Partners 2^j apart share a node while 2^j < n.
  double t = 0;
  for (int j = 0; j < levels; ++j) {
    t += hop_time(bytes, (1LL << j) >= in.ppn && in.nodes > 1, in, m) + combine_time(bytes, m);
  }
  if (folded) {
    const bool off = in.ppn == 1 && in.nodes > 1;
    t += 2 * hop_time(bytes, off, in, m) + combine_time(bytes, m);
  }
  return t;
}

const Algorithm algorithm_allreduce_recursive_doubling{
    "recursive-doubling",
    Collective::allreduce,
    build_allreduce_recursive_doubling,
    nullptr,
    "log2 p rounds exchanging and combining the whole vector; non-powers of two fold",
    cost_allreduce_recursive_doubling,
    rank_order_always};

}  // namespace lanes::algos
