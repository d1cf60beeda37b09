#include "algos/node_phases.hpp"

#include <algorithm>

namespace lanes::algos {

std::size_t node_chunk_bytes(int n, std::size_t elem) {
  constexpr std::size_t kBudget = 512 * 1024;
  const std::size_t slots = 2 * static_cast<std::size_t>(std::max(n - 1, 1));
  const std::size_t c = std::clamp<std::size_t>(kBudget / slots, 16 * 1024, 256 * 1024);
  const std::size_t pow2 = std::size_t{1} << (63 - __builtin_clzll(c));
  return std::max(pow2 / elem, std::size_t{1}) * elem;  // whole elements
}

std::size_t node_bounce_bytes(int n, std::size_t part_bytes, std::size_t elem) {
  if (n <= 1) return 0;
  const std::size_t slot = std::min(part_bytes, node_chunk_bytes(n, elem));
  const std::size_t per_peer = part_bytes > slot ? 2 * slot : slot;
  return static_cast<std::size_t>(n - 1) * per_peer;
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
  NodeReduceScatter out;
  out.sent.resize(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    if (j == i) continue;
    for (const Region& c : chunks_of(input(j), chunk)) {
      out.sent[static_cast<std::size_t>(j)].push_back(
          s.send(mates[static_cast<std::size_t>(j)], lanes, c, {}, round));
    }
  }
  out.chunks = chunks_of(result, chunk);
  const std::vector<Region> own = chunks_of(input(i), chunk);
  const std::size_t slot = std::min(result.bytes, chunk);
  const int depth = out.chunks.size() > 1 ? 2 : 1;
  // Bounce slot of peer j (j != i) for chunk c.
  const auto bounce = [&](int j, std::size_t c, std::size_t bytes) {
    const std::size_t peer = static_cast<std::size_t>(j < i ? j : j - 1);
    const std::size_t k =
        peer * static_cast<std::size_t>(depth) + c % static_cast<std::size_t>(depth);
    return Region{Buffer::scratch, bounce_at + k * slot, bytes};
  };
  for (std::size_t c = 0; c < out.chunks.size(); ++c) {
    const Region dst = out.chunks[c];
    if (n == 1) {
      out.done.push_back(s.copy(own[c], dst));
      continue;
    }
    // The chunk's receives wait for the combines that read their slots two chunks ago.
    std::vector<OpId> free_slot;
    if (c >= static_cast<std::size_t>(depth))
      free_slot = {out.done[c - static_cast<std::size_t>(depth)]};
    std::vector<OpId> got(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      const int from = mates[static_cast<std::size_t>(j)];
      got[static_cast<std::size_t>(j)] =
          s.recv(from, layout.lanes_of[from], bounce(j, c, dst.bytes), free_slot, round);
    }
    // c_{i-1} (+) c_i first (or c_i (+) c_{i+1} for i = 0), then leftwards, then rightwards.
    OpId last;
    int left = i - 1;
    int right = i + 1;
    if (left >= 0) {
      last = s.combine_into(own[c], bounce(left, c, dst.bytes), dst,
                            {got[static_cast<std::size_t>(left)]}, true);
      --left;
    } else {
      last = s.combine_into(own[c], bounce(right, c, dst.bytes), dst,
                            {got[static_cast<std::size_t>(right)]});
      ++right;
    }
    for (; left >= 0; --left) {
      last = s.combine(bounce(left, c, dst.bytes), dst, {last, got[static_cast<std::size_t>(left)]},
                       true);
    }
    for (; right < n; ++right) {
      last =
          s.combine(bounce(right, c, dst.bytes), dst, {last, got[static_cast<std::size_t>(right)]});
    }
    out.done.push_back(last);
  }
  return out;
}

void node_allgather(Schedule& s, const Layout& layout, const std::vector<int>& mates, int i,
                    const std::vector<Region>& mine, const std::vector<OpId>& ready,
                    const std::function<Region(int)>& output,
                    const std::vector<std::vector<OpId>>& sent, int round, std::size_t elem) {
  const int n = static_cast<int>(mates.size());
  const std::size_t chunk = node_chunk_bytes(n, elem);
  const int me = mates[static_cast<std::size_t>(i)];
  for (int j = 0; j < n; ++j) {
    if (j == i) continue;
    const int peer = mates[static_cast<std::size_t>(j)];
    for (std::size_t c = 0; c < mine.size(); ++c) {
      const OpId dep = ready.size() == 1 ? ready[0] : ready[c];
      s.send(peer, layout.lanes_of[me], mine[c], {dep}, round);
    }
    const std::vector<Region> pieces = chunks_of(output(j), chunk);
    const auto& before = sent[static_cast<std::size_t>(j)];
    for (std::size_t c = 0; c < pieces.size(); ++c) {
      std::vector<OpId> after;
      if (c < before.size()) after.push_back(before[c]);
      s.recv(peer, layout.lanes_of[peer], pieces[c], after, round);
    }
  }
}

}  // namespace lanes::algos
