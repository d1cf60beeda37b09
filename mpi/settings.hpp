// What liblanes_mpi serves (LANES_MPI_COLLS) and whether it reports (LANES_MPI_STATS).
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace lanes::mpi_interpose {

// In the order of the statistics line.
enum class Coll {
  bcast,
  scatter,
  alltoall,
  allgather,
  gather,
  allreduce,
  reduce,
  reduce_scatter_block,
  barrier,
  scatterv,
  gatherv,
  allgatherv,
  alltoallv,
  ibcast,
  iscatter,
  igather,
  ialltoall,
  iallgather,
  iscatterv,
  igatherv,
  iallgatherv,
  ialltoallv
};
inline constexpr std::array<const char*, 22> kCollNames = {
    "bcast",       "scatter",    "alltoall",  "allgather",
    "gather",      "allreduce",  "reduce",    "reduce_scatter_block",
    "barrier",     "scatterv",   "gatherv",   "allgatherv",
    "alltoallv",   "ibcast",     "iscatter",  "igather",
    "ialltoall",   "iallgather", "iscatterv", "igatherv",
    "iallgatherv", "ialltoallv"};
static_assert(static_cast<std::size_t>(Coll::ialltoallv) + 1 == kCollNames.size());

struct Settings {
  std::array<bool, kCollNames.size()> enabled{};
  bool stats = false;
  std::string error;  // non-empty: a variable could not be parsed (all calls go to MPI)

  bool serves(Coll c) const { return enabled[static_cast<std::size_t>(c)]; }
  bool serves_any() const;
};

// Reads LANES_MPI_COLLS ("all" by default, "none", or a comma-separated list of names) and
// LANES_MPI_STATS (0 or 1).
Settings read_settings();

}  // namespace lanes::mpi_interpose
