// Schedule construction: one rank's schedule of an algorithm at p = 64 and p = 1024 (nodes of
// 16 processes, 2 lanes), as the runtime builds it on the first call of a shape.
#include <benchmark/benchmark.h>

#include <string>

#include "algos/layout.hpp"
#include "algos/registry.hpp"

namespace {

using lanes::algos::Collective;

struct Case {
  Collective coll;
  const char* name;
};

constexpr Case kCases[] = {
    {Collective::bcast, "binomial"},
    {Collective::bcast, "kported"},
    {Collective::bcast, "scatter-ring-bwsave"},
    {Collective::bcast, "full-lane"},
    {Collective::scatter, "linear"},
    {Collective::scatter, "k-lane"},
    {Collective::alltoall, "pairwise"},
    {Collective::alltoall, "bruck"},
    {Collective::alltoall, "full-lane"},
    {Collective::allgather, "ring"},
};

void build(benchmark::State& state, const lanes::algos::Algorithm* algo, int p) {
  const auto layout = lanes::algos::Layout::blocks(p, 16, 2);
  // The root (rank 0) holds the most operations in rooted collectives.
  const lanes::algos::CollArgs args{algo->coll, 0, 0, std::size_t{1} << 20};
  std::size_t ops = 0;
  for (auto _ : state) {
    lanes::algos::Schedule s = algo->build(layout, args);
    ops = s.ops.size();
    benchmark::DoNotOptimize(s.ops.data());
  }
  state.counters["ops"] = static_cast<double>(ops);
}

[[maybe_unused]] const bool registered = [] {
  for (const Case& c : kCases) {
    const auto* algo = lanes::algos::find_algorithm(c.coll, c.name);
    if (algo == nullptr) continue;
    for (int p : {64, 1024}) {
      const std::string name = std::string("schedule/") + lanes::algos::to_string(c.coll) + "/" +
                               c.name + "/p" + std::to_string(p);
      benchmark::RegisterBenchmark(name.c_str(), build, algo, p);
    }
  }
  return true;
}();

}  // namespace
