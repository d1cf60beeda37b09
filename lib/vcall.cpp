#include "lib/vcall.hpp"

#include <algorithm>
#include <limits>

namespace lanes::detail {

using algos::Block;
using algos::VCollective;

algos::VCollective v_collective(VKind kind) {
  switch (kind) {
    case VKind::scatterv:
      return VCollective::scatterv;
    case VKind::gatherv:
      return VCollective::gatherv;
    case VKind::allgatherv:
      return VCollective::allgatherv;
    case VKind::alltoallv:
      break;
  }
  return VCollective::alltoallv;
}

namespace {

// Blocks in bytes from counts and displacements in units; false (with `error`) on a length or an
// overflow, or a block outside `buffer_bytes`.
bool blocks_of(std::span<const std::size_t> counts, std::span<const std::size_t> displs,
               std::size_t unit, int size, std::size_t buffer_bytes, const char* counts_name,
               const char* displs_name, const char* buffer_name, std::vector<Block>& out,
               std::string& error) {
  const auto p = static_cast<std::size_t>(size);
  if (counts.size() != p || displs.size() != p) {
    error = std::string(counts_name) + " and " + displs_name + " need one entry per rank (" +
            std::to_string(p) + "), not " + std::to_string(counts.size()) + " and " +
            std::to_string(displs.size());
    return false;
  }
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  out.assign(p, Block{});
  for (std::size_t i = 0; i < p; ++i) {
    if (counts[i] > kMax / unit || displs[i] > kMax / unit ||
        displs[i] * unit > kMax - counts[i] * unit) {
      error = std::string(counts_name) + "[" + std::to_string(i) + "] and " + displs_name + "[" +
              std::to_string(i) + "] overflow a byte offset";
      return false;
    }
    out[i] = Block{counts[i] == 0 ? 0 : displs[i] * unit, counts[i] * unit};
    if (out[i].end() > buffer_bytes) {
      error = "the block of rank " + std::to_string(i) + " (" + std::to_string(out[i].bytes) +
              " bytes at " + std::to_string(out[i].offset) + ") ends past " + buffer_name + " (" +
              std::to_string(buffer_bytes) + " bytes)";
      return false;
    }
  }
  return true;
}

// Blocks of a receive buffer must not overlap (each byte is written once).
bool disjoint(const std::vector<Block>& blocks, const char* buffer_name, std::string& error) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].bytes > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return blocks[a].offset < blocks[b].offset; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const Block& a = blocks[order[k - 1]];
    if (a.end() > blocks[order[k]].offset) {
      error = std::string("the blocks of ranks ") + std::to_string(order[k - 1]) + " and " +
              std::to_string(order[k]) + " overlap in " + buffer_name;
      return false;
    }
  }
  return true;
}

bool overlap(std::span<const std::byte> a, std::span<std::byte> b) {
  if (a.empty() || b.empty()) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b0 = reinterpret_cast<std::uintptr_t>(b.data());
  return a0 < b0 + b.size() && b0 < a0 + a.size();
}

