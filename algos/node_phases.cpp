#include "algos/node_phases.hpp"

#include <algorithm>

#include "algos/numa_domains.hpp"

namespace lanes::algos {

namespace {

// The parts local index k combines inside its domain: those of the other domains' ranks it
// stands for (NumaDomains::proxy), ascending, then its own. With one domain: its own part only.
std::vector<int> parts_combined_by(const NumaDomains& domains, int k) {
  std::vector<int> parts;
  const int d = domains.domain_of[static_cast<std::size_t>(k)];
  for (int j = 0; j < static_cast<int>(domains.domain_of.size()); ++j) {
    if (domains.domain_of[static_cast<std::size_t>(j)] != d && domains.proxy(d, j) == k)
      parts.push_back(j);
  }
  parts.push_back(k);
  return parts;
}

// Where a node reduce-scatter at one local rank keeps what it receives and what it combines for
// others, for parts of at most `largest` bytes in chunks of `chunk`: the bounce slots of the
// phase inside its domain (the whole node when flat), those of the phase between the domains,
// and a partial per part of another domain's rank it combines.
struct NodeScratch {
  std::size_t inside = 0;
  std::size_t between = 0;
  std::size_t partials = 0;
  std::size_t total() const { return inside + between + partials; }
};

// Bounce bytes of a stream of `parts` parts from `peers` peers: a slot per peer for a single
// chunk, two (used by turns) for more.
std::size_t stream_bounce_bytes(std::size_t peers, std::size_t parts, std::size_t largest,
                                std::size_t chunk) {
  if (largest == 0 || peers == 0) return 0;
  const std::size_t items = parts * ((largest + chunk - 1) / chunk);
  return peers * (items > 1 ? 2 : 1) * std::min(largest, chunk);
}

NodeScratch node_scratch(const NumaDomains& domains, int i, std::size_t largest,
                         std::size_t chunk) {
  const std::size_t parts = parts_combined_by(domains, i).size();
  const auto& members = domains.members[static_cast<std::size_t>(domains.domain_of[i])];
  NodeScratch plan;
  plan.inside = stream_bounce_bytes(members.size() - 1, parts, largest, chunk);
  plan.between =
      stream_bounce_bytes(static_cast<std::size_t>(domains.count() - 1), 1, largest, chunk);
  plan.partials = (parts - 1) * largest;
  return plan;
}

// One chunk this rank combines: `own` (its operand) with the same chunk of every other rank of
// the stream, into `dst`, once `after` completed.
struct StreamItem {
  Region own;
  Region dst;
  std::vector<OpId> after;
};
struct StreamOut {
  std::vector<OpId> done;  // per item: its combination complete
  std::vector<OpId> read;  // per item: the op that reads `own`
};

// Combines every item with the same chunk of each rank of `from` (this rank at place `me`),
// received item by item into bounce slots at scratch offset `bounce_at`: a slot per peer, two
// used by turns when there are several items, so that the next chunk arrives while this one is
// combined. The operands keep the order of `from`: c_0 (+) (c_1 (+) ... (c_{me-1} (+) c_me))
// (+) c_{me+1} ... (+) c_{n-1}.
StreamOut combine_stream(Schedule& s, const Layout& layout, const std::vector<int>& from, int me,
                         const std::vector<StreamItem>& items, std::size_t bounce_at, int round) {
  const int n = static_cast<int>(from.size());
  std::size_t slot = 0;
  for (const StreamItem& item : items) slot = std::max(slot, item.dst.bytes);
  const std::size_t depth = items.size() > 1 ? 2 : 1;
  const auto bounce = [&](int j, std::size_t t, std::size_t bytes) {
    const auto peer = static_cast<std::size_t>(j < me ? j : j - 1);
    return Region{Buffer::scratch, bounce_at + (peer * depth + t % depth) * slot, bytes};
  };
  StreamOut out;
  for (std::size_t t = 0; t < items.size(); ++t) {
    const StreamItem& item = items[t];
    const std::size_t bytes = item.dst.bytes;
    if (n == 1) {
      out.done.push_back(s.copy(item.own, item.dst, item.after));
      out.read.push_back(out.done.back());
      continue;
    }
    // The item's receives wait for the combines that read their slots `depth` items ago.
    std::vector<OpId> free_slot;
    if (t >= depth) free_slot = {out.done[t - depth]};
    std::vector<OpId> got(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      if (j == me) continue;
      const int peer = from[static_cast<std::size_t>(j)];
      got[static_cast<std::size_t>(j)] =
          s.recv(peer, layout.lanes_of[peer], bounce(j, t, bytes), free_slot, round);
    }
    // c_{me-1} (+) c_me first (or c_me (+) c_{me+1} for me = 0), then leftwards, then rightwards.
    int left = me - 1;
    int right = me + 1;
    const int first = left >= 0 ? left : right;
    std::vector<OpId> deps = item.after;
    deps.push_back(got[static_cast<std::size_t>(first)]);
    OpId last = s.combine_into(item.own, bounce(first, t, bytes), item.dst, deps, left >= 0);
    out.read.push_back(last);
    if (left >= 0) {
      --left;
    } else {
      ++right;
    }
    for (; left >= 0; --left) {
      last = s.combine(bounce(left, t, bytes), item.dst,
                       {last, got[static_cast<std::size_t>(left)]}, true);
    }
    for (; right < n; ++right) {
      last = s.combine(bounce(right, t, bytes), item.dst,
                       {last, got[static_cast<std::size_t>(right)]});
    }
    out.done.push_back(last);
  }
  return out;
}

std::size_t largest_part(int n, const std::function<Region(int)>& input) {
  std::size_t largest = 0;
  for (int j = 0; j < n; ++j) largest = std::max(largest, input(j).bytes);
  return largest;
}

}  // namespace

std::size_t node_chunk_bytes(int n, std::size_t elem) {
  constexpr std::size_t kBudget = 512 * 1024;
  const std::size_t slots = 2 * static_cast<std::size_t>(std::max(n - 1, 1));
  const std::size_t c = std::clamp<std::size_t>(kBudget / slots, 16 * 1024, 256 * 1024);
  const std::size_t pow2 = std::size_t{1} << (63 - __builtin_clzll(c));
  return std::max(pow2 / elem, std::size_t{1}) * elem;  // whole elements
}

std::size_t node_bounce_bytes(const Layout& layout, const std::vector<int>& mates, int i,
                              std::size_t part_bytes, std::size_t elem) {
  const int n = static_cast<int>(mates.size());
  return node_scratch(phase_domains(layout, mates), i, part_bytes, node_chunk_bytes(n, elem))
      .total();
}

std::vector<Region> chunks_of(const Region& r, std::size_t chunk) {
  std::vector<Region> out;
  for (std::size_t at = 0; at < r.bytes; at += chunk) {
    out.push_back({r.buffer, r.offset + at, std::min(chunk, r.bytes - at)});
  }
  return out;
}

NodeReduceScatter node_reduce_scatter(Schedule& s, const Layout& layout,
                                      const std::vector<int>& mates, int i,
                                      const std::function<Region(int)>& input, Region result,
                                      std::size_t bounce_at, int round, std::size_t elem) {
  const int n = static_cast<int>(mates.size());
  const std::size_t chunk = node_chunk_bytes(n, elem);
  const int me = mates[static_cast<std::size_t>(i)];
  const LaneSet lanes = layout.lanes_of[me];
  const NumaDomains domains = phase_domains(layout, mates);
  const int d = domains.domain_of[static_cast<std::size_t>(i)];
  const auto& members = domains.members[static_cast<std::size_t>(d)];
  const std::size_t largest = largest_part(n, input);
  const NodeScratch plan = node_scratch(domains, i, largest, chunk);
  NodeReduceScatter out;
  out.sent.resize(static_cast<std::size_t>(n));

  // Inside the domain: each part of this rank's input to the member that combines it.
  std::vector<int> from;
  for (const int k : members) {
    from.push_back(mates[static_cast<std::size_t>(k)]);
    if (k == i) continue;
    for (const int j : parts_combined_by(domains, k)) {
      for (const Region& c : chunks_of(input(j), chunk)) {
        out.sent[static_cast<std::size_t>(j)].push_back(
            s.send(mates[static_cast<std::size_t>(k)], lanes, c, {}, round));
      }
    }
  }
  // This rank's stream: every part it combines inside the domain, chunk by chunk; the domain's
  // partial of its own part straight into `result`, the others' into scratch.
  std::vector<StreamItem> items;
  std::vector<int> part_of_item;
  std::size_t partial_at = bounce_at + plan.inside + plan.between;
  for (const int j : parts_combined_by(domains, i)) {
    Region dst = result;
    if (j != i) {
      dst = Region{Buffer::scratch, partial_at, input(j).bytes};
      partial_at += largest;
    }
    const std::vector<Region> own = chunks_of(input(j), chunk);
    const std::vector<Region> into = chunks_of(dst, chunk);
    for (std::size_t c = 0; c < own.size(); ++c) {
      items.push_back({own[c], into[c], {}});
      part_of_item.push_back(j);
    }
  }
  const StreamOut inside =
      combine_stream(s, layout, from, domains.position_of[i], items, bounce_at, round);
  // Between domains: a partial combined for another domain's rank goes to it as it is done.
  std::vector<OpId> own_done;
  for (std::size_t t = 0; t < items.size(); ++t) {
    const int j = part_of_item[t];
    if (j == i) {
      own_done.push_back(inside.done[t]);
      continue;
    }
    out.sent[static_cast<std::size_t>(j)].push_back(inside.read[t]);
    s.send(mates[static_cast<std::size_t>(j)], lanes, items[t].dst, {inside.done[t]}, round);
  }
  out.chunks = chunks_of(result, chunk);
  if (domains.count() == 1) {
    out.done = own_done;
    return out;
  }
  // This rank's part: its domain's partial with the other domains', in domain order, each from
  // the rank that stands for this one there.
  std::vector<int> stand_ins;
  for (int e = 0; e < domains.count(); ++e) {
    stand_ins.push_back(mates[static_cast<std::size_t>(domains.proxy(e, i))]);
  }
  std::vector<StreamItem> mine;
  for (std::size_t c = 0; c < out.chunks.size(); ++c) {
    mine.push_back({out.chunks[c], out.chunks[c], {own_done[c]}});
  }
  out.done = combine_stream(s, layout, stand_ins, d, mine, bounce_at + plan.inside, round).done;
  return out;
}

void node_allgather(Schedule& s, const Layout& layout, const std::vector<int>& mates, int i,
                    const std::vector<Region>& mine, const std::vector<OpId>& ready,
                    const std::function<Region(int)>& output,
                    const std::vector<std::vector<OpId>>& sent, int round, std::size_t elem) {
  const int n = static_cast<int>(mates.size());
  const std::size_t chunk = node_chunk_bytes(n, elem);
  const int me = mates[static_cast<std::size_t>(i)];
  const NumaDomains domains = phase_domains(layout, mates);
  // The local index local index y receives part j from: its owner inside y's domain, otherwise
  // the rank standing for the owner in y's domain, which forwards it (the owner itself when that
  // is y). Each part crosses into another domain once.
  const auto giver = [&](int y, int j) {
    const int dy = domains.domain_of[static_cast<std::size_t>(y)];
    if (domains.domain_of[static_cast<std::size_t>(j)] == dy) return j;
    const int stand_in = domains.proxy(dy, j);
    return stand_in == y ? j : stand_in;
  };
  // Every other part in, chunk by chunk, after phase 1 read what the chunk overwrites (in place
  // both are the same bytes).
  std::vector<std::vector<OpId>> got(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    if (j == i) continue;
    const int from = mates[static_cast<std::size_t>(giver(i, j))];
    const std::vector<Region> pieces = chunks_of(output(j), chunk);
    const auto& before = sent[static_cast<std::size_t>(j)];
    for (std::size_t c = 0; c < pieces.size(); ++c) {
      std::vector<OpId> after;
      if (c < before.size()) after.push_back(before[c]);
      got[static_cast<std::size_t>(j)].push_back(
          s.recv(from, layout.lanes_of[from], pieces[c], after, round));
    }
  }
  // Out to every other local rank: the parts it receives from this one, ascending, each chunk
  // once it is combined (this rank's part) or has arrived (a part forwarded).
  for (int x = 0; x < n; ++x) {
    if (x == i) continue;
    const int to = mates[static_cast<std::size_t>(x)];
    for (int j = 0; j < n; ++j) {
      if (j == x || giver(x, j) != i) continue;
      if (j == i) {
        for (std::size_t c = 0; c < mine.size(); ++c) {
          const OpId dep = ready.size() == 1 ? ready[0] : ready[c];
          s.send(to, layout.lanes_of[me], mine[c], {dep}, round);
        }
        continue;
      }
      const std::vector<Region> pieces = chunks_of(output(j), chunk);
      for (std::size_t c = 0; c < pieces.size(); ++c) {
        s.send(to, layout.lanes_of[me], pieces[c], {got[static_cast<std::size_t>(j)][c]}, round);
      }
    }
  }
}

}  // namespace lanes::algos
