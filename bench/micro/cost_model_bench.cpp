// The cost model: pricing every broadcast algorithm at 10000 nodes of 32 processes with 2
// rails (what lanes-model and selection do), all at once and one formula at a time.
#include <benchmark/benchmark.h>

#include <string>

#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace {

using lanes::algos::Collective;

lanes::algos::CostInput shape(std::size_t bytes) {
  lanes::algos::CostInput in;
  in.nodes = 10000;
  in.ppn = 32;
  in.lanes = 2;
  in.bytes = bytes;
  return in;
}

lanes::algos::MachineParams machine() {
  lanes::algos::MachineParams m;
  m.rails = 2;
  return m;
}

void predict_all(benchmark::State& state) {
  const auto in = shape(static_cast<std::size_t>(state.range(0)));
  const auto m = machine();
  for (auto _ : state) {
    auto ranking = lanes::algos::predict(Collective::bcast, in, m);
    benchmark::DoNotOptimize(ranking.data());
  }
}
BENCHMARK(predict_all)->Name("cost/bcast/predict-all/nodes10000")->Arg(8)->Arg(1 << 20);

void one_formula(benchmark::State& state, const lanes::algos::Algorithm* algo) {
  const auto in = shape(std::size_t{1} << 20);
  const auto m = machine();
  for (auto _ : state) {
    double t = algo->cost(in, m);
    benchmark::DoNotOptimize(t);
  }
}

[[maybe_unused]] const bool registered = [] {
  for (const auto* algo : lanes::algos::algorithms_for(Collective::bcast)) {
    if (algo->cost == nullptr) continue;
    const std::string name = "cost/bcast/" + std::string(algo->name) + "/nodes10000/1048576";
    benchmark::RegisterBenchmark(name.c_str(), one_formula, algo);
  }
  return true;
}();

}  // namespace
