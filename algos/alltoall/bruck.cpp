// Bruck's message-combining alltoall.
//
// Source: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient Algorithms for
// All-to-All Communications in Multiport Message-Passing Systems", IEEE TPDS 8(11), 1997; the
// one-ported (radix 2) variant, as in MPICH's MPIR_Alltoall_intra_brucks.
//
// Phases: the original rotates the send buffer so that position i holds block (r+i) mod p, then
// in steps j = 0..ceil(log2 p)-1 packs every position i with bit j set, sends the pack to rank
// (r + 2^j) mod p, receives the same positions from (r - 2^j) mod p and unpacks them in place;
// finally position i holds block r of rank (r-i) mod p and an inverse rotation puts it into
// receive block (r-i) mod p. Here the rotations are folded into the packing and nothing is
// unpacked: a position that has not moved yet is packed straight from send block (r+i) mod p,
// later packs read each position where its last message left it, and a final copy (the inverse
// rotation) moves every position to receive block (r-i) mod p. Packs hold their positions in
// descending order, so positions that travelled together stay adjacent and are packed and
// finally copied as one piece; position 0, the own block, is one local copy. A step whose pack is
// a single piece sends it without packing; a step whose positions all arrive for the last time
// and form one unwrapped stretch of the receive buffer receives straight into it. Every step
// packs into and receives into scratch of its own, so nothing is overwritten: receives are
// posted at once, and a send waits only for the data it carries.
//
// Cost: ceil(log2 p) * alpha + beta * m * sum_j |{0 <= i < p : bit j of i set}| for blocks of
// m bytes, about ceil(log2 p) * (alpha + beta * m * p / 2), plus local copies of about
// (log2 p / 2 + 1) * p * m bytes. Each block travels popcount(i) times. Scratch: up to twice the
// bytes sent, about p * log2 p * m.
//
// Applies: any p and any layout; for small blocks, where the log2 p start-ups beat the p - 1 of
// the direct algorithms (the scratch grows with p * log2 p * m). One-ported: uses each sender's
// default lane.
#include <algorithm>
#include <limits>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

namespace {

constexpr OpId kNoOp = std::numeric_limits<OpId>::max();

// A stretch of bytes that one copy or send reads, and the ops that wrote it.
struct Piece {
  Region src;
  std::vector<OpId> deps;
};

// Appends `src` to the last piece when it continues it, else starts a new piece.
void add_piece(std::vector<Piece>& pieces, const Region& src, OpId writer) {
  if (!pieces.empty()) {
    Piece& last = pieces.back();
    if (last.src.buffer == src.buffer && last.src.offset + last.src.bytes == src.offset) {
      last.src.bytes += src.bytes;
      if (writer != kNoOp && (last.deps.empty() || last.deps.back() != writer)) {
        last.deps.push_back(writer);
      }
      return;
    }
  }
  pieces.push_back({src, writer == kNoOp ? std::vector<OpId>{} : std::vector<OpId>{writer}});
}

}  // namespace

