// Recursive-halving reduce-scatter (reduce_scatter_block).
//
// Source: the recursive-halving reduce-scatter of MPICH (R. Thakur, R. Rabenseifner, W. Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, section
// 4.5), with its fold of a non-power of two.
//
// Phases: let q = 2^floor(log2 p), L = log2 q, e = p - q.
//  0. When e > 0, fold: each odd rank r < 2e sends all p blocks of its input to r - 1, which
//     combines them on the right of its own and plays virtual rank (r - 1) / 2 for the blocks of
//     both; ranks r >= 2e play r - e. Virtual rank v owns the blocks [b(v), b(v + 1)) with
//     b(v) = 2v for v < e and v + e otherwise, so every aligned group of virtual ranks owns one
//     contiguous stretch of blocks.
//  1. Steps k = 0..L-1 (distance halving), d = q / 2^(k+1): virtual rank v and v xor d share the
//     blocks of the group of 2d virtual ranks around them; v keeps the half its own group of d
//     owns, sends the other half to v xor d, and combines what it receives, the lower virtual
//     rank's partial on the left (a fixed order; each block is combined at one rank only).
//  2. v copies its block to its receive buffer; when e > 0, r - 1 sends block r to each odd rank
//     r < 2e.
// Every step waits for the previous one; the working copy and the received halves live in
// scratch.
//
// Cost: for blocks of m bytes, beta_shm p m (the input's copy into the working copy), then the
// sum over k of alpha + (beta + gamma) m p / 2^(k+1), about L alpha + (p - 1) (beta + gamma) m
// per rank on the critical path, plus, when e > 0, a fold of p m bytes (and its combine) and one
// hop of m; partners d ranks apart cross nodes while d is at least n. Rounds: L (+2 with a fold).
//
// Order: a fixed order per block (the lower virtual rank's partial on the left at each step), not
// rank order: partners d apart interleave (block 0 of four ranks: (r_0 (+) r_2) (+) (r_1 (+) r_3)).
//
// Applies: any p and any layout; the fewest start-ups of the reduce-scatters here, for small and
// medium blocks. One-ported; each sender on the lanes it drives.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_reduce_scatter_block_recursive_halving(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "recursive-halving", false);
  const int p = layout.size;
  const int r = args.rank;
  const std::size_t m = args.bytes;
  Schedule s;
  if (m == 0) return s;
  const PowerOfTwoFold fold(p);
  const int levels = fold.levels;
  const int q = fold.q;
  const int first = fold.folded() ? 1 : 0;
  s.rounds = levels + 2 * first;
  s.ports = 1;
  const LaneSet lanes = layout.lanes_of[r];
  const std::size_t all = static_cast<std::size_t>(p) * m;
  const Region result{Buffer::recv, 0, m};
  if (fold.sits_out(r)) {
    s.send(r - 1, lanes, {Buffer::send, 0, all}, {}, 0);
    s.recv(r - 1, layout.lanes_of[r - 1], result, {}, s.rounds - 1);
    s.finalize();
    return s;
  }
  const int v = fold.virtual_of(r);
  // The blocks of virtual ranks [a, b) in the working copy.
  const auto owned = [&](int a, int b) {
    const auto lo = static_cast<std::size_t>(fold.real(a)) * m;
    return Region{Buffer::scratch, lo, static_cast<std::size_t>(fold.real(b)) * m - lo};
  };
  const auto incoming = [all](std::size_t bytes) { return Region{Buffer::scratch, all, bytes}; };
  s.scratch_bytes = 2 * all;

  const Region work{Buffer::scratch, 0, all};
  const Region input{Buffer::send, 0, all};
  std::vector<OpId> prev;
  if (fold.paired(r)) {
    const OpId in = s.recv(r + 1, layout.lanes_of[r + 1], incoming(all), {}, 0);
    prev = {s.combine_into(input, incoming(all), work, {in})};
  } else {
    prev = {s.copy(input, work)};
  }
  for (int k = 0; k < levels; ++k) {
    const int d = q >> (k + 1);
    const int partner = fold.real(v ^ d);
    const int group = v & ~(2 * d - 1);
    const bool lower = (v & d) == 0;
    const Region keep = lower ? owned(group, group + d) : owned(group + d, group + 2 * d);
    const Region out = lower ? owned(group + d, group + 2 * d) : owned(group, group + d);
    const OpId sent = s.send(partner, lanes, out, prev, first + k);
    const OpId got =
        s.recv(partner, layout.lanes_of[partner], incoming(keep.bytes), prev, first + k);
    std::vector<OpId> deps = prev;
    deps.push_back(got);
    prev = {sent, s.combine(incoming(keep.bytes), keep, deps, !lower)};
  }
  // v's blocks: block r, and block r + 1 of its fold partner.
  const Region mine = owned(v, v + 1);
  s.copy({Buffer::scratch, mine.offset, m}, result, prev);
  if (fold.paired(r)) {
    s.send(r + 1, lanes, {Buffer::scratch, mine.offset + m, m}, prev, s.rounds - 1);
  }
  s.finalize();
  return s;
}

double cost_reduce_scatter_block_recursive_halving(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p <= 1) return 0;
  const auto b = static_cast<double>(in.bytes);
  int levels = 0;
  while ((2LL << levels) <= p) ++levels;
  const long long q = 1LL << levels;
  double t = static_cast<double>(p) * b * m.beta_shm;  // the input's copy comes first
  if (q != p) {
    const bool off = in.ppn == 1 && in.nodes > 1;
    const double all = static_cast<double>(p) * b;
    t += hop_time(all, off, in, m) + combine_time(all, m) + hop_time(b, off, in, m);
  }
  for (int k = 0; k < levels; ++k) {
    const long long d = q >> (k + 1);
    const double half = static_cast<double>(p) * b / static_cast<double>(2LL << k);
    t += hop_time(half, d >= in.ppn && in.nodes > 1, in, m) + combine_time(half, m);
  }
  return t;
}

const Algorithm algorithm_reduce_scatter_block_recursive_halving{
    "recursive-halving",
    Collective::reduce_scatter_block,
    build_reduce_scatter_block_recursive_halving,
    nullptr,
    "log2 p halving steps, each sending half the remaining blocks; non-powers of two fold",
    cost_reduce_scatter_block_recursive_halving};

}  // namespace lanes::algos
