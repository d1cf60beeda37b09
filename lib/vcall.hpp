// A v-collective call as the public API receives it (detail::VSpec, counts in units), turned into
// the blocks in bytes its schedules are built from (algos::VArgs), and the checks it passes
// before anything moves: roots, one count and displacement per rank, blocks inside their
// buffers, receive blocks that do not overlap, the rank's own block the size of its buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <lanes/communicator.hpp>
#include <string>
#include <vector>

#include "algos/vcollectives.hpp"

namespace lanes::detail {

algos::VCollective v_collective(VKind kind);

struct VCheck {
  // Every block in bytes. At a rank other than the root of a scatterv or gatherv only its own
  // entry is known (the others are kUnknownSize until the sizes are exchanged).
  algos::VArgs args;
  std::string error;  // empty when the call is valid; else "<collective>: what is wrong"
};
inline constexpr std::size_t kUnknownSize = SIZE_MAX;

// Checks `spec` made by `rank` of a communicator of `size` ranks. Local: no communication.
VCheck check_vcall(const VSpec& spec, int rank, int size);

// The block sizes this rank knows, for the exchange that compares them (or tells them to the
// ranks that do not): `size` entries, then for an alltoallv `size` receive sizes. Entries this
// rank does not know are kUnknownSize.
std::vector<std::uint64_t> v_sizes(const algos::VArgs& args, int size);

}  // namespace lanes::detail
