// Rabenseifner's allreduce: a reduce-scatter by recursive halving, then an allgather by recursive
// doubling.
//
// Source: R. Rabenseifner, "Optimization of Collective Reduction Operations", ICCS 2004; R.
// Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in
// MPICH", IJHPCA 19(1), 2005, section 4.4 (MPIR_Allreduce_intra_reduce_scatter_allgather, with
// the fold of a non-power of two onto the largest power of two).
//
// Phases: let q = 2^floor(log2 p), L = log2 q, e = p - q; the vector is cut into q parts at
// element boundaries (vector_part).
//  0. When e > 0, fold: each odd rank r < 2e sends its vector to r - 1, which combines it on the
//     right of its own and plays virtual rank (r - 1) / 2; ranks r >= 2e play r - e.
//  1. Reduce-scatter, steps k = 0..L-1 (distance doubling, vector halving): virtual rank v and
//     v xor 2^k split the range of parts they both hold; the one with bit k clear keeps the lower
//     half, each sends the other half and combines what it receives, the lower virtual rank's
//     partial on the left. Partners are groups of consecutive virtual ranks, so every part ends
//     complete, in rank order, at one virtual rank.
//  2. Allgather, steps k = L-1..0 (distance halving, vector doubling): v sends all it holds (the
//     range it kept in step k) to v xor 2^k and receives the range it handed over in step k.
//  3. When e > 0, unfold: r - 1 sends the result to each odd rank r < 2e.
// Each part is combined once and then copied, so every rank ends with the same bits. Everything
// happens in the receive buffer (received partials in scratch); every step waits for the previous
// one; empty parts (fewer elements than q) send nothing.
//
// Cost: for a vector of m bytes, beta_shm m (the input's copy into the result), then the sum
// over k of 2 (alpha + beta m / 2^(k+1)) + gamma m / 2^(k+1), about 2 L alpha +
// 2 (q - 1) / q beta m + (q - 1) / q gamma m, plus two hops of m and a combine for the fold;
// partners 2^k ranks apart cross nodes once 2^k reaches n. Rounds: 2 L (+2 with a fold).
//
// Order: as in the reduce (reduce/rabenseifner.cpp), the fold and every step keep the lower ranks
// on the left: rank order on every layout (Algorithm::rank_order).
//
// Applies: any p and any layout; long vectors: about 2 m per rank on the wire against m log p for
// recursive doubling, in 2 log p start-ups against ring's 2 (p - 1). One-ported; each sender on
// the lanes it drives.
#include <utility>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/halving.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allreduce_rabenseifner(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "rabenseifner", false);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const PowerOfTwoFold fold(p);
  const int levels = fold.levels;
  const int q = fold.q;
  const int first = fold.folded() ? 1 : 0;
  s.rounds = 2 * levels + 2 * first;
  s.ports = 1;
  const LaneSet lanes = layout.lanes_of[r];
  const Region own{Buffer::send, 0, m};
  const Region result{Buffer::recv, 0, m};
  if (fold.sits_out(r)) {
    // Folded away: contribute, then receive the result (after the send: in place, the result
    // overwrites the input).
    const OpId out = s.send(r - 1, lanes, own, {}, 0);
    s.recv(r - 1, layout.lanes_of[r - 1], result, {out}, s.rounds - 1);
    s.finalize();
    return s;
  }
  const auto real = [&fold](int v) { return fold.real(v); };
  const int v = fold.virtual_of(r);
  s.scratch_bytes = m;
  const auto parts = [&](int a, int b) {
    const std::size_t lo = vector_part(m, args.elem, q, a).offset;
    const std::size_t hi = b < q ? vector_part(m, args.elem, q, b).offset : m;
    return Region{Buffer::recv, lo, hi - lo};
  };
  const auto incoming = [](std::size_t bytes) { return Region{Buffer::scratch, 0, bytes}; };

  std::vector<OpId> prev;
  if (fold.paired(r)) {
    const OpId in = s.recv(r + 1, layout.lanes_of[r + 1], incoming(m), {}, 0);
    prev = {s.combine_into(own, incoming(m), result, {in})};
  } else {
    prev = {s.copy(own, result)};
  }
  // 1. Reduce-scatter by recursive halving.
  const Halving h =
      recursive_halving(s, layout, lanes, v, levels, first, real, parts, incoming, prev);
  const auto& kept = h.kept;
  const auto& given = h.given;
  prev = h.last;
  // 2. Allgather.
  for (int k = levels - 1; k >= 0; --k) {
    const int partner = real(v ^ (1 << k));
    const int round = first + levels + (levels - 1 - k);
    const Region out = parts(kept[k].first, kept[k].second);
    const Region in = parts(given[k].first, given[k].second);
    std::vector<OpId> step;
    if (out.bytes > 0) step.push_back(s.send(partner, lanes, out, prev, round));
    if (in.bytes > 0) step.push_back(s.recv(partner, layout.lanes_of[partner], in, prev, round));
    if (!step.empty()) prev = step;
  }
  // 3. Unfold.
  if (fold.paired(r)) s.send(r + 1, lanes, result, prev, s.rounds - 1);
  s.finalize();
  return s;
}

double cost_allreduce_rabenseifner(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const auto bytes = static_cast<double>(in.bytes);
  int levels = 0;
  while ((2LL << levels) <= p) ++levels;
  const bool folded = (1LL << levels) != p;
  double t = bytes * m.beta_shm;  // the input's copy into the result comes first
  if (folded) {
    const bool off = in.ppn == 1 && in.nodes > 1;
    t += 2 * hop_time(bytes, off, in, m) + combine_time(bytes, m);
  }
  for (int k = 0; k < levels; ++k) {
    const double part = bytes / static_cast<double>(2LL << k);
    const double hop = hop_time(part, (1LL << k) >= in.ppn && in.nodes > 1, in, m);
    t += 2 * hop + combine_time(part, m);
  }
  return t;
}

const Algorithm algorithm_allreduce_rabenseifner{
    "rabenseifner",
    Collective::allreduce,
    build_allreduce_rabenseifner,
    nullptr,
    "recursive-halving reduce-scatter, recursive-doubling allgather; non-powers of two fold",
    cost_allreduce_rabenseifner,
    rank_order_always};

}  // namespace lanes::algos
