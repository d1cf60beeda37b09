#include "algos/simulator.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

namespace lanes::algos {

namespace {

using Bytes = std::vector<std::uint8_t>;
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::size_t kWord = 8;  // the element of a simulated reduction
// A v-collective's receive bytes outside every block: streams of their own, below every other.
constexpr std::int64_t kUntouched = -(std::int64_t{1} << 40);

// Input bytes: `stream` is a rank (its send buffer, or the bcast root's data); byte `offset` of
// a stream is byte offset % 8 of a 64-bit hash of (stream, offset / 8). Scratch poison uses
// negative streams, which no input uses.
std::uint64_t mix(std::int64_t stream, std::uint64_t word) {
  std::uint64_t h = static_cast<std::uint64_t>(stream) * 0x9E3779B97F4A7C15ULL +
                    word * 0xBF58476D1CE4E5B9ULL + 0x94D049BB133111EBULL;
  h ^= h >> 31;
  h *= 0xD6E8FEB86659FD93ULL;
  h ^= h >> 32;
  return h;
}

std::uint8_t pattern_byte(std::int64_t stream, std::size_t x) {
  return static_cast<std::uint8_t>(mix(stream, x / 8) >> (8 * (x % 8)));
}

// Writes bytes [offset, offset + n) of `stream` to `out`, each xor-ed with `flip`.
void fill_pattern(std::int64_t stream, std::size_t offset, std::uint8_t* out, std::size_t n,
                  std::uint8_t flip = 0) {
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    // Whole words at once: the same bytes as pattern_byte gives.
    for (; i < n && (offset + i) % 8 != 0; ++i) out[i] = pattern_byte(stream, offset + i) ^ flip;
    const std::uint64_t flip_word = 0x0101010101010101ULL * flip;
    for (; i + 8 <= n; i += 8) {
      const std::uint64_t h = mix(stream, (offset + i) / 8) ^ flip_word;
      std::memcpy(out + i, &h, 8);
    }
  }
  for (; i < n; ++i) out[i] = pattern_byte(stream, offset + i) ^ flip;
}

struct Sizes {
  std::size_t send = 0;
  std::size_t recv = 0;
};

Sizes buffer_sizes(Collective coll, int p, int rank, int root, std::size_t bytes) {
  const std::size_t all = static_cast<std::size_t>(p) * bytes;
  switch (coll) {
    case Collective::bcast:
      return {0, bytes};
    case Collective::scatter:
      return {rank == root ? all : 0, bytes};
    case Collective::alltoall:
      return {all, all};
    case Collective::allgather:
      return {bytes, all};
    case Collective::gather:
      return {bytes, rank == root ? all : 0};
    case Collective::reduce:
      return {bytes, rank == root ? bytes : 0};
    case Collective::allreduce:
      return {bytes, bytes};
    case Collective::barrier:
      return {0, 0};
    case Collective::reduce_scatter_block:
      return {all, bytes};
  }
  return {};
}

// Where byte `offset` of `rank`'s receive buffer comes from by the collective's definition.
struct Origin {
  int rank = 0;
  std::size_t offset = 0;
};

Origin origin_of(Collective coll, int rank, int root, std::size_t bytes, std::size_t offset) {
  const auto r = static_cast<std::size_t>(rank);
  switch (coll) {
    case Collective::bcast:
      return {root, offset};
    case Collective::scatter:
      return {root, r * bytes + offset};
    case Collective::alltoall:
      return {static_cast<int>(offset / bytes), r * bytes + offset % bytes};
    case Collective::allgather:
    case Collective::gather:
      return {static_cast<int>(offset / bytes), offset % bytes};
    case Collective::reduce:
    case Collective::allreduce:
    case Collective::barrier:
    case Collective::reduce_scatter_block:
      break;  // reductions: every rank's byte `offset`, combined (fill_expected)
  }
  return {};
}

std::string region_text(const Region& r) {
  return std::string(to_string(r.buffer)) + "[" + std::to_string(r.offset) + ",+" +
         std::to_string(r.bytes) + ")";
}

std::string op_text(const Op& op) {
  switch (op.kind) {
    case OpKind::send:
      return "send to " + std::to_string(op.peer) + " (msg " + std::to_string(op.msg) + ", " +
             region_text(op.src) + ")";
    case OpKind::recv:
      return "recv from " + std::to_string(op.peer) + " (msg " + std::to_string(op.msg) + ", " +
             region_text(op.dst) + ")";
    case OpKind::copy:
      return "copy " + region_text(op.src) + " -> " + region_text(op.dst);
    case OpKind::combine:
      return "combine " + region_text(op.src) + " into " +
             (op.acc.bytes > 0 ? region_text(op.acc) + " -> " : "") + region_text(op.dst);
  }
  return "?";
}

std::string at(int rank, std::size_t op) {
  return "rank " + std::to_string(rank) + " op " + std::to_string(op) + ": ";
}

std::string hex(std::uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

// A v-collective's receive buffer: which stretches come from where (the rest must stay as it
// was).
struct Piece {
  std::size_t at = 0;
  std::size_t bytes = 0;
  int from = 0;
  std::size_t from_offset = 0;
};

// Every rank's pieces by the v-collective's definition, from what every rank passed; empty with
// `error` set when the ranks' arguments disagree or a receive buffer's blocks overlap.
std::vector<std::vector<Piece>> v_pieces(const std::vector<VArgs>& v, int root,
                                         std::string& error) {
  const auto p = v.size();
  std::vector<std::vector<Piece>> out(p);
  const auto sz = [](int i) { return static_cast<std::size_t>(i); };
  for (std::size_t r = 0; r < p; ++r) {
    const VArgs& a = v[r];
    const auto add = [&](std::size_t at, std::size_t bytes, std::size_t from, std::size_t off) {
      if (bytes > 0) out[r].push_back({at, bytes, static_cast<int>(from), off});
    };
    for (std::size_t i = 0; i < p; ++i) {
      switch (a.coll) {
        case VCollective::scatterv:
          if (i == r) add(0, v[sz(root)].blocks[r].bytes, sz(root), v[sz(root)].blocks[r].offset);
          if (i == r && a.blocks[r].bytes != v[sz(root)].blocks[r].bytes) {
            error = "spec: rank " + std::to_string(r) + " expects another size than the root's";
          }
          break;
        case VCollective::gatherv:
          if (static_cast<int>(r) == root) add(a.blocks[i].offset, a.blocks[i].bytes, i, 0);
          if (static_cast<int>(r) == root && v[i].blocks[i].bytes != a.blocks[i].bytes) {
            error = "spec: rank " + std::to_string(i) + " sends another size than the root's";
          }
          break;
        case VCollective::allgatherv:
          add(a.blocks[i].offset, a.blocks[i].bytes, i, 0);
          if (v[i].blocks[i].bytes != a.blocks[i].bytes) {
            error = "spec: ranks " + std::to_string(r) + " and " + std::to_string(i) +
                    " disagree on rank " + std::to_string(i) + "'s size";
          }
          break;
        case VCollective::alltoallv:
          add(a.recv[i].offset, a.recv[i].bytes, i, v[i].send[r].offset);
          if (v[i].send[r].bytes != a.recv[i].bytes) {
            error = "spec: rank " + std::to_string(i) + " sends rank " + std::to_string(r) +
                    " another size than it expects";
          }
          break;
      }
    }
    std::vector<Piece> sorted = out[r];
    std::sort(sorted.begin(), sorted.end(),
              [](const Piece& x, const Piece& y) { return x.at < y.at; });
    for (std::size_t k = 1; k < sorted.size(); ++k) {
      if (sorted[k].at < sorted[k - 1].at + sorted[k - 1].bytes) {
        error = "spec: rank " + std::to_string(r) + "'s receive blocks overlap";
      }
    }
  }
  if (!error.empty()) out.clear();
  return out;
}

class Simulation {
 public:
  Simulation(Collective coll, const Layout& layout, int root, std::size_t bytes,
             const std::vector<Schedule>& schedules, bool rank_order,
             const std::vector<VArgs>* v = nullptr)
      : coll_(coll),
        layout_(layout),
        root_(root),
        bytes_(bytes),
        elem_(is_reduction(coll) ? kWord : 1),
        scheds_(schedules),
        p_(layout.size),
        rank_order_(rank_order),
        v_(v) {}

  SimResult run() {
    SimResult result;
    if (!check_layout() || !check_ops() || !match() || !check_driving() || !check_races(false) ||
        (is_reduction(coll_) && !check_races(true)) || !execute() || !check_output()) {
      result.error = error_;
      return result;
    }
    result.ok = true;
    for (const Schedule& s : scheds_) result.max_rounds = std::max(result.max_rounds, s.rounds);
    for (int r = 0; r < p_; ++r) {
      const auto& ops = scheds_[r].ops;
      for (const Op& op : ops) {
        if (op.kind != OpKind::send) continue;
        ++result.messages;
        result.bytes_moved += op.src.bytes;
        if (!layout_.same_node(r, op.peer)) {
          result.offnode_bytes += op.src.bytes;
        } else if (crosses_numa(r, op.peer)) {
          result.cross_numa_bytes += op.src.bytes;
        }
      }
    }
    return result;
  }

  bool crosses_numa(int a, int b) const {
    if (layout_.numa_of.empty()) return false;
    const int na = layout_.numa_of[static_cast<std::size_t>(a)];
    const int nb = layout_.numa_of[static_cast<std::size_t>(b)];
    return na >= 0 && nb >= 0 && na != nb;
  }

 private:
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  std::size_t buffer_size(int rank, Buffer b) const {
    switch (b) {
      case Buffer::send:
        return sizes_[rank].send;
      case Buffer::recv:
        return sizes_[rank].recv;
      case Buffer::scratch:
        return scheds_[rank].scratch_bytes;
    }
    return 0;
  }

  Bytes& buffer(int rank, Buffer b) {
    switch (b) {
      case Buffer::send:
        return send_[rank];
      case Buffer::recv:
        return recv_[rank];
      case Buffer::scratch:
        break;
    }
    return scratch_[rank];
  }

  bool check_layout() {
    const auto n = static_cast<std::size_t>(p_);
    if (p_ < 1 || layout_.node_of.size() != n || layout_.local_rank_of.size() != n ||
        layout_.lane_of.size() != n || layout_.lanes_of.size() != n) {
      return fail("layout: size " + std::to_string(p_) + " does not match its per-rank tables");
    }
    if (layout_.num_lanes < 1 || layout_.num_lanes > kMaxLanes || layout_.num_rails < 1 ||
        layout_.rail_weights.size() != static_cast<std::size_t>(layout_.num_rails)) {
      return fail("layout: " + std::to_string(layout_.num_lanes) + " lanes over " +
                  std::to_string(layout_.num_rails) + " rails with " +
                  std::to_string(layout_.rail_weights.size()) + " rail weights");
    }
    for (const auto& ranks : layout_.node_ranks) {
      LaneSet driven;
      for (const int r : ranks) driven.bits |= layout_.lanes_of[r].bits;
      if (driven != layout_.all_lanes()) {
        return fail("layout: the ranks of node " + std::to_string(layout_.node_of[ranks.front()]) +
                    " drive lanes " + driven.text() + " of " + std::to_string(layout_.num_lanes));
      }
    }
    for (int r = 0; r < p_; ++r) {
      if (layout_.node_of[r] < 0 || layout_.node_of[r] >= layout_.num_nodes()) {
        return fail("layout: rank " + std::to_string(r) + " has no valid node");
      }
      if (layout_.lane_of[r] < 0 || layout_.lane_of[r] >= layout_.num_lanes ||
          !layout_.lanes_of[r].contains(layout_.lane_of[r]) ||
          !layout_.lanes_of[r].subset_of(layout_.all_lanes())) {
        return fail("layout: rank " + std::to_string(r) + " has primary lane " +
                    std::to_string(layout_.lane_of[r]) + " and drives lanes " +
                    layout_.lanes_of[r].text() + " of " + std::to_string(layout_.num_lanes));
      }
    }
    if (root_ < 0 || root_ >= p_) {
      return fail("root " + std::to_string(root_) + " outside 0.." + std::to_string(p_ - 1));
    }
    if (scheds_.size() != n) {
      return fail(std::to_string(scheds_.size()) + " schedules for " + std::to_string(p_) +
                  " ranks");
    }
    sizes_.resize(n);
    if (v_ != nullptr) {
      if (v_->size() != n)
        return fail("spec: arguments of " + std::to_string(v_->size()) + " ranks");
      for (std::size_t r = 0; r < n; ++r) {
        const VArgs& a = (*v_)[r];
        const bool pairwise = a.coll == VCollective::alltoallv;
        if (pairwise ? a.send.size() != n || a.recv.size() != n : a.blocks.size() != n) {
          return fail("spec: rank " + std::to_string(r) + " passes blocks for another size");
        }
        sizes_[r] = {v_send_bytes(a), v_recv_bytes(a)};
      }
      std::string error;
      pieces_ = v_pieces(*v_, root_, error);
      if (!error.empty()) return fail(error);
      return true;
    }
    for (int r = 0; r < p_; ++r) sizes_[r] = buffer_sizes(coll_, p_, r, root_, bytes_);
    return true;
  }

  bool check_region(int rank, std::size_t i, const Region& region, const char* role) {
    const std::size_t size = buffer_size(rank, region.buffer);
    if (region.offset > size || region.bytes > size - region.offset) {
      return fail(at(rank, i) + role + " " + region_text(region) + " lies outside the " +
                  to_string(region.buffer) + " buffer of " + std::to_string(size) + " bytes");
    }
    return true;
  }

  // Per op: deps, peers, lanes, rounds, regions and message numbering.
  bool check_ops() {
    std::vector<std::uint32_t> sent(static_cast<std::size_t>(p_));
    std::vector<std::uint32_t> received(static_cast<std::size_t>(p_));
    std::vector<int> sends_in_round, recvs_in_round;
    for (int r = 0; r < p_; ++r) {
      const Schedule& s = scheds_[r];
      std::fill(sent.begin(), sent.end(), 0);
      std::fill(received.begin(), received.end(), 0);
      sends_in_round.assign(static_cast<std::size_t>(std::max(s.rounds, 0)), 0);
      recvs_in_round.assign(static_cast<std::size_t>(std::max(s.rounds, 0)), 0);
      for (std::size_t i = 0; i < s.ops.size(); ++i) {
        const Op& op = s.ops[i];
        for (OpId d : op.deps) {
          if (d >= i) {
            return fail(at(r, i) + "depends on op " + std::to_string(d) +
                        ", which is not an earlier op");
          }
        }
        if (op.kind == OpKind::copy || op.kind == OpKind::combine) {
          if (!check_region(r, i, op.src, "source") || !check_region(r, i, op.dst, "destination")) {
            return false;
          }
          if (overlaps(op.src, op.dst)) {
            return fail(at(r, i) + op_text(op) + ": source overlaps destination");
          }
          if (op.kind == OpKind::combine && !check_combine(r, i, op)) return false;
        } else {
          if (op.peer < 0 || op.peer >= p_) {
            return fail(at(r, i) + op_text(op) + ": peer outside 0.." + std::to_string(p_ - 1));
          }
          if (op.peer == r) return fail(at(r, i) + op_text(op) + ": message to itself");
          if (op.lanes.empty() || !op.lanes.subset_of(layout_.all_lanes())) {
            return fail(at(r, i) + op_text(op) + ": lanes " + op.lanes.text() +
                        " but the layout has " + std::to_string(layout_.num_lanes));
          }
          if (s.rounds > 0 && (op.round < 0 || op.round >= s.rounds)) {
            return fail(at(r, i) + op_text(op) + ": round " + std::to_string(op.round) +
                        " but the schedule claims " + std::to_string(s.rounds) + " rounds");
          }
          if (s.ports > 0 && s.rounds > 0) {
            auto& used = op.kind == OpKind::send ? sends_in_round : recvs_in_round;
            if (++used[static_cast<std::size_t>(op.round)] > s.ports) {
              return fail(at(r, i) + op_text(op) + ": more than " + std::to_string(s.ports) +
                          (op.kind == OpKind::send ? " sends" : " receives") + " in round " +
                          std::to_string(op.round) + ", but the schedule promises " +
                          std::to_string(s.ports) + " ports");
            }
          }
          auto& counter = op.kind == OpKind::send ? sent[op.peer] : received[op.peer];
          if (op.msg != counter) {
            return fail(at(r, i) + op_text(op) + ": message number should be " +
                        std::to_string(counter) + " (finalize() not called?)");
          }
          ++counter;
          if (op.kind == OpKind::send && !check_region(r, i, op.src, "source")) return false;
          if (op.kind == OpKind::recv && !check_region(r, i, op.dst, "destination")) return false;
        }
        if (op.kind != OpKind::send && op.dst.buffer == Buffer::send && op.dst.bytes > 0) {
          return fail(at(r, i) + op_text(op) + ": writes into the send buffer, which is input");
        }
      }
    }
    return true;
  }

  // A combine belongs to a reduction and joins equal, element-aligned regions.
  bool check_combine(int r, std::size_t i, const Op& op) {
    if (!is_reduction(coll_)) {
      return fail(at(r, i) + op_text(op) + ": a combine in a " + to_string(coll_));
    }
    if (op.src.bytes != op.dst.bytes) {
      return fail(at(r, i) + op_text(op) + ": source and destination differ in size");
    }
    if (op.src.offset % elem_ != 0 || op.dst.offset % elem_ != 0 || op.src.bytes % elem_ != 0) {
      return fail(at(r, i) + op_text(op) + ": not on " + std::to_string(elem_) +
                  "-byte element boundaries");
    }
    if (op.acc.bytes > 0) {
      if (!check_region(r, i, op.acc, "left operand")) return false;
      if (op.acc.bytes != op.dst.bytes || op.acc.offset % elem_ != 0) {
        return fail(at(r, i) + op_text(op) + ": left operand differs in size or alignment");
      }
      // acc is dst exactly or apart from it, in place too (send and recv one buffer).
      const bool in_place = v_ == nullptr && sizes_[r].recv == sizes_[r].send;
      const auto as_in_place = [in_place](Region x) {
        if (in_place && x.buffer == Buffer::send) x.buffer = Buffer::recv;
        return x;
      };
      const Region a = as_in_place(op.acc);
      const Region d = as_in_place(op.dst);
      if (overlaps(a, d) && !(a == d)) {
        return fail(at(r, i) + op_text(op) + ": left operand partly overlaps the destination");
      }
    }
    return true;
  }

  // Pairs every send with its receive; fills the global op numbering used by execute().
  bool match() {
    base_.resize(static_cast<std::size_t>(p_) + 1, 0);
    for (int r = 0; r < p_; ++r) base_[r + 1] = base_[r] + scheds_[r].ops.size();
    if (base_[p_] >= kNone) return fail("too many ops to simulate");
    partner_.assign(base_[p_], kNone);

    // Per rank: receives keyed (peer << 32 | op index), sorted. Within one peer, op order is
    // message order (check_ops verified the numbering), so message j is the j-th entry.
    std::vector<std::size_t> first(static_cast<std::size_t>(p_) + 1, 0);
    std::vector<std::uint64_t> keys;
    for (int r = 0; r < p_; ++r) {
      const auto& ops = scheds_[r].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].kind == OpKind::recv) {
          keys.push_back(static_cast<std::uint64_t>(ops[i].peer) << 32 | i);
        }
      }
      first[r + 1] = keys.size();
      std::sort(keys.begin() + static_cast<std::ptrdiff_t>(first[r]), keys.end());
    }
    std::vector<std::size_t> cursor(first.begin(), first.end() - 1);
    for (int a = 0; a < p_; ++a) {
      const auto& ops = scheds_[a].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& send = ops[i];
        if (send.kind != OpKind::send) continue;
        const int b = send.peer;
        // Senders come in increasing order, so each rank's keys are walked once.
        std::size_t& c = cursor[b];
        while (c < first[b + 1] && keys[c] >> 32 < static_cast<std::uint64_t>(a)) ++c;
        const std::size_t j = c + send.msg;
        if (j >= first[b + 1] || keys[j] >> 32 != static_cast<std::uint64_t>(a)) {
          return fail(at(a, i) + op_text(send) + " has no matching recv at rank " +
                      std::to_string(b));
        }
        const auto k = static_cast<std::uint32_t>(keys[j]);
        const Op& recv = scheds_[b].ops[k];
        if (recv.dst.bytes != send.src.bytes) {
          return fail(at(a, i) + op_text(send) + " sends " + std::to_string(send.src.bytes) +
                      " bytes but its recv (rank " + std::to_string(b) + " op " +
                      std::to_string(k) + ") expects " + std::to_string(recv.dst.bytes));
        }
        if (recv.lanes != send.lanes) {
          return fail(at(a, i) + op_text(send) + " uses lanes " + send.lanes.text() +
                      " but its recv (rank " + std::to_string(b) + " op " + std::to_string(k) +
                      ") uses lanes " + recv.lanes.text());
        }
        if (scheds_[a].rounds > 0 && scheds_[b].rounds > 0 && recv.round != send.round) {
          return fail(at(a, i) + op_text(send) + " is in round " + std::to_string(send.round) +
                      " but its recv (rank " + std::to_string(b) + " op " + std::to_string(k) +
                      ") is in round " + std::to_string(recv.round));
        }
        const auto g = static_cast<std::uint32_t>(base_[a] + i);
        const auto h = static_cast<std::uint32_t>(base_[b] + k);
        partner_[g] = h;
        partner_[h] = g;
      }
    }
    for (int b = 0; b < p_; ++b) {
      const auto& ops = scheds_[b].ops;
      for (std::size_t k = 0; k < ops.size(); ++k) {
        if (ops[k].kind == OpKind::recv && partner_[base_[b] + k] == kNone) {
          return fail(at(b, k) + op_text(ops[k]) + " has no matching send at rank " +
                      std::to_string(ops[k].peer));
        }
      }
    }
    return true;
  }

  // A rank sends off its node only over lanes it drives, except in a round in which it is the
  // only rank of its node sending off the node: then it may use any of the node's lanes.
  bool check_driving() {
    // (node, round) -> the first rank with an off-node send in it, or -2 once a second one has.
    std::vector<std::vector<int>> sender(static_cast<std::size_t>(layout_.num_nodes()));
    for (int r = 0; r < p_; ++r) {
      const Schedule& s = scheds_[r];
      auto& of_node = sender[static_cast<std::size_t>(layout_.node_of[r])];
      for (const Op& op : s.ops) {
        if (op.kind != OpKind::send || layout_.same_node(r, op.peer) || s.rounds <= 0) continue;
        if (of_node.size() <= static_cast<std::size_t>(op.round)) {
          of_node.resize(static_cast<std::size_t>(op.round) + 1, -1);
        }
        int& first = of_node[static_cast<std::size_t>(op.round)];
        if (first == -1) first = r;
        if (first != r) first = -2;
      }
    }
    for (int r = 0; r < p_; ++r) {
      const Schedule& s = scheds_[r];
      for (std::size_t i = 0; i < s.ops.size(); ++i) {
        const Op& op = s.ops[i];
        if (op.kind != OpKind::send || layout_.same_node(r, op.peer)) continue;
        if (op.lanes.subset_of(layout_.lanes_of[r])) continue;
        const auto& of_node = sender[static_cast<std::size_t>(layout_.node_of[r])];
        if (s.rounds > 0 && of_node[static_cast<std::size_t>(op.round)] == r) continue;
        return fail(at(r, i) + op_text(op) + " uses lanes " + op.lanes.text() + ", but rank " +
                    std::to_string(r) + " drives lanes " + layout_.lanes_of[r].text() +
                    (s.rounds > 0 ? " and is not its node's only sender off the node in round " +
                                        std::to_string(op.round)
                                  : ""));
      }
    }
    return true;
  }

  // Two ops of one rank that touch overlapping bytes, one of them writing, must be ordered by
  // deps; otherwise the result depends on timing. `as_in_place` (reductions): with send and recv
  // one buffer, where the copy of the input to the same offset of recv writes nothing.
  bool check_races(bool as_in_place) {
    struct Access {
      std::size_t begin, end;
      std::uint32_t op;
      bool write;
    };
    std::vector<Access> accesses[3];
    // reach: row i holds the ops that op i depends on, directly or through others; built for a
    // rank once it has a pair of overlapping accesses (deps point to earlier ops).
    std::vector<std::uint64_t> reach;
    std::size_t words = 0;
    bool reach_built = false;
    for (int r = 0; r < p_; ++r) {
      const auto& ops = scheds_[r].ops;
      const bool in_place = as_in_place && v_ == nullptr && sizes_[r].recv == sizes_[r].send;
      for (auto& list : accesses) list.clear();
      reach_built = false;
      const auto ordered = [&](std::uint32_t later, std::uint32_t earlier) {
        if (!reach_built) {
          words = (ops.size() + 63) / 64;
          reach.assign(ops.size() * words, 0);
          for (std::size_t i = 0; i < ops.size(); ++i) {
            std::uint64_t* row = reach.data() + i * words;
            for (OpId d : ops[i].deps) {
              const std::uint64_t* from = reach.data() + d * words;
              for (std::size_t w = 0; w < words; ++w) row[w] |= from[w];
              row[d / 64] |= std::uint64_t{1} << (d % 64);
            }
          }
          reach_built = true;
        }
        return (reach[later * words + earlier / 64] >> (earlier % 64) & 1) != 0;
      };
      // The race reported: the first later op, then its first earlier one.
      std::pair<std::uint32_t, std::uint32_t> race{kNone, kNone};
      const auto add = [&](const Region& region, std::size_t i, bool write) {
        if (region.bytes == 0) return;
        // A reduction may run in place (send and recv one buffer): its schedule must be correct
        // either way, so send and recv count as one buffer here.
        const Buffer b = in_place && region.buffer == Buffer::send ? Buffer::recv : region.buffer;
        accesses[static_cast<int>(b)].push_back(
            {region.offset, region.offset + region.bytes, static_cast<std::uint32_t>(i), write});
      };
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        const bool identity = in_place && op.kind == OpKind::copy &&
                              op.src.buffer == Buffer::send && op.dst.buffer == Buffer::recv &&
                              op.src.offset == op.dst.offset;
        if (op.kind != OpKind::recv) add(op.src, i, false);
        if (op.kind == OpKind::combine) add(op.acc, i, false);
        if (op.kind != OpKind::send && !identity) add(op.dst, i, true);
      }
      // Sweep by start offset; reads are compared against writes only.
      std::vector<Access> live_reads;
      std::vector<Access> live_writes;
      for (auto& list : accesses) {
        if (std::none_of(list.begin(), list.end(), [](const Access& x) { return x.write; })) {
          continue;  // reads only
        }
        std::sort(list.begin(), list.end(),
                  [](const Access& x, const Access& y) { return x.begin < y.begin; });
        live_reads.clear();
        live_writes.clear();
        const auto scan = [&](std::vector<Access>& live, const Access& x) {
          std::size_t kept = 0;
          for (const Access& y : live) {
            if (y.end <= x.begin) continue;  // ended: later accesses start even further right
            live[kept++] = y;
            if (y.op == x.op) continue;
            const std::pair<std::uint32_t, std::uint32_t> pair{std::max(x.op, y.op),
                                                               std::min(x.op, y.op)};
            if (pair < race && !ordered(pair.first, pair.second)) race = pair;
          }
          live.resize(kept);
        };
        for (const Access& x : list) {
          scan(live_writes, x);
          if (x.write) scan(live_reads, x);
          (x.write ? live_writes : live_reads).push_back(x);
        }
      }
      if (race.first != kNone) {
        const auto [later, earlier] = race;
        return fail(at(r, later) + op_text(ops[later]) + " races with op " +
                    std::to_string(earlier) + " (" + op_text(ops[earlier]) +
                    "): overlapping bytes, one of them written, and no dependency" +
                    (in_place ? " (in place: send and recv one buffer)" : ""));
      }
    }
    return true;
  }

  void fill_buffers() {
    send_.resize(static_cast<std::size_t>(p_));
    recv_.resize(static_cast<std::size_t>(p_));
    scratch_.resize(static_cast<std::size_t>(p_));
    for (int r = 0; r < p_; ++r) {
      send_[r].resize(sizes_[r].send);
      fill_pattern(r, 0, send_[r].data(), send_[r].size());
      // Outputs start as the complement of what they should end as: no byte is right by luck.
      const bool input = v_ == nullptr && coll_ == Collective::bcast && r == root_;
      fill_expected(r, recv_[r], input ? 0 : 0xff);
      scratch_[r].resize(scheds_[r].scratch_bytes);
      fill_pattern(-1 - r, 0, scratch_[r].data(), scratch_[r].size());
    }
  }

  // What `rank`'s receive buffer holds by the collective's definition (each byte xor `flip`).
  void fill_expected(int rank, Bytes& out, std::uint8_t flip = 0) const {
    out.resize(sizes_[rank].recv);
    if (v_ != nullptr) {
      // Bytes outside every block keep what they held: a stream of their own, never flipped.
      fill_pattern(kUntouched - rank, 0, out.data(), out.size());
      for (const Piece& piece : pieces_[static_cast<std::size_t>(rank)]) {
        fill_pattern(piece.from, piece.from_offset, out.data() + piece.at, piece.bytes, flip);
      }
      return;
    }
    if (is_reduction(coll_)) {
      if (out.empty()) return;
      if (reduced_.empty()) {
        // The wrapping sum of every rank's words: a contribution missing or counted twice changes
        // every word it touches (the inputs are hashes). In rank order: the composition of
        // every rank's map, rank 0's first.
        const std::size_t n = sizes_[0].send;
        Bytes one(n);
        std::vector<std::uint64_t> sum(n / kWord, 0);
        for (int r = 0; r < p_; ++r) {
          fill_pattern(r, 0, one.data(), one.size());
          for (std::size_t w = 0; w < sum.size(); ++w) {
            const std::uint64_t x = word_at(one.data(), w * kWord);
            sum[w] = !rank_order_ ? sum[w] + x : r == 0 ? x : compose(sum[w], x);
          }
        }
        reduced_.resize(n);
        std::memcpy(reduced_.data(), sum.data(), n);
      }
      // reduce_scatter_block: rank r's block of the sum; the others: the whole vector.
      const std::size_t at =
          coll_ == Collective::reduce_scatter_block ? static_cast<std::size_t>(rank) * bytes_ : 0;
      for (std::size_t x = 0; x < out.size(); ++x) out[x] = reduced_[at + x] ^ flip;
      return;
    }
    // Every block comes from one contiguous stretch of one rank's input.
    for (std::size_t x = 0; x < out.size();) {
      const Origin o = origin_of(coll_, rank, root_, bytes_, x);
      const std::size_t run = bytes_ - x % bytes_;
      fill_pattern(o.rank, o.offset, out.data() + x, run, flip);
      x += run;
    }
  }

  static std::uint64_t word_at(const std::uint8_t* data, std::size_t offset) {
    std::uint64_t w;
    std::memcpy(&w, data + offset, kWord);
    return w;
  }

  // A word as an affine map x -> a x + b modulo 2^32: a its low half made odd, b its high half.
  // The map `left` then the map `right`: associative, not commutative, and a group (a stays odd),
  // so a contribution out of rank order, missing or doubled changes the word.
  static std::uint64_t compose(std::uint64_t left, std::uint64_t right) {
    const auto al = static_cast<std::uint32_t>(left | 1);
    const auto bl = static_cast<std::uint32_t>(left >> 32);
    const auto ar = static_cast<std::uint32_t>(right | 1);
    const auto br = static_cast<std::uint32_t>(right >> 32);
    const std::uint32_t a = ar * al;
    const std::uint32_t b = ar * bl + br;
    return static_cast<std::uint64_t>(b) << 32 | a;
  }

  // The simulator's reduction: wrapping addition of 64-bit words (exact, commutative), or with
  // rank_order_ the composition of affine maps, the left operand first.
  void combine_words(int rank, const Op& op) {
    const Bytes& from = buffer(rank, op.src.buffer);
    const Region& left = op.acc.bytes > 0 ? op.acc : op.dst;
    const Bytes& with = buffer(rank, left.buffer);
    Bytes& to = buffer(rank, op.dst.buffer);
    for (std::size_t x = 0; x < op.src.bytes; x += kWord) {
      const std::uint64_t a = word_at(with.data(), left.offset + x);
      const std::uint64_t s = word_at(from.data(), op.src.offset + x);
      const std::uint64_t w = !rank_order_ ? a + s : op.src_first ? compose(s, a) : compose(a, s);
      std::memcpy(to.data() + op.dst.offset + x, &w, kWord);
    }
  }

  void move_bytes(int from_rank, const Region& src, int to_rank, const Region& dst) {
    if (src.bytes == 0) return;
    const Bytes& from = buffer(from_rank, src.buffer);
    Bytes& to = buffer(to_rank, dst.buffer);
    std::memmove(to.data() + dst.offset, from.data() + src.offset, src.bytes);
  }

  // Runs all ranks: an op starts once its deps completed; a copy completes at once; a send and
  // its recv complete together once both started (rendezvous).
  bool execute() {
    fill_buffers();
    enum : std::uint8_t { kWaiting, kStarted, kDone };
    // What the run touches per op, in one record: it visits the ops of all ranks in an order that
    // defeats the caches, and one record costs one miss where separate tables cost several.
    struct Node {
      std::size_t offset = 0;  // send: source; recv: destination; copy: unused
      std::size_t bytes = 0;
      std::uint32_t partner = kNone;
      std::uint32_t pending = 0;
      std::uint32_t first_dependent = 0;
      int rank = 0;
      OpKind kind = OpKind::copy;
      Buffer buffer = Buffer::recv;
      std::uint8_t state = kWaiting;
    };
    const std::size_t total = base_[p_];
    std::vector<Node> nodes(total + 1);
    for (int r = 0; r < p_; ++r) {
      const auto& ops = scheds_[r].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        Node& n = nodes[base_[r] + i];
        const Region& region = op.kind == OpKind::send ? op.src : op.dst;
        n.offset = region.offset;
        n.bytes = region.bytes;
        n.buffer = region.buffer;
        n.partner = partner_[base_[r] + i];
        n.pending = static_cast<std::uint32_t>(op.deps.size());
        n.rank = r;
        n.kind = op.kind;
        for (OpId d : op.deps) ++nodes[base_[r] + d + 1].first_dependent;
      }
    }
    for (std::size_t g = 0; g < total; ++g) {
      nodes[g + 1].first_dependent += nodes[g].first_dependent;
    }
    std::vector<std::uint32_t> dependents(nodes[total].first_dependent);
    {
      std::vector<std::uint32_t> fill(total);
      for (std::size_t g = 0; g < total; ++g) fill[g] = nodes[g].first_dependent;
      for (int r = 0; r < p_; ++r) {
        const auto& ops = scheds_[r].ops;
        for (std::size_t i = 0; i < ops.size(); ++i) {
          for (OpId d : ops[i].deps) {
            dependents[fill[base_[r] + d]++] = static_cast<std::uint32_t>(base_[r] + i);
          }
        }
      }
    }
    std::vector<std::uint32_t> ready;
    for (std::size_t g = total; g-- > 0;) {
      if (nodes[g].pending == 0) ready.push_back(static_cast<std::uint32_t>(g));
    }
    std::size_t done = 0;
    const auto complete = [&](std::uint32_t g) {
      nodes[g].state = kDone;
      ++done;
      for (std::uint32_t k = nodes[g].first_dependent; k < nodes[g + 1].first_dependent; ++k) {
        if (--nodes[dependents[k]].pending == 0) ready.push_back(dependents[k]);
      }
    };
    while (!ready.empty()) {
      const std::uint32_t g = ready.back();
      ready.pop_back();
      Node& n = nodes[g];
      if (n.kind == OpKind::copy || n.kind == OpKind::combine) {
        const Op& op = scheds_[n.rank].ops[g - base_[n.rank]];
        if (n.kind == OpKind::copy) {
          move_bytes(n.rank, op.src, n.rank, op.dst);
        } else {
          combine_words(n.rank, op);
        }
        complete(g);
        order_.push_back(g);
        continue;
      }
      n.state = kStarted;
      const Node& m = nodes[n.partner];
      if (m.state != kStarted) continue;
      const Node& from = n.kind == OpKind::send ? n : m;
      const Node& to = n.kind == OpKind::send ? m : n;
      if (from.bytes > 0) {
        std::memmove(buffer(to.rank, to.buffer).data() + to.offset,
                     buffer(from.rank, from.buffer).data() + from.offset, from.bytes);
      }
      complete(g);
      complete(n.partner);
      order_.push_back(n.kind == OpKind::send ? g : n.partner);  // the send before its recv
      order_.push_back(n.kind == OpKind::send ? n.partner : g);
    }
    if (done == total) return true;

    // Deadlock: list the blocked send/recvs (started, partner not started) and the stuck ranks.
    std::string blocked;
    std::string ranks;
    int shown = 0;
    int stuck_ranks = 0;
    for (int r = 0; r < p_; ++r) {
      bool stuck = false;
      for (std::size_t g = base_[r]; g < base_[r + 1]; ++g) {
        if (nodes[g].state == kDone) continue;
        stuck = true;
        if (nodes[g].state != kStarted) continue;
        if (shown++ < 4) {
          const Node& other = nodes[nodes[g].partner];
          blocked += std::string(blocked.empty() ? "" : "; ") + at(r, g - base_[r]) +
                     op_text(scheds_[r].ops[g - base_[r]]) + " waits for rank " +
                     std::to_string(other.rank) + " op " +
                     std::to_string(nodes[g].partner - base_[other.rank]) + " (" +
                     (other.kind == OpKind::send ? "send" : "recv") + "), which cannot start";
        }
      }
      if (stuck && stuck_ranks++ < 16) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    }
    if (shown > 4) blocked += "; and " + std::to_string(shown - 4) + " more";
    if (stuck_ranks > 16) ranks += ",...";
    return fail("deadlock: " + blocked + " (" + std::to_string(total - done) + " of " +
                std::to_string(total) + " ops cannot complete; stuck ranks " + ranks + ")");
  }

  // A barrier: every rank's ops, taken together, must have heard (through messages and deps)
  // from every rank, so that no rank leaves before all arrived.
  bool check_heard_from_all() {
    const std::size_t words = (static_cast<std::size_t>(p_) + 63) / 64;
    std::vector<std::uint64_t> heard(base_[p_] * words, 0);
    const auto row = [&](std::size_t g) { return heard.data() + g * words; };
    for (const std::uint32_t g : order_) {
      int r = 0;
      while (base_[r + 1] <= g) ++r;
      const Op& op = scheds_[r].ops[g - base_[r]];
      std::uint64_t* mine = row(g);
      mine[r / 64] |= std::uint64_t{1} << (r % 64);
      for (OpId d : op.deps) {
        const std::uint64_t* from = row(base_[r] + d);
        for (std::size_t w = 0; w < words; ++w) mine[w] |= from[w];
      }
      if (op.kind == OpKind::recv) {
        const std::uint64_t* from = row(partner_[g]);
        for (std::size_t w = 0; w < words; ++w) mine[w] |= from[w];
      }
    }
    for (int r = 0; r < p_; ++r) {
      std::vector<std::uint64_t> all(words, 0);
      all[r / 64] |= std::uint64_t{1} << (r % 64);
      for (std::size_t g = base_[r]; g < base_[r + 1]; ++g) {
        for (std::size_t w = 0; w < words; ++w) all[w] |= row(g)[w];
      }
      for (int x = 0; x < p_; ++x) {
        if ((all[x / 64] >> (x % 64) & 1) == 0) {
          return fail("barrier: rank " + std::to_string(r) + " can leave before rank " +
                      std::to_string(x) + " arrived (no chain of messages from it)");
        }
      }
    }
    return true;
  }

  bool check_output() {
    if (coll_ == Collective::barrier) return check_heard_from_all();
    Bytes want;
    for (int r = 0; r < p_; ++r) {
      const Bytes& got = recv_[r];
      fill_expected(r, want);
      if (got == want) continue;
      std::size_t x = 0;
      while (got[x] == want[x]) ++x;
      if (is_reduction(coll_)) {
        const std::size_t w = x / kWord * kWord;
        return fail("rank " + std::to_string(r) + ": recv word at byte " + std::to_string(w) +
                    " is not the combination of every rank's word there" +
                    (rank_order_ ? " in rank order (a contribution is out of order, "
                                 : " (a contribution is ") +
                    "missing, counted twice, or the word was never written)");
      }
      Origin o{-1, 0};
      if (v_ == nullptr) {
        o = origin_of(coll_, r, root_, bytes_, x);
      } else {
        for (const Piece& piece : pieces_[static_cast<std::size_t>(r)]) {
          if (x >= piece.at && x < piece.at + piece.bytes)
            o = {piece.from, piece.from_offset + x - piece.at};
        }
      }
      std::string writer = "no op writes it";
      const auto& ops = scheds_[r].ops;
      const Region probe{Buffer::recv, x, 1};
      for (std::size_t i = ops.size(); i-- > 0;) {
        if (ops[i].kind != OpKind::send && overlaps(ops[i].dst, probe)) {
          writer = "last written by op " + std::to_string(i) + " (" + op_text(ops[i]) + ")";
          break;
        }
      }
      return fail("rank " + std::to_string(r) + ": recv byte " + std::to_string(x) + " is " +
                  hex(got[x]) + " but should be " + hex(want[x]) +
                  (o.rank < 0 ? std::string(", as before the call (outside every block); ")
                              : ", byte " + std::to_string(o.offset) + " of rank " +
                                    std::to_string(o.rank) + "'s input; ") +
                  writer);
    }
    return true;
  }

  Collective coll_;
  const Layout& layout_;
  int root_;
  std::size_t bytes_;
  std::size_t elem_;  // reductions: the simulated element, a 64-bit word
  const std::vector<Schedule>& scheds_;
  int p_;
  std::string error_;
  std::vector<Sizes> sizes_;
  std::vector<std::size_t> base_;       // rank -> index of its first op in the global numbering
  std::vector<std::uint32_t> partner_;  // global op -> its matching send/recv
  std::vector<Bytes> send_, recv_, scratch_;
  mutable Bytes reduced_;             // reductions: the expected result, computed once
  std::vector<std::uint32_t> order_;  // global ops in completion order, sends before their recvs
  bool rank_order_;                   // reductions: a non-commutative operation (see compose)
  const std::vector<VArgs>* v_;       // a v-collective: every rank's arguments
  std::vector<std::vector<Piece>> pieces_;  // a v-collective: every rank's expected pieces
};

}  // namespace

