#include "bench_report.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lanes_bench {

Report::Report(const std::string& csv_path) {
  if (!csv_path.empty()) {
    csv_ = std::fopen(csv_path.c_str(), "w");
    if (csv_ == nullptr) {
      throw std::runtime_error("cannot write " + csv_path + ": " + std::strerror(errno));
    }
    std::fprintf(csv_, "%s\n", kCsvHeader);
    std::fflush(csv_);
  }
  std::printf(
      "| collective | impl | algorithm | lanes | nodes | ppn | count | bytes | avg us | min us |"
      " median us | vs native | check |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  std::fflush(stdout);
}

Report::~Report() {
  if (csv_ != nullptr) std::fclose(csv_);
}

void Report::add(const Row& r) {
  if (csv_ != nullptr) {
    std::fprintf(csv_, "%s,%s,%s,%d,%d,%d,%zu,%zu,%.3f,%.3f,%.3f\n", r.collective.c_str(),
                 r.impl.c_str(), r.algorithm.c_str(), r.lanes, r.nodes, r.ppn, r.count, r.bytes,
                 r.avg_us, r.min_us, r.median_us);
    std::fflush(csv_);
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
