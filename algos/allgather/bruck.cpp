// Bruck's dissemination allgather.
//
// Source: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient Algorithms for
// All-to-All Communications in Multiport Message-Passing Systems", IEEE TPDS 8(11), 1997 (the
// concatenation algorithm, radix 2), as in MPICH's MPIR_Allgather_intra_brucks.
//
// Phases: a scratch array T starts with the own block at T[0]. In rounds j = 0..ceil(log2 p)-1
// rank r sends T[0, c) to rank (r - 2^j) mod p and receives T[2^j, 2^j + c) from rank
// (r + 2^j) mod p, c = min(2^j, p - 2^j); afterwards T[i] is the block of rank (r+i) mod p.
// Round 0 sends straight from the send buffer. A final rotation copies T[1, p-r) to receive
// blocks r+1.. and T[p-r, p) to receive blocks 0..r-1 (two copies); the own block is copied
// from the send buffer directly. Every round starts after the previous round's send and receive
// completed.
//
// Cost: ceil(log2 p) * alpha + (p-1) * beta * m for blocks of m bytes, plus a local copy of
// p * m bytes; p * m bytes of scratch.
//
// Applies: any p and any layout; for small blocks (round-optimal for every p). One-ported: uses
// each sender's default lane.
#include <algorithm>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_allgather_bruck(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "bruck", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region mine{Buffer::send, 0, b};
  s.copy(mine, {Buffer::recv, blocks(r), b});
  if (p == 1) {
    s.finalize();
    return s;
  }
  const int rounds = ceil_log2(p);
  s.rounds = rounds;
  s.ports = 1;
  s.scratch_bytes = blocks(p);
  const LaneSet lane = layout.lanes_of[r];
  std::vector<OpId> prev;
  if (rounds > 1) prev.push_back(s.copy(mine, {Buffer::scratch, 0, b}));
  for (int j = 0; j < rounds; ++j) {
    const int bit = 1 << j;
    const int count = std::min(bit, p - bit);
    const int to = (r - bit + p) % p;
    const int from = (r + bit) % p;
    const OpId snd = j == 0 ? s.send(to, lane, mine, {}, j)
                            : s.send(to, lane, {Buffer::scratch, 0, blocks(count)}, prev, j);
    const OpId rcv =
        s.recv(from, layout.lanes_of[from], {Buffer::scratch, blocks(bit), blocks(count)}, prev, j);
    prev = {snd, rcv};
  }
  // T[i] -> receive block (r+i) mod p.
  if (p - r > 1) {
    s.copy({Buffer::scratch, blocks(1), blocks(p - r - 1)},
           {Buffer::recv, blocks(r + 1), blocks(p - r - 1)}, prev);
  }
  if (r > 0)
    s.copy({Buffer::scratch, blocks(p - r), blocks(r)}, {Buffer::recv, 0, blocks(r)}, prev);
  s.finalize();
  return s;
}

// Cost: round j sends min(2^j, p - 2^j) blocks to r - 2^j; with ranks numbered node by node the
// first min(2^j, n) ranks of every node send off it (N > 1), and the round waits for them; plus
// the final rotation, a local copy of p blocks.
double cost_allgather_bruck(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p == 1) return 0;
  const auto b = static_cast<double>(in.bytes);
  double t = static_cast<double>(p) * b * m.beta_shm;
  for (long long dist = 1; dist < p; dist *= 2) {
    const double bytes = static_cast<double>(std::min(dist, p - dist)) * b;
    double round = shm_time(bytes, m);
    if (in.nodes > 1) {
      round = std::max(round, rail_time(bytes, static_cast<double>(std::min(dist, in.ppn)), in, m));
    }
    t += round;
  }
  return t;
}

const Algorithm algorithm_allgather_bruck{"bruck",
                                          Collective::allgather,
                                          build_allgather_bruck,
                                          nullptr,
                                          "dissemination, ceil(log2 p) rounds, final rotation",
                                          cost_allgather_bruck};

}  // namespace lanes::algos
