// Reduction kernels (dst = dst (+) src), 64 KiB to 16 MiB per operand in steps of 4, for every
// instruction set built and run here (combine/<isa>/<type>_<op>), beside copy/memcpy of the same
// size: a kernel that vectorizes runs near memory bandwidth once its operands leave the caches (it
// reads two arrays and writes one, memcpy reads one and writes one). combine_fn() uses the widest.
// bench/results.sh prices the one-node reduction bound with combine/<widest>/int32_sum.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <vector>

#include "lib/combine.hpp"
#include "lib/combine_kernels.hpp"

namespace {

using lanes::Datatype;
using lanes::Op;
namespace kernels = lanes::detail::kernels;

void bm_combine(benchmark::State& state, kernels::Isa isa, Datatype type, Op op) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> dst(n, std::byte{1}), src(n, std::byte{2});
  const lanes::detail::CombineFn fn = kernels::for_isa(isa, type, op);
  const std::size_t count = n / lanes::size_of(type);
  for (auto _ : state) {
    fn(dst.data(), dst.data(), src.data(), count, false);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

constexpr long kMin = 64 << 10;
constexpr long kMax = 16 << 20;

const bool registered = [] {
  struct Case {
    Datatype type;
    Op op;
    const char* name;
  };
  const Case cases[] = {{Datatype::float64, Op::sum, "float64_sum"},
                        {Datatype::float32, Op::sum, "float32_sum"},
                        {Datatype::int32, Op::sum, "int32_sum"},
                        {Datatype::uint8, Op::max, "uint8_max"},
                        {Datatype::bfloat16, Op::sum, "bfloat16_sum"}};
  for (const kernels::Isa isa :
       {kernels::Isa::baseline, kernels::Isa::avx2, kernels::Isa::avx512}) {
    if (!kernels::supported(isa)) continue;
    for (const Case& c : cases) {
      const std::string name = std::string("combine/") + kernels::to_string(isa) + "/" + c.name;
      benchmark::RegisterBenchmark(name.c_str(), bm_combine, isa, c.type, c.op)
          ->RangeMultiplier(4)
          ->Range(kMin, kMax);
    }
  }
  return true;
}();

}  // namespace