SimResult simulate_schedules(Collective coll, const Layout& layout, int root, std::size_t bytes,
                             const std::vector<Schedule>& schedules, bool rank_order) {
  return Simulation(coll, layout, root, bytes, schedules, rank_order).run();
}

SimResult simulate_v(const VAlgorithm& algo, const Layout& layout, int root,
                     const std::vector<VArgs>& args) {
  SimResult result;
  if (root < 0 || root >= layout.size || args.size() != static_cast<std::size_t>(layout.size)) {
    result.error = "root " + std::to_string(root) + " or " + std::to_string(args.size()) +
                   " ranks' arguments do not fit " + layout.describe();
    return result;
  }
  std::vector<VArgs> full = args;
  for (int r = 0; r < layout.size; ++r) {
    full[static_cast<std::size_t>(r)].coll = algo.coll;
    full[static_cast<std::size_t>(r)].rank = r;
    full[static_cast<std::size_t>(r)].root = root;
  }
  std::vector<Schedule> schedules(static_cast<std::size_t>(layout.size));
  for (int r = 0; r < layout.size; ++r) {
    VArgs mine = full[static_cast<std::size_t>(r)];
    // A local algorithm must not need what a rank other than the root does not know.
    if (algo.local && r != root && algo.coll != VCollective::alltoallv) {
      for (std::size_t i = 0; i < mine.blocks.size(); ++i) {
        if (static_cast<int>(i) != r) mine.blocks[i] = Block{};
      }
    }
    try {
      schedules[static_cast<std::size_t>(r)] = algo.build(layout, mine);
    } catch (const std::exception& e) {
      result.error = "rank " + std::to_string(r) + ": building " +
                     std::string(to_string(algo.coll)) + " " + std::string(algo.name) +
                     " failed: " + e.what();
      return result;
    }
  }
  return Simulation(Collective::alltoall, layout, root, 0, schedules, false, &full).run();
}

