// Reduction kernels (dst = dst (+) src), 64 KiB to 16 MiB per operand, beside copy/memcpy of the
// same size: a kernel that vectorizes runs near memory bandwidth once its operands leave the
// caches (it reads two arrays and writes one, memcpy reads one and writes one).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <vector>

#include "lib/combine.hpp"

namespace {

using lanes::Datatype;
using lanes::Op;

template <Datatype T, Op O>
void bm_combine(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> dst(n, std::byte{1}), src(n, std::byte{2});
  const lanes::detail::CombineFn fn = lanes::detail::combine_fn(T, O);
  const std::size_t count = n / lanes::size_of(T);
  for (auto _ : state) {
    fn(dst.data(), dst.data(), src.data(), count, false);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

constexpr long kMin = 64 << 10;
constexpr long kMax = 16 << 20;

BENCHMARK(bm_combine<Datatype::float64, Op::sum>)
    ->Name("combine/float64_sum")
    ->RangeMultiplier(16)
    ->Range(kMin, kMax);
BENCHMARK(bm_combine<Datatype::float32, Op::sum>)
    ->Name("combine/float32_sum")
    ->RangeMultiplier(16)
    ->Range(kMin, kMax);
BENCHMARK(bm_combine<Datatype::int32, Op::sum>)
    ->Name("combine/int32_sum")
    ->RangeMultiplier(16)
    ->Range(kMin, kMax);
BENCHMARK(bm_combine<Datatype::uint8, Op::max>)
    ->Name("combine/uint8_max")
    ->RangeMultiplier(16)
    ->Range(kMin, kMax);
BENCHMARK(bm_combine<Datatype::bfloat16, Op::sum>)
    ->Name("combine/bfloat16_sum")
    ->RangeMultiplier(16)
    ->Range(kMin, kMax);

}  // namespace
