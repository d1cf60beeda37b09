// lanes-bench's command line: what to measure and how often.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lanes_bench {

struct Options {
  std::vector<std::string> collectives = {"bcast", "scatter", "alltoall", "allgather"};
  // MPI_INT elements per process, counted as MPI counts them (see bench_collectives.hpp).
  std::vector<std::size_t> counts = {1, 10, 100, 1000, 10000, 100000, 1000000};
  bool native = true;  // the MPI library's collective
  bool lanes = true;   // lanes' collectives
  // Lanes algorithms by name, "auto" for the runtime's choice; empty: every algorithm.
  std::vector<std::string> algorithms;
  std::vector<int> lanes_counts;  // CallOptions::lanes values; empty: the runtime's default
  int reps = 100;
  int warmup = 5;
  // Unmeasured calls of a variant right before each of its measured ones (see lanes_bench.cpp).
  int settle = 0;
  int root = 0;
  bool check = false;
  std::string csv;                 // empty: no CSV file
  std::string times;               // every measured repetition as CSV; empty: none
  std::string bootstrap = "auto";  // auto: lanes::Runtime::init(); mpi: lanes::mpi::init
  bool shared_memory = false;      // --memory shared: buffers from Runtime::allocate
  bool help = false;
};

// Throws std::invalid_argument naming the offending option.
Options parse_options(int argc, char** argv);

const char* usage();

}  // namespace lanes_bench
