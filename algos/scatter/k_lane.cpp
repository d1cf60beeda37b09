// k-lane scatter: the k-ported divide-and-conquer scatter run over nodes, each node acting as one
// k-ported processor whose ports are k of its ranks.
//
// Source: J. L. Träff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms" (2020):
// "A receiving processor on a node scatters to k-1 processors which then concurrently do the k
// send operations of a single processor in the k-ported algorithm to processors on other nodes."
//
// Phases. Blocks are taken in node order (the ranks of node 0 by local rank, then node 1, ...),
// so the blocks of any range of nodes are contiguous; the root packs its send buffer into that
// order in scratch unless it already is (as for consecutive ranks per node). Each node m has an
// active rank A_m: the root on the root's node, local rank 0 elsewhere; port j of node m is its
// local rank (a + j) mod n_m for A_m = local rank a, so port 0 is A_m itself.
//   1. Node level, the k-ported recursion over absolute node ranges [s, e) with the root's node
//      as initial local root: a range is split into min(k + 1, e - s) near-equal subranges, and
//      the local root node sends the blocks of the j-th subrange not containing it to A of that
//      subrange's first node. Per level two rounds: (a) on the node, A_m hands the blocks for
//      port j to port j (k - 1 messages; none for ports that are A_m itself); (b) the k ports send
//      concurrently to the k other nodes, each over the lanes it drives. A_m of a receiving node
//      gets its whole range's blocks in one message, into scratch.
//   2. On every node, A_m hands out the node's own n_m blocks with the k-ported scatter over the
//      node's local ranks (root A_m; the first k subranges' local roots play the k local roots
//      of the paper). This waits only for the node's data, so it overlaps the off-node sends.
// The sends of one port of a rank are chained, so at most k sends of a rank are in flight per
// phase.
//
// Cost, with L = ceil(log_{k+1} N), F = ceil(log_{k+1} n_max), and h = 1 when k > 1 and some node
// holds more than one rank (else 0): rounds = L * (1 + h) + F, so (L * (1 + h) + F) * alpha.
// For m = p * block bytes on N equal nodes, level t sends messages of about m / (k + 1)^(t + 1)
// bytes, k at a time on k lanes (and hands the same on the node first): at best
// beta_lane * m * (N - 1) / (N * k) off the node, beta_node about as much on it, plus the final
// hand-out of m / N per node. The root's node sends every block for another node off the node
// exactly once: m - n_root * block bytes.
//
// Applies: any layout (nodes of any sizes; a node with fewer than k ranks lets a rank serve
// several ports); ports = k = num_lanes.
#include <algorithm>
#include <optional>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/kported_split.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_scatter_k_lane(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "k-lane", true);
  const int p = layout.size;
  const int k = layout.num_lanes;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int me = args.rank;
  const auto blocks = [b](int n) { return static_cast<std::size_t>(n) * b; };
  const Region own{Buffer::recv, 0, b};
  if (p == 1) {
    s.copy({Buffer::send, 0, b}, own);
    s.finalize();
    return s;
  }
  const int num_nodes = layout.num_nodes();
  std::vector<int> start(static_cast<std::size_t>(num_nodes) + 1, 0);  // node -> first position
  int n_max = 0;
  for (int m = 0; m < num_nodes; ++m) {
    const int size = static_cast<int>(layout.node_ranks[m].size());
    start[m + 1] = start[m] + size;
    n_max = std::max(n_max, size);
  }
  const int levels = ceil_log(num_nodes, k + 1);
  const int h = k > 1 && n_max > 1 ? 1 : 0;
  const int base2 = levels * (1 + h);  // first round of phase 2
  s.rounds = base2 + ceil_log(n_max, k + 1);
  s.ports = k;

  const int root_node = layout.node_of[args.root];
  const int node = layout.node_of[me];
  const auto& ranks = layout.node_ranks[node];
  const int n = static_cast<int>(ranks.size());
  const int mine = layout.local_rank_of[me];
  const auto active_local = [&](int m) {
    return m == root_node ? layout.local_rank_of[args.root] : 0;
  };
  const auto port_rank = [&](int m, int port) {
    const auto& r = layout.node_ranks[m];
    return r[(active_local(m) + port) % static_cast<int>(r.size())];
  };
  const int a = active_local(node);
  const bool active = mine == a;

  // The node-level recursion as seen from this rank's node.
  std::vector<KPortedStep> sends;  // steps in which this node is a local root
  struct From {
    int node, port, level, lo, hi;
  };
  std::optional<From> from;
  for (KPortedStep& step : kported_steps(num_nodes, k, root_node, node)) {
    for (const KPortedTarget& target : step.targets) {
      if (target.first == node)
        from = From{step.root, target.port, step.step, target.first, target.end};
    }
    if (step.root == node) sends.push_back(std::move(step));
  }
  const auto handoff_round = [&](int level) { return level * (1 + h); };
  const auto offnode_round = [&](int level) { return level * (1 + h) + h; };

  // Where A holds the blocks it is responsible for: position x (node order) at
  // held.offset + (x - held_lo) * b of buffer held.buffer.
  Region held{Buffer::scratch, 0, 0};
  int held_lo = 0;
  std::vector<OpId> have;                                              // what makes `held` valid
  std::vector<std::optional<OpId>> last(static_cast<std::size_t>(k));  // last send per port
  const auto chained = [&](int port, std::vector<OpId> deps) {
    if (last[port]) deps.push_back(*last[port]);
    return deps;
  };

  if (active) {
    if (me == args.root) {
      s.copy({Buffer::send, blocks(me), b}, own);
      bool packed = true;
      for (int r = 0; r < p && packed; ++r) {
        packed = start[layout.node_of[r]] + layout.local_rank_of[r] == r;
      }
      if (packed) {
        held = {Buffer::send, 0, blocks(p)};
      } else {
        s.scratch_bytes = blocks(p);
        held = {Buffer::scratch, 0, blocks(p)};
        // Runs that are contiguous in the send buffer are merged into one copy.
        std::size_t run_src = 0;
        std::size_t run_dst = 0;
        std::size_t run_len = 0;
        for (int m = 0; m < num_nodes; ++m) {
          for (int i = 0; i < static_cast<int>(layout.node_ranks[m].size()); ++i) {
            const std::size_t src = blocks(layout.node_ranks[m][i]);
            if (run_len > 0 && src == run_src + run_len) {
              run_len += b;
              continue;
            }
            if (run_len > 0) {
              have.push_back(
                  s.copy({Buffer::send, run_src, run_len}, {Buffer::scratch, run_dst, run_len}));
            }
            run_src = src;
            run_dst = blocks(start[m] + i);
            run_len = b;
          }
        }
        have.push_back(
            s.copy({Buffer::send, run_src, run_len}, {Buffer::scratch, run_dst, run_len}));
      }
    } else {
      const int count = start[from->hi] - start[from->lo];
      const int sender = port_rank(from->node, from->port);
      const int round = offnode_round(from->level);
      if (count == 1) {
        s.recv(sender, layout.lanes_of[sender], own, {}, round);
        s.finalize();
        return s;
      }
      s.scratch_bytes = blocks(count);
      held = {Buffer::scratch, 0, blocks(count)};
      held_lo = start[from->lo];
      have = {s.recv(sender, layout.lanes_of[sender], held, {}, round)};
      s.copy({Buffer::scratch, 0, b}, own, have);
    }
    // Phase 1 at A: hand each port its blocks, or send them itself for port 0 (and any port
    // that falls on A when the node has fewer than k ranks).
    for (const KPortedStep& level : sends) {
      for (const KPortedTarget& t : level.targets) {
        const int port_holder = port_rank(node, t.port);
        const Region src{held.buffer, held.offset + blocks(start[t.first] - held_lo),
                         blocks(start[t.end] - start[t.first])};
        if (port_holder == me) {
          last[t.port] = s.send(port_rank(t.first, 0), layout.lanes_of[me], src,
                                chained(t.port, have), offnode_round(level.step));
        } else {
          last[t.port] = s.send(port_holder, layout.lanes_of[me], src, chained(t.port, have),
                                handoff_round(level.step));
        }
      }
    }
  } else {
    // Phase 1 at a port other than A: receive the blocks from A, send them off the node.
    const int active_rank = ranks[a];
    for (const KPortedStep& level : sends) {
      for (const KPortedTarget& t : level.targets) {
        if (port_rank(node, t.port) != me) continue;
        const Region region{Buffer::scratch, s.scratch_bytes,
                            blocks(start[t.end] - start[t.first])};
        s.scratch_bytes += region.bytes;
        const OpId got = s.recv(active_rank, layout.lanes_of[active_rank], region, {},
                                handoff_round(level.step));
        last[t.port] = s.send(port_rank(t.first, 0), layout.lanes_of[me], region,
                              chained(t.port, {got}), offnode_round(level.step));
      }
    }
  }

  // Phase 2: the k-ported scatter of the node's blocks over its local ranks, rooted at A.
  if (n == 1) {
    s.finalize();
    return s;
  }
  std::vector<std::optional<OpId>> last2(static_cast<std::size_t>(k));
  // At A the node's blocks are at positions start[node] + i of `held`.
  Region local = held;
  int local_lo = held_lo - start[node];
  std::vector<OpId> local_have = have;
  for (const KPortedStep& step : kported_steps(n, k, a, mine)) {
    const int round = base2 + step.step;
    const int root = ranks[step.root];
    for (const KPortedTarget& target : step.targets) {
      const int first = target.first;
      const int count = target.size();
      if (me == root) {
        std::vector<OpId> deps = local_have;
        if (last2[target.port]) deps.push_back(*last2[target.port]);
        last2[target.port] =
            s.send(ranks[first], layout.lanes_of[me],
                   {local.buffer, local.offset + blocks(first - local_lo), blocks(count)},
                   std::move(deps), round);
      } else if (mine == first) {
        if (count == 1) {
          s.recv(root, layout.lanes_of[root], own, {}, round);
        } else {
          local = {Buffer::scratch, s.scratch_bytes, blocks(count)};
          local_lo = first;
          s.scratch_bytes += local.bytes;
          local_have = {s.recv(root, layout.lanes_of[root], local, {}, round)};
          s.copy({Buffer::scratch, local.offset, b}, own, local_have);
        }
      }
    }
  }
  s.finalize();
  return s;
}

