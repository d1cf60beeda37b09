// lanes-bench's results: a CSV file (one row per collective, implementation, algorithm, lanes
// and count) and a markdown table on stdout. Written as results arrive, by rank 0 only.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace lanes_bench {

struct Row {
  std::string collective;
  std::string impl;       // native or lanes
  std::string algorithm;  // mpi for native
  int lanes = 0;          // lanes used; 0 for native
  int nodes = 0;
  int ppn = 0;
  std::size_t count = 0;
  std::size_t bytes = 0;
  double avg_us = 0;
  double min_us = 0;
  double median_us = 0;
  double native_avg_us = 0;  // 0: native not measured
  std::string check;         // ok, FAILED, or - without --check
};

inline constexpr const char* kCsvHeader =
    "collective,impl,algorithm,lanes,nodes,ppn,count,bytes,avg_us,min_us,median_us";

class Report {
 public:
  // Opens `csv_path` (if not empty) and writes the headers. Throws std::runtime_error when the
  // file cannot be opened.
  explicit Report(const std::string& csv_path);
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
  ~Report();

  void add(const Row& row);

 private:
  std::FILE* csv_ = nullptr;
};

}  // namespace lanes_bench
