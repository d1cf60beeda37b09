// What lanes-bench compares for one collective: the MPI library's call and each lanes
// (algorithm, lanes) pair that applies to the layout the runtime sees.
#pragma once

#include <mpi.h>

#include <lanes/lanes.hpp>
#include <string>
#include <vector>

#include "bench_options.hpp"

namespace lanes_bench {

// The layout as lanes sees it (LANES_NODE_SIZE included).
struct Shape {
  int nodes = 1;
  int ppn = 1;                  // processes on the largest node
  std::vector<int> node_sizes;  // processes per node
  int default_lanes = 0;        // the runtime's lanes when CallOptions::lanes is 0; 0: unknown
};

// Collective over `comm` (the same processes as `world`, in the same order).
Shape layout_shape(const lanes::Runtime& rt, const lanes::Communicator& world, MPI_Comm comm);

struct Variant {
  bool native = false;
  std::string algorithm;  // "mpi" for native; "auto": the runtime's choice
  int lanes_option = 0;   // CallOptions::lanes
  int lanes_column = 0;   // what the results report: lanes used, 0 for native
};

// Throws std::invalid_argument when a name of --algorithms belongs to none of the collectives.
void validate_algorithms(const Options& o);

// The variants of `collective`, native first. Algorithms that do not apply to the layout are
// left out with one line on stderr (printed when `report` is true).
std::vector<Variant> variants_for(const std::string& collective, const Options& o,
                                  const Shape& shape, bool report);

}  // namespace lanes_bench