Schedule build_alltoall_bruck(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "bruck", false);
  const int p = layout.size;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  // Position i ends in receive block (r-i) mod p.
  const auto slot = [p, r](int i) { return ((r - i) % p + p) % p; };
  s.copy({Buffer::send, blocks(r), b}, {Buffer::recv, blocks(r), b});
  const int steps = ceil_log2(p);
  const LaneSet lane = layout.lanes_of[r];

  // Where each position's block is now, the op that put it there, and whether it is in place.
  std::vector<Region> at(static_cast<std::size_t>(p));
  std::vector<OpId> writer(static_cast<std::size_t>(p), kNoOp);
  std::vector<bool> placed(static_cast<std::size_t>(p), false);
  for (int i = 1; i < p; ++i) at[i] = {Buffer::send, blocks((r + i) % p), b};
  std::size_t scratch = 0;
  std::vector<int> moving;
  std::vector<Piece> pieces;
  for (int j = 0; j < steps; ++j) {
    const int bit = 1 << j;
    const int to = (r + bit) % p;
    const int from = (r - bit + p) % p;
    moving.clear();
    for (int i = p - 1; i > 0; --i) {
      if ((i & bit) != 0) moving.push_back(i);
    }
    const auto count = static_cast<int>(moving.size());
    pieces.clear();
    for (int i : moving) add_piece(pieces, at[i], writer[i]);
    if (pieces.size() == 1) {
      s.send(to, lane, pieces[0].src, pieces[0].deps, j);
    } else {
      const std::size_t base = scratch;
      scratch += blocks(count);
      std::vector<OpId> packs;
      std::size_t offset = base;
      for (const Piece& piece : pieces) {
        packs.push_back(s.copy(piece.src, {Buffer::scratch, offset, piece.src.bytes}, piece.deps));
        offset += piece.src.bytes;
      }
      s.send(to, lane, {Buffer::scratch, base, blocks(count)}, std::move(packs), j);
    }

    // The same positions arrive from `from`, in the same order. When they are one run below
    // 2^(j+1) they never move again; if their receive blocks do not wrap, receive in place.
    const int top = moving.front();
    const bool in_place = top < 2 * bit && slot(top) + count <= p;
    const Region dst = in_place ? Region{Buffer::recv, blocks(slot(top)), blocks(count)}
                                : Region{Buffer::scratch, scratch, blocks(count)};
    const OpId rcv = s.recv(from, layout.lanes_of[from], dst, {}, j);
    for (int x = 0; x < count; ++x) {
      const int i = moving[x];
      at[i] = {dst.buffer, dst.offset + blocks(x), b};
      writer[i] = rcv;
      placed[i] = in_place;
    }
    if (!in_place) scratch += blocks(count);
  }

  // The inverse rotation: descending positions are ascending receive blocks.
  for (int i = p - 1; i > 0;) {
    if (placed[i]) {
      --i;
      continue;
    }
    Region src = at[i];
    std::vector<OpId> deps = {writer[i]};
    const int first_slot = slot(i);
    int n = 1;
    while (i - n > 0 && !placed[i - n] && slot(i - n) == first_slot + n &&
           at[i - n].buffer == src.buffer && at[i - n].offset == src.offset + src.bytes) {
      src.bytes += b;
      if (deps.back() != writer[i - n]) deps.push_back(writer[i - n]);
      ++n;
    }
    s.copy(src, {Buffer::recv, blocks(first_slot), src.bytes}, std::move(deps));
    i -= n;
  }
  s.scratch_bytes = scratch;
  s.rounds = steps;
  s.ports = 1;
  s.finalize();
  return s;
}

// Cost: round j sends the positions with bit j set, count_j of them, to r + 2^j; with ranks
// numbered node by node the last min(2^j, n) ranks of every node send off it (N > 1), and the
// round waits for them. Local copies at beta_shm: the packs (count_j blocks a round) and the final
// rotation (p blocks).
double cost_alltoall_bruck(const CostInput& in, const MachineParams& m) {
  const long long p = in.p();
  if (p == 1) return 0;
  const auto b = static_cast<double>(in.bytes);
  double t = 0;
  double copied = static_cast<double>(p) * b;
  for (long long dist = 1; dist < p; dist *= 2) {
    const long long count = p / (2 * dist) * dist + std::max(0LL, p % (2 * dist) - dist);
    const double bytes = static_cast<double>(count) * b;
    double round = shm_time(bytes, m);
    if (in.nodes > 1) {
      round = std::max(round, rail_time(bytes, static_cast<double>(std::min(dist, in.ppn)), in, m));
    }
    t += round;
    copied += bytes;
  }
  return t + copied * m.beta_shm;
}

const Algorithm algorithm_alltoall_bruck{
    "bruck",
    Collective::alltoall,
    build_alltoall_bruck,
    nullptr,
    "message combining, ceil(log2 p) rounds of about p/2 blocks",
    cost_alltoall_bruck};

}  // namespace lanes::algos