// Cost: level t of the recursion over node ranges (len_0 = N, len_{t+1} = ceil(len_t / (k + 1)),
// the first and largest subrange staying) hands each port the blocks of its subrange on the node
// (when k > 1 and n > 1), then the ports send them off the node at once (one flow per other
// subrange, at most k); last the k-ported scatter of the node's n blocks over its ranks, as in
// scatter/kported.cpp.
double cost_scatter_k_lane(const CostInput& in, const MachineParams& m) {
  const long long ports = std::max(1, in.lanes);
  const auto n = static_cast<double>(in.ppn);
  const auto b = static_cast<double>(in.bytes);
  const bool handoff = ports > 1 && in.ppn > 1;
  // The second subrange of a range of len, the largest one sent.
  const auto sent = [ports](long long len) {
    return static_cast<double>(len / (ports + 1) + (len % (ports + 1) > 1 ? 1 : 0));
  };
  double t = 0;
  for (long long len = in.nodes; len > 1; len = (len + ports) / (ports + 1)) {
    const double bytes = sent(len) * n * b;
    if (handoff) t += shm_time(bytes, m);
    const auto flows = static_cast<double>(std::min(ports, len - 1));
    t += rail_time(bytes, flows, in, m);
  }
  for (long long len = in.ppn; len > 1; len = (len + ports) / (ports + 1)) {
    t += shm_time(sent(len) * b, m);
  }
  return t;
}

const Algorithm algorithm_scatter_k_lane{
    "k-lane",
    Collective::scatter,
    build_scatter_k_lane,
    nullptr,
    "k-ported scatter over nodes, k ranks per node acting as the k ports",
    cost_scatter_k_lane};

}  // namespace lanes::algos
