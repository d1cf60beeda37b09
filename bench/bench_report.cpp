#include "bench_report.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lanes_bench {

namespace {

CsvFile open_csv(const std::string& path, const char* header) {
  if (path.empty()) return nullptr;
  CsvFile f(std::fopen(path.c_str(), "w"));
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  std::fprintf(f.get(), "%s\n", header);
  std::fflush(f.get());
  return f;
}

}  // namespace

Report::Report(const std::string& csv_path, const std::string& times_path)
    : csv_(open_csv(csv_path, kCsvHeader)), times_(open_csv(times_path, kTimesHeader)) {
  std::printf(
      "| collective | impl | algorithm | lanes | nodes | ppn | count | bytes | avg us | min us |"
      " median us | vs native | check |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  std::fflush(stdout);
}

void Report::add_times(const Row& r, const double* seconds, const std::size_t* positions,
                       int reps) {
  if (!times_) return;
  for (int i = 0; i < reps; ++i) {
    std::fprintf(times_.get(), "%s,%s,%s,%d,%zu,%d,%zu,%.3f\n", r.collective.c_str(),
                 r.impl.c_str(), r.algorithm.c_str(), r.lanes, r.count, i, positions[i],
                 seconds[i] * 1e6);
  }
  std::fflush(times_.get());
}

void Report::add(const Row& r) {
  if (csv_) {
    std::fprintf(csv_.get(), "%s,%s,%s,%d,%d,%d,%zu,%zu,%.3f,%.3f,%.3f\n", r.collective.c_str(),
                 r.impl.c_str(), r.algorithm.c_str(), r.lanes, r.nodes, r.ppn, r.count, r.bytes,
                 r.avg_us, r.min_us, r.median_us);
    std::fflush(csv_.get());
  }
  char ratio[32] = "-";
  if (r.native_avg_us > 0 && r.avg_us > 0)
    std::snprintf(ratio, sizeof ratio, "%.2f", r.native_avg_us / r.avg_us);
  std::printf("| %s | %s | %s | %d | %d | %d | %zu | %zu | %.2f | %.2f | %.2f | %s | %s |\n",
              r.collective.c_str(), r.impl.c_str(), r.algorithm.c_str(), r.lanes, r.nodes, r.ppn,
              r.count, r.bytes, r.avg_us, r.min_us, r.median_us, ratio, r.check.c_str());
  std::fflush(stdout);
}

}  // namespace lanes_bench
