#include "algos/common.hpp"

#include <cstddef>
#include <lanes/error.hpp>
#include <string>
#include <vector>

#include "algos/numa_domains.hpp"

namespace lanes::algos {

int ceil_log2(int p) {
  int r = 0;
  while ((1LL << r) < p) ++r;
  return r;
}

int floor_log2(int x) {
  int r = 0;
  while ((x >> (r + 1)) > 0) ++r;
  return r;
}

VectorPart vector_part(std::size_t bytes, std::size_t elem, int parts, int i) {
  const std::size_t n = bytes / elem;
  const auto k = static_cast<std::size_t>(parts);
  const auto at = static_cast<std::size_t>(i);
  const auto first = [&](std::size_t j) { return j * (n / k) + std::min(j, n % k); };
  return {first(at) * elem, (first(at + 1) - first(at)) * elem};
}

bool regular_layout(const Layout& layout) {
  return layout.regular();
}

bool consecutive_nodes(const Layout& layout) {
  int next = 0;
  for (const auto& ranks : layout.node_ranks) {
    for (const int r : ranks) {
      if (r != next++) return false;
    }
  }
  return true;
}

bool rank_order_always(const Layout&, int) {
  return true;
}

bool rank_order_at_root_zero(const Layout&, int root) {
  return root == 0;
}

bool rank_order_on_consecutive_nodes_and_domains(const Layout& layout, int) {
  return consecutive_nodes(layout) && numa_domains_contiguous(layout);
}

bool rank_order_on_consecutive_nodes_and_domains_root_node_zero(const Layout& layout, int root) {
  return rank_order_on_consecutive_nodes_and_domains(layout, root) &&
         layout.node_of[static_cast<std::size_t>(root)] == 0;
}

Schedule reroot_reduce(Schedule s, const Layout& layout, const CollArgs& args) {
  if (args.root == 0 || args.bytes == 0) return s;
  const int round = s.rounds;
  std::vector<OpId> all(s.ops.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<OpId>(i);
  if (args.rank == 0) {
    // The result in scratch, after what the schedule already uses (aligned for any element).
    const std::size_t align = alignof(std::max_align_t);
    const std::size_t at = (s.scratch_bytes + align - 1) / align * align;
    for (Op& op : s.ops) {
      for (Region* region : {&op.src, &op.dst, &op.acc}) {
        if (region->buffer == Buffer::recv)
          *region = {Buffer::scratch, at + region->offset, region->bytes};
      }
    }
    s.scratch_bytes = at + args.bytes;
    s.send(args.root, layout.lanes_of[0], {Buffer::scratch, at, args.bytes}, all, round);
    s.rounds = round + 1;
  } else if (args.rank == args.root) {
    s.recv(0, layout.lanes_of[0], {Buffer::recv, 0, args.bytes}, all, round);
    s.rounds = round + 1;
  }
  s.finalize();
  return s;
}

void check_args(const Layout& layout, const CollArgs& args, std::string_view algorithm,
                bool rooted) {
  const int p = layout.size;
  const bool bad_rank = args.rank < 0 || args.rank >= p;
  const bool bad_root = rooted && (args.root < 0 || args.root >= p);
  if (bad_rank || bad_root) {
    throw Error(Errc::invalid_argument,
                std::string(to_string(args.coll)) + " " + std::string(algorithm) + ": rank " +
                    std::to_string(args.rank) +
                    (rooted ? " or root " + std::to_string(args.root) : std::string()) +
                    " outside 0.." + std::to_string(p - 1));
  }
}

}  // namespace lanes::algos
