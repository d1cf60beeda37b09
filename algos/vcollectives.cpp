#include "algos/vcollectives.hpp"

#include <algorithm>

#include "lanes/error.hpp"

namespace lanes::algos {

const char* to_string(VCollective c) {
  switch (c) {
    case VCollective::scatterv:
      return "scatterv";
    case VCollective::gatherv:
      return "gatherv";
    case VCollective::allgatherv:
      return "allgatherv";
    case VCollective::alltoallv:
      return "alltoallv";
  }
  return "?";
}

namespace {

std::size_t furthest(const std::vector<Block>& blocks) {
  std::size_t end = 0;
  for (const Block& b : blocks) {
    if (b.bytes > 0) end = std::max(end, b.end());
  }
  return end;
}

std::size_t own_bytes(const VArgs& args) {
  return args.blocks[static_cast<std::size_t>(args.rank)].bytes;
}

}  // namespace

std::size_t v_send_bytes(const VArgs& args) {
  switch (args.coll) {
    case VCollective::scatterv:
      return args.rank == args.root ? furthest(args.blocks) : 0;
    case VCollective::gatherv:
    case VCollective::allgatherv:
      return own_bytes(args);
    case VCollective::alltoallv:
      return furthest(args.send);
  }
  return 0;
}

std::size_t v_recv_bytes(const VArgs& args) {
  switch (args.coll) {
    case VCollective::scatterv:
      return own_bytes(args);
    case VCollective::gatherv:
      return args.rank == args.root ? furthest(args.blocks) : 0;
    case VCollective::allgatherv:
      return furthest(args.blocks);
    case VCollective::alltoallv:
      return furthest(args.recv);
  }
  return 0;
}

const std::vector<VAlgorithm>& all_valgorithms() {
  static const std::vector<VAlgorithm> table{
#define LANES_VALGORITHM(id, file) valgorithm_##id,
#include "algos/valgorithms.def"
#undef LANES_VALGORITHM
  };
  return table;
}

const VAlgorithm* find_valgorithm(VCollective coll, std::string_view name) {
  for (const VAlgorithm& a : all_valgorithms()) {
    if (a.coll == coll && a.name == name) return &a;
  }
  return nullptr;
}

std::vector<const VAlgorithm*> valgorithms_for(VCollective coll) {
  std::vector<const VAlgorithm*> out;
  for (const VAlgorithm& a : all_valgorithms()) {
    if (a.coll == coll) out.push_back(&a);
  }
  return out;
}

std::string valgorithm_names(VCollective coll) {
  std::string out;
  for (const VAlgorithm* a : valgorithms_for(coll)) {
    if (!out.empty()) out += ", ";
    out += a->name;
  }
  return out;
}

std::optional<std::size_t> back_to_back(const std::vector<Block>& blocks, int root, int first,
                                        int end) {
  const int p = static_cast<int>(blocks.size());
  std::optional<std::size_t> start;
  std::size_t next = 0;
  for (int v = first; v < end; ++v) {
    const Block b = blocks[static_cast<std::size_t>((v + root) % p)];
    if (b.bytes == 0) continue;
    if (!start) {
      start = b.offset;
    } else if (b.offset != next) {
      return std::nullopt;
    }
    next = b.end();
  }
  return start;
}

void check_vargs(const Layout& layout, const VArgs& args, std::string_view algorithm) {
  const std::string what = std::string(to_string(args.coll)) + " " + std::string(algorithm);
  if (args.rank < 0 || args.rank >= layout.size) {
    throw Error(Errc::invalid_argument, what + ": rank " + std::to_string(args.rank) +
                                            " outside 0.." + std::to_string(layout.size - 1));
  }
  if (is_rooted(args.coll) && (args.root < 0 || args.root >= layout.size)) {
    throw Error(Errc::invalid_argument, what + ": root " + std::to_string(args.root) +
                                            " outside 0.." + std::to_string(layout.size - 1));
  }
  const auto p = static_cast<std::size_t>(layout.size);
  const bool pairwise = args.coll == VCollective::alltoallv;
  if (pairwise ? args.send.size() != p || args.recv.size() != p : args.blocks.size() != p) {
    throw Error(Errc::invalid_argument,
                what + ": needs one block per rank (" + std::to_string(p) + ")");
  }
}

}  // namespace lanes::algos