SimResult simulate(const Algorithm& algo, const Layout& layout, int root, std::size_t bytes,
                   bool rank_order) {
  SimResult result;
  if (root < 0 || root >= layout.size) {
    result.error =
        "root " + std::to_string(root) + " outside 0.." + std::to_string(layout.size - 1);
    return result;
  }
  if (algo.applicable != nullptr && !algo.applicable(layout)) {
    result.error = std::string(algo.name) + " does not apply to " + layout.describe();
    return result;
  }
  const std::size_t elem = is_reduction(algo.coll) ? kWord : 1;
  if (bytes % elem != 0) {
    result.error = "a simulated reduction moves 64-bit words: " + std::to_string(bytes) +
                   " bytes is not a multiple of 8";
    return result;
  }
  std::vector<Schedule> schedules(static_cast<std::size_t>(layout.size));
  for (int r = 0; r < layout.size; ++r) {
    try {
      schedules[r] = algo.build(layout, CollArgs{algo.coll, r, root, bytes, elem});
    } catch (const std::exception& e) {
      result.error = "rank " + std::to_string(r) + ": building " + std::string(algo.name) +
                     " failed: " + e.what();
      return result;
    }
  }
  return simulate_schedules(algo.coll, layout, root, bytes, schedules, rank_order);
}

}  // namespace lanes::algos
