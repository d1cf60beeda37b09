// Broadcast by binomial scatter followed by a recursive-doubling allgather.
//
// Source: the van de Geijn broadcast as in MPICH's
// MPIR_Bcast_intra_scatter_recursive_doubling_allgather (R. Thakur, R. Rabenseifner, W. Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005); for p not
// a power of two the allgather uses the usual fold onto the largest power of two instead of
// MPICH's subtree exchanges.
//
// Phases: ranks are renumbered relative to the root, vr = (r - root + p) mod p, and the message
// is cut into p blocks whose sizes differ by at most one byte (block v at its place in the
// receive buffer; with fewer bytes than ranks the last blocks are empty and travel nowhere).
//  1. Binomial scatter (as scatter/binomial.cpp): vr ends with the blocks of its subtree
//     [vr, vr + min(lowbit(vr), p - vr)) and in particular block vr; ceil(log2 p) rounds.
//  2. Allgather by recursive doubling over q = 2^floor(log2 p) ranks. With x = p - q > 0 extra
//     ranks, first each extra rank q + i sends its block to rank i (one round); then ranks
//     0..q-1 exchange in log2 q rounds with vr xor 2^j everything they hold, the blocks
//     [b, b + 2^j) and, folded in, [q + b, q + b + 2^j) (b = vr with its j low bits cleared;
//     at most two messages per exchange); finally rank i sends extra rank q + i everything but
//     its own block (one round).
// Every rank takes part in the standard allgather even where it holds a block already.
//
// Cost: with R = ceil(log2 p), L = floor(log2 p) and x = p - 2^L, R + L + 2 [x > 0] rounds;
// for m bytes and p a power of two 2 log2 p * alpha + 2 beta * m (p - 1) / p, otherwise about
// (R + L + 2) * alpha + beta * m (2 (p - 1) / p + 1 + 1 / p) (the fold adds a block and a whole
// message).
//
// Applies: any p and any layout; uses each sender's default lane. Good for medium messages
// when p is a power of two (MPICH's choice); otherwise scatter-ring moves less.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/bcast/message_blocks.hpp"
#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_bcast_scatter_allgather(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "scatter-allgather", true);
  const int p = layout.size;
  const std::size_t m = args.bytes;
  Schedule s;
  if (p == 1 || m == 0) return s;
  const int scatter_rounds = ceil_log2(p);
  const int log_q = floor_log2(p);
  const int q = 1 << log_q;
  const int extra = p - q;
  const int fold = extra > 0 ? 1 : 0;
  s.rounds = scatter_rounds + log_q + 2 * fold;
  const int vr = (args.rank - args.root + p) % p;
  const auto actual = [&](int v) { return (v + args.root) % p; };
  const LaneSet my_lane = layout.lanes_of[args.rank];
  const auto lane = [&](int rank) { return layout.lanes_of[rank]; };

  // 1. Binomial scatter.
  const BlockScatter scatter = append_block_scatter(s, layout, p, vr, m, actual);
  const std::optional<OpId> got = scatter.received;
  const std::vector<OpId>& scattered = scatter.ops;
  const Region subtree = blocks(m, p, scatter.first, scatter.end);
  // A receive into bytes the scatter touched waits for the scatter.
  const auto recv_deps = [&](const Region& r) {
    return overlaps(r, subtree) ? scattered : std::vector<OpId>{};
  };
  std::vector<OpId> have;  // receives whose bytes this rank forwards, plus the scatter's
  if (got) have.push_back(*got);

  // 2a. Fold: extra rank q + i hands its block to rank i.
  int round = scatter_rounds;
  if (vr >= q) {
    const Region own = blocks(m, p, vr, vr + 1);
    if (own.bytes > 0) s.send(actual(vr - q), my_lane, own, have, round);
  } else if (vr < extra) {
    const Region r = blocks(m, p, q + vr, q + vr + 1);
    const int from = actual(q + vr);
    if (r.bytes > 0) have.push_back(s.recv(from, lane(from), r, recv_deps(r), round));
  }
  round += fold;

  // 2b. Recursive doubling over ranks 0..q-1.
  if (vr < q) {
    for (int d = 1; d < q; d <<= 1, ++round) {
      const int peer = actual(vr ^ d);
      const int mine = vr & ~(d - 1);
      const int theirs = mine ^ d;
      const auto low_part = [&](int b) { return blocks(m, p, b, b + d); };
      const auto high_part = [&](int b) { return blocks(m, p, q + b, std::min(q + b + d, p)); };
      const std::vector<OpId> before = have;
      for (const Region& r : {low_part(mine), high_part(mine)}) {
        if (r.bytes > 0) s.send(peer, my_lane, r, before, round);
      }
      for (const Region& r : {low_part(theirs), high_part(theirs)}) {
        if (r.bytes > 0) have.push_back(s.recv(peer, lane(peer), r, recv_deps(r), round));
      }
    }
  } else {
    round += log_q;
  }

  // 2c. Rank i hands extra rank q + i everything but the extra rank's own block.
  if (fold > 0) {
    const int e = vr < q ? q + vr : vr;
    const Region before = blocks(m, p, 0, e);
    const Region after = blocks(m, p, e + 1, p);
    if (vr < extra) {
      for (const Region& r : {before, after}) {
        if (r.bytes > 0) s.send(actual(e), my_lane, r, have, round);
      }
    } else if (vr >= q) {
      const int from = actual(vr - q);
      for (const Region& r : {before, after}) {
        if (r.bytes > 0) s.recv(from, lane(from), r, recv_deps(r), round);
      }
    }
  }
  s.finalize();
  return s;
}

// Cost: the scatter of p blocks of c / p bytes. With q = 2^floor(log2 p) < p, the fold (one block)
// and the unfold (the rest of the message) between ranks q + i and i, which are q >= n ranks
// apart, with min(n, p - q) flows per node. Doubling round j exchanges 2^j p / q blocks with a
// partner about as many ranks away, off the node when that is n or more, all n ranks at once.
double cost_bcast_scatter_allgather(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  const auto n = static_cast<double>(in.ppn);
  const auto c = static_cast<double>(in.bytes);
  const double block = c / static_cast<double>(p);
  long long q = 1;
  while (2 * q <= p) q *= 2;
  const double spread = static_cast<double>(p) / static_cast<double>(q);  // blocks per virtual rank
  double t = binomial_scatter_time(block, in, m);
  if (q < p) {
    const auto flows = static_cast<double>(std::min(in.ppn, p - q));
    t += in.nodes > 1 ? rail_time(block, flows, in, m) + rail_time(c - block, flows, in, m)
                      : shm_time(block, m) + shm_time(c - block, m);
  }
  for (long long dist = 1; dist < q; dist *= 2) {
    const double held = static_cast<double>(dist) * spread;
    t += in.nodes > 1 && held >= n ? rail_time(held * block, n, in, m) : shm_time(held * block, m);
  }
  return t;
}

const Algorithm algorithm_bcast_scatter_allgather{
    "scatter-allgather",
    Collective::bcast,
    build_bcast_scatter_allgather,
    nullptr,
    "binomial scatter of p blocks, recursive-doubling allgather (fold for non-powers of two)",
    cost_bcast_scatter_allgather};

}  // namespace lanes::algos
