// lanes-micro: Google Benchmark micro-benchmarks of single-process hot paths.
//   lanes-micro [--benchmark_filter=REGEX] [--benchmark_min_time=0.1] ...
// The executor benchmarks run lanes runtimes on threads of this process; they are torn down
// after the last benchmark, since destroying a runtime is collective.
#include <benchmark/benchmark.h>

#include "executor_bench.hpp"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  lanes_micro::stop_runtimes();
  benchmark::Shutdown();
  return 0;
}
