// lanes-bench's results: a CSV file (one row per collective, implementation, algorithm, lanes
// and count), optionally a CSV file of every measured repetition, and a markdown table on
// stdout. Written as results arrive, by rank 0 only.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
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
// position: the variant's place (0 first) in that repetition's shuffled order.
inline constexpr const char* kTimesHeader =
    "collective,impl,algorithm,lanes,count,repetition,position,us";

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using CsvFile = std::unique_ptr<std::FILE, CloseFile>;

class Report {
 public:
  // Opens `csv_path` and `times_path` (each if not empty) and writes the headers. Throws
  // std::runtime_error when a file cannot be opened.
  Report(const std::string& csv_path, const std::string& times_path);
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  void add(const Row& row);
  // Every measured repetition of `row`'s variant: seconds[r] and positions[r], r < reps.
  void add_times(const Row& row, const double* seconds, const std::size_t* positions, int reps);

 private:
  CsvFile csv_;
  CsvFile times_;
};

}  // namespace lanes_bench
