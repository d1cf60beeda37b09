// Rabenseifner's reduce: a reduce-scatter by recursive halving, then a binomial gather of the
// parts to the root.
//
// Source: R. Rabenseifner, "Optimization of Collective Reduction Operations", ICCS 2004, and
// MPICH's MPIR_Reduce_intra_reduce_scatter_gather (R. Thakur, R. Rabenseifner, W. Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, section
// 4.3); one of the base algorithms that K. Hasanov and A. Lastovetsky transform hierarchically
// ("Hierarchical redesign of classic MPI reduction algorithms", J. Supercomputing 73, 2017).
//
// Phases: let q = 2^floor(log2 p), L = log2 q, e = p - q; the vector is cut into q parts at
// element boundaries (vector_part).
//  0. When e > 0, fold: ranks 2i and 2i + 1 (i < e) pair up; one of them (2i, or 2i + 1 when that
//     is the root) sends its vector to the other, which combines the two in rank order and plays
//     virtual rank i; ranks r >= 2e play r - e. Virtual ranks keep rank order.
//  1. Reduce-scatter, steps k = 0..L-1 (distance doubling, vector halving): virtual rank v and
//     v xor 2^k split the range of parts they both hold; the one with bit k clear keeps the lower
//     half, each sends the other half and combines what it receives, the lower virtual rank's
//     partial on the left. Partners are groups of consecutive virtual ranks, so every part ends
//     as the combination of all contributions in rank order, one part per virtual rank.
//  2. Gather to the root's virtual rank w, steps k = L-1..0: among the ranks that agree with w
//     above bit k, the one whose bit k differs from w's sends all it holds (the range it kept in
//     step k) to its partner and drops out. The root collects in its receive buffer; others in
//     scratch.
// Every step waits for the previous one; empty parts (fewer elements than q) send nothing.
//
// Cost: for a vector of m bytes, beta_shm m (the input's copy into the working vector), then the
// sum over k of (alpha + beta m / 2^(k+1) + gamma m / 2^(k+1)) for the reduce-scatter and
// (alpha + beta m / 2^(k+1)) for the gather, about 2 L alpha + 2 (q - 1) / q beta m +
// (q - 1) / q gamma m, plus one hop of m and a combine for the fold; partners 2^k ranks apart
// cross nodes once 2^k reaches n. Rounds: 2 L (+1 with a fold).
//
// Order: the fold keeps a pair's ranks in order whichever keeps it, virtual ranks keep the ranks'
// order, and every step puts the lower group of consecutive virtual ranks on the left: rank order
// for every root (Algorithm::rank_order).
//
// Applies: any p and any layout; long vectors (it moves about 2 m per rank instead of m log p).
// One-ported; each sender on the lanes it drives.
#include <utility>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/halving.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_rabenseifner(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "rabenseifner", true);
  const int p = layout.size;
  const int r = args.rank;
  const int root = args.root;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const PowerOfTwoFold fold(p);
  const int levels = fold.levels;
  const int q = fold.q;
  const int extra = fold.extra;
  const int first = fold.folded() ? 1 : 0;
  s.rounds = 2 * levels + first;
  s.ports = 1;
  const LaneSet lanes = layout.lanes_of[r];
  const Region own{Buffer::send, 0, m};
  // The rank of a fold pair that plays its virtual rank: the root when it is in the pair.
  const auto keeper = [&](int i) { return root == 2 * i + 1 ? 2 * i + 1 : 2 * i; };
  const auto real = [&](int v) { return v < extra ? keeper(v) : v + extra; };
  if (fold.paired(r) && r != keeper(r / 2)) {
    s.send(r ^ 1, lanes, own, {}, 0);
    s.finalize();
    return s;
  }
  const int v = fold.virtual_of(r);
  const int w = fold.virtual_of(root);
  const bool is_root = r == root;
  const Region work = is_root ? Region{Buffer::recv, 0, m} : Region{Buffer::scratch, 0, m};
  const std::size_t in_at = is_root ? 0 : m;
  s.scratch_bytes = in_at + m;
  // Bytes of parts [a, b) in `work`, and at the start of the incoming slot.
  const auto parts = [&](int a, int b) {
    const std::size_t lo = vector_part(m, args.elem, q, a).offset;
    const std::size_t hi = b < q ? vector_part(m, args.elem, q, b).offset : m;
    return Region{work.buffer, work.offset + lo, hi - lo};
  };
  const auto incoming = [&](std::size_t bytes) { return Region{Buffer::scratch, in_at, bytes}; };

  std::vector<OpId> prev;
  if (fold.paired(r)) {
    const int partner = r ^ 1;
    const OpId in = s.recv(partner, layout.lanes_of[partner], incoming(m), {}, 0);
    prev = {s.combine_into(own, incoming(m), work, {in}, partner < r)};
  } else {
    prev = {s.copy(own, work)};
  }
  // 1. Reduce-scatter by recursive halving.
  const Halving h =
      recursive_halving(s, layout, lanes, v, levels, first, real, parts, incoming, prev);
  const auto& kept = h.kept;
  const auto& given = h.given;
  prev = h.last;
  // 2. Gather to w.
  for (int k = levels - 1; k >= 0; --k) {
    const int bit = 1 << k;
    if (((v ^ w) >> (k + 1)) != 0) break;  // dropped out in an earlier step
    const int partner = real(v ^ bit);
    const int round = first + levels + (levels - 1 - k);
    if (((v ^ w) & bit) != 0) {
      const Region out = parts(kept[k].first, kept[k].second);
      if (out.bytes > 0) s.send(partner, lanes, out, prev, round);
      break;
    }
    const Region in = parts(given[k].first, given[k].second);
    if (in.bytes > 0) prev = {s.recv(partner, layout.lanes_of[partner], in, prev, round)};
  }
  s.finalize();
  return s;
}

double cost_reduce_rabenseifner(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const auto bytes = static_cast<double>(in.bytes);
  int levels = 0;
  while ((2LL << levels) <= p) ++levels;
  const bool folded = (1LL << levels) != p;
  // The input's copy into the working vector comes first.
  double t = bytes * m.beta_shm;
  if (folded) t += hop_time(bytes, in.ppn == 1 && in.nodes > 1, in, m) + combine_time(bytes, m);
  for (int k = 0; k < levels; ++k) {
    const double part = bytes / static_cast<double>(2LL << k);
    const double hop = hop_time(part, (1LL << k) >= in.ppn && in.nodes > 1, in, m);
    t += 2 * hop + combine_time(part, m);
  }
  return t;
}

const Algorithm algorithm_reduce_rabenseifner{
    "rabenseifner",
    Collective::reduce,
    build_reduce_rabenseifner,
    nullptr,
    "recursive-halving reduce-scatter, binomial gather to the root; non-powers of two fold",
    cost_reduce_rabenseifner,
    rank_order_always};

}  // namespace lanes::algos
