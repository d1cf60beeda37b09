// Recursive-doubling allgather.
//
// Source: the recursive-doubling algorithm, as in MPICH's MPIR_Allgather_intra_recursive_doubling
// (R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in
// MPICH", IJHPCA 19(1), 2005). Non-powers of two are folded onto the largest power of two as in
// Rabenseifner's allreduce (same paper), instead of MPICH's recursive-halving repair.
//
// Phases: let q = 2^floor(log2 p) and e = p - q. When e > 0, round 0 folds: each odd rank
// r < 2e sends its block to r-1 and sits out until the last round. The q remaining ranks get
// virtual ranks v (r/2 for even r < 2e, r - e otherwise); virtual rank v holds the blocks
// [start(v), start(v+1)) with start(v) = 2v for v < e and v + e otherwise, so any aligned group
// of virtual ranks holds one contiguous stretch of the receive buffer. In doubling round j
// (0..log2 q - 1) virtual rank v exchanges its group's stretch (group = v with its low j bits
// cleared, 2^j virtual ranks) with virtual rank v xor 2^j, which sends the sibling group's
// stretch. When e > 0 a last round unfolds: rank r-1 sends the whole receive buffer to each odd
// rank r < 2e. Every round starts after the previous round's send and receive completed; a rank
// holding only its own block sends its first message straight from the send buffer.
//
// Cost: log2 p * alpha + (p-1) * beta * m for a power of two p and blocks of m bytes;
// otherwise (floor(log2 p) + 2) * alpha + (2p - 1) * beta * m on the critical path through a
// fold partner (1 block in the fold, p - 2 in the doubling, p in the unfold). With ranks
// numbered node by node the fold partners r-1, r usually share a node, so fold and unfold travel
// over shared memory.
//
// Applies: any p and any layout; for small and medium blocks. One-ported: uses each sender's
// default lane.
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allgather_recursive_doubling(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "recursive-doubling", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region own{Buffer::recv, blocks(r), b};
  const PowerOfTwoFold fold(p);
  const int levels = fold.levels;
  const int first = fold.folded() ? 1 : 0;  // first doubling round
  s.rounds = levels + (fold.folded() ? 2 : 0);
  s.ports = 1;
  const LaneSet lane = layout.lanes_of[r];
  const Region everything{Buffer::recv, 0, blocks(p)};

  if (fold.sits_out(r)) {
    // Folded: hand the block over, get everything back at the end.
    s.send(r - 1, lane, {Buffer::send, 0, b}, {}, 0);
    s.recv(r - 1, layout.lanes_of[r - 1], everything, {}, s.rounds - 1);
    s.finalize();
    return s;
  }
  // The first block of virtual rank v, which is also the rank that plays it.
  const int v = fold.virtual_of(r);
  std::vector<OpId> prev = {s.copy({Buffer::send, 0, b}, own)};
  if (fold.paired(r)) {
    prev.push_back(s.recv(r + 1, layout.lanes_of[r + 1], {Buffer::recv, blocks(r + 1), b}, {}, 0));
  }
  for (int j = 0; j < levels; ++j) {
    const int size = 1 << j;
    const int mine = v & ~(size - 1);
    const int theirs = mine ^ size;
    const int peer = fold.real(v ^ size);
    const Region out{Buffer::recv, blocks(fold.real(mine)),
                     blocks(fold.real(mine + size) - fold.real(mine))};
    const Region in{Buffer::recv, blocks(fold.real(theirs)),
                    blocks(fold.real(theirs + size) - fold.real(theirs))};
    const bool just_mine = out == own;
    const OpId snd = just_mine ? s.send(peer, lane, {Buffer::send, 0, b}, {}, first + j)
                               : s.send(peer, lane, out, prev, first + j);
    const OpId rcv = s.recv(peer, layout.lanes_of[peer], in, prev, first + j);
    prev = {snd, rcv};
  }
  if (fold.paired(r)) s.send(r + 1, lane, everything, prev, s.rounds - 1);
  s.finalize();
  return s;
}

// Cost: with q = 2^floor(log2 p) < p, the fold (one block) and the unfold (all p blocks) between
// neighbours r - 1 and r, on one node unless n = 1. Doubling round j exchanges 2^j p / q blocks
// with a partner about as many ranks away, off the node when that is n or more, all n ranks of a
// node at once.
double cost_allgather_recursive_doubling(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  const auto n = static_cast<double>(in.ppn);
  const auto b = static_cast<double>(in.bytes);
  long long q = 1;
  while (2 * q <= p) q *= 2;
  const double spread = static_cast<double>(p) / static_cast<double>(q);  // blocks per virtual rank
  const auto pair = [&](double bytes) {
    return in.ppn > 1 ? shm_time(bytes, m) : rail_time(bytes, 1.0, in, m);
  };
  double t = q < p ? pair(b) + pair(static_cast<double>(p) * b) : 0.0;
  for (long long dist = 1; dist < q; dist *= 2) {
    const double held = static_cast<double>(dist) * spread;
    t += in.nodes > 1 && held >= n ? rail_time(held * b, n, in, m) : shm_time(held * b, m);
  }
  return t;
}

const Algorithm algorithm_allgather_recursive_doubling{
    "recursive-doubling",
    Collective::allgather,
    build_allgather_recursive_doubling,
    nullptr,
    "log2 p rounds of doubling exchanges; non-powers of two fold onto a power of two",
    cost_allgather_recursive_doubling};

}  // namespace lanes::algos
