// The v-variants: scatterv, gatherv, allgatherv and alltoallv, whose blocks differ in size from
// rank to rank and sit at displacements of the caller's choosing. Their schedules are built per
// call from the blocks (no block size to cache them by) and run by the same executor; the
// simulator checks them against their definitions (simulate_v).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

enum class VCollective : std::uint8_t { scatterv, gatherv, allgatherv, alltoallv };
inline constexpr VCollective kVCollectives[] = {VCollective::scatterv, VCollective::gatherv,
                                                VCollective::allgatherv, VCollective::alltoallv};
const char* to_string(VCollective c);
constexpr bool is_rooted(VCollective c) {
  return c == VCollective::scatterv || c == VCollective::gatherv;
}

// A block of a buffer, in bytes.
struct Block {
  std::size_t offset = 0;
  std::size_t bytes = 0;
  std::size_t end() const { return offset + bytes; }
  bool operator==(const Block&) const = default;
};

// What one rank passes to a v-collective, in bytes:
//   scatterv:   blocks[i]: rank i's block of the root's send buffer (the offsets count at the
//               root only); rank i receives blocks[i].bytes at offset 0 of its recv buffer.
//   gatherv:    blocks[i]: rank i's block of the root's recv buffer (offsets at the root only);
//               rank i sends blocks[i].bytes from offset 0 of its send buffer.
//   allgatherv: blocks[i]: rank i's block of this rank's recv buffer (every rank its own
//               offsets, the same sizes); rank i sends blocks[i].bytes from offset 0.
//   alltoallv:  send[i] / recv[i]: this rank's blocks for and from rank i (send[j] at rank i
//               must equal recv[i] at rank j in size).
// Algorithms that are not `local` read every rank's size in blocks at every rank; local ones
// read only their own entry at a rank other than the root (the caller may leave the others 0).
struct VArgs {
  VCollective coll = VCollective::scatterv;
  int rank = 0;
  int root = 0;
  std::vector<Block> blocks;
  std::vector<Block> send, recv;
};

// The bytes each buffer of `args.rank` spans: the furthest block end.
std::size_t v_send_bytes(const VArgs& args);
std::size_t v_recv_bytes(const VArgs& args);

using VBuildFn = Schedule (*)(const Layout& layout, const VArgs& args);

struct VAlgorithm {
  std::string_view name;
  VCollective coll;
  VBuildFn build;
  bool local;  // see VArgs
  std::string_view summary;
};

const std::vector<VAlgorithm>& all_valgorithms();
const VAlgorithm* find_valgorithm(VCollective coll, std::string_view name);  // nullptr: unknown
std::vector<const VAlgorithm*> valgorithms_for(VCollective coll);
std::string valgorithm_names(VCollective coll);

// Where the non-empty blocks of the members first .. end - 1 of a tree numbered from `root`
// (ranks (v + root) mod p) lie back to back in that order: the offset of the first of them; none
// when they do not, or when all are empty.
std::optional<std::size_t> back_to_back(const std::vector<Block>& blocks, int root, int first,
                                        int end);

// Throws lanes::Error(invalid_argument) when the rank or root lies outside the layout, or the
// blocks are not one per rank, naming the algorithm.
void check_vargs(const Layout& layout, const VArgs& args, std::string_view algorithm);

// Every v-algorithm's builder and entry, defined in its own file and listed once in
// valgorithms.def.
#define LANES_VALGORITHM(id, file)                              \
  Schedule build_##id(const Layout& layout, const VArgs& args); \
  extern const VAlgorithm valgorithm_##id;
#include "algos/valgorithms.def"
#undef LANES_VALGORITHM

}  // namespace lanes::algos