std::string check(const VSpec& s, int rank, int size, algos::VArgs& args) {
  const auto me = static_cast<std::size_t>(rank);
  const auto p = static_cast<std::size_t>(size);
  const bool rooted = s.kind == VKind::scatterv || s.kind == VKind::gatherv;
  if (rooted && (s.root < 0 || s.root >= size)) {
    return "root " + std::to_string(s.root) + " is not a rank (valid: 0.." +
           std::to_string(size - 1) + ")";
  }
  if (s.unit == 0 || s.send.size() % s.unit != 0 || s.recv.size() % s.unit != 0) {
    return "send and recv must hold whole elements";
  }
  const bool at_root = rooted && rank == s.root;
  std::string error;
  switch (s.kind) {
    case VKind::scatterv:
      args.blocks.assign(p, Block{0, kUnknownSize});
      if (at_root) {
        if (!blocks_of(s.send_counts, s.send_displs, s.unit, size, s.send.size(), "send_counts",
                       "send_displs", "send", args.blocks, error)) {
          return error;
        }
        if (args.blocks[me].bytes != s.recv.size()) {
          return "the root's own block is " + std::to_string(args.blocks[me].bytes) +
                 " bytes but recv holds " + std::to_string(s.recv.size());
        }
      }
      args.blocks[me] = Block{at_root ? args.blocks[me].offset : 0, s.recv.size()};
      break;
    case VKind::gatherv:
      args.blocks.assign(p, Block{0, kUnknownSize});
      if (at_root) {
        if (!blocks_of(s.recv_counts, s.recv_displs, s.unit, size, s.recv.size(), "recv_counts",
                       "recv_displs", "recv", args.blocks, error) ||
            !disjoint(args.blocks, "recv", error)) {
          return error;
        }
        if (args.blocks[me].bytes != s.send.size()) {
          return "the root's own block is " + std::to_string(args.blocks[me].bytes) +
                 " bytes but send holds " + std::to_string(s.send.size());
        }
      }
      args.blocks[me] = Block{at_root ? args.blocks[me].offset : 0, s.send.size()};
      break;
    case VKind::allgatherv:
      if (!blocks_of(s.recv_counts, s.recv_displs, s.unit, size, s.recv.size(), "recv_counts",
                     "recv_displs", "recv", args.blocks, error) ||
          !disjoint(args.blocks, "recv", error)) {
        return error;
      }
      if (args.blocks[me].bytes != s.send.size()) {
        return "recv_counts gives this rank " + std::to_string(args.blocks[me].bytes) +
               " bytes but send holds " + std::to_string(s.send.size());
      }
      break;
    case VKind::alltoallv:
      if (!blocks_of(s.send_counts, s.send_displs, s.unit, size, s.send.size(), "send_counts",
                     "send_displs", "send", args.send, error) ||
          !blocks_of(s.recv_counts, s.recv_displs, s.unit, size, s.recv.size(), "recv_counts",
                     "recv_displs", "recv", args.recv, error) ||
          !disjoint(args.recv, "recv", error)) {
        return error;
      }
      if (args.send[me].bytes != args.recv[me].bytes) {
        return "this rank sends itself " + std::to_string(args.send[me].bytes) +
               " bytes but expects " + std::to_string(args.recv[me].bytes);
      }
      break;
  }
  // The bytes this rank reads and writes must not overlap.
  const std::size_t send_end = algos::v_send_bytes(args);
  const std::size_t recv_end = algos::v_recv_bytes(args);
  if (overlap(s.send.first(std::min(send_end, s.send.size())),
              s.recv.first(std::min(recv_end, s.recv.size())))) {
    return "send and recv overlap: pass separate buffers";
  }
  return {};
}

}  // namespace

VCheck check_vcall(const VSpec& spec, int rank, int size) {
  VCheck out;
  out.args.coll = v_collective(spec.kind);
  out.args.rank = rank;
  out.args.root = spec.kind == VKind::scatterv || spec.kind == VKind::gatherv ? spec.root : 0;
  const std::string error = check(spec, rank, size, out.args);
  if (!error.empty()) out.error = std::string(algos::to_string(out.args.coll)) + ": " + error;
  return out;
}

std::vector<std::uint64_t> v_sizes(const algos::VArgs& args, int size) {
  const auto p = static_cast<std::size_t>(size);
  std::vector<std::uint64_t> out(2 * p, kUnknownSize);
  const bool pairwise = args.coll == VCollective::alltoallv;
  for (std::size_t i = 0; i < p; ++i) {
    if (pairwise) {
      if (i < args.send.size()) out[i] = args.send[i].bytes;
      if (i < args.recv.size()) out[p + i] = args.recv[i].bytes;
    } else if (i < args.blocks.size()) {
      out[i] = args.blocks[i].bytes;
    }
  }
  return out;
}

}  // namespace lanes::detail
