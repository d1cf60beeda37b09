// The reduction kernels: every instruction set built and run here gives the baseline's bits, for
// every type and operation, both operand orders, in place and not, at lengths around the vector
// widths; the baseline gives the values the operations define (wrapping integers, bfloat16
// rounded to nearest even, NaNs kept quiet).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "lib/combine.hpp"
#include "lib/combine_kernels.hpp"

namespace {

using lanes::Datatype;
using lanes::Op;
namespace kernels = lanes::detail::kernels;

constexpr Datatype kTypes[] = {Datatype::int8,    Datatype::int16,   Datatype::int32,
                               Datatype::int64,   Datatype::uint8,   Datatype::uint16,
                               Datatype::uint32,  Datatype::uint64,  Datatype::float32,
                               Datatype::float64, Datatype::bfloat16};
constexpr Op kOps[] = {Op::sum, Op::prod, Op::min,  Op::max, Op::band,
                       Op::bor, Op::bxor, Op::land, Op::lor, Op::lxor};

// Random bytes, with some elements zero (for the logical operations) and, for floating point,
// some NaNs, infinities and signed zeros.
std::vector<std::byte> operand(Datatype type, std::size_t count, std::mt19937& rng) {
  const std::size_t elem = lanes::size_of(type);
  std::vector<std::byte> v(count * elem);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  for (std::size_t i = 0; i < count; ++i) {
    std::byte* e = v.data() + i * elem;
    const unsigned pick = rng() % 16;
    if (pick == 0) std::memset(e, 0, elem);
    if (type == Datatype::float32 && pick == 1) {
      const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(), -0.0F};
      std::memcpy(e, &special[rng() % 3], elem);
    }
    if (type == Datatype::float64 && pick == 1) {
      const double special[] = {std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::infinity(), -0.0};
      std::memcpy(e, &special[rng() % 3], elem);
    }
    if (type == Datatype::bfloat16 && pick == 1) {
      const std::uint16_t special[] = {0x7fc1, 0xff80, 0x8000};  // NaN, -inf, -0
      std::memcpy(e, &special[rng() % 3], elem);
    }
  }
  return v;
}

TEST(Combine, EveryInstructionSetGivesTheBaselinesBits) {
  std::mt19937 rng(7);
  const kernels::Isa wider[] = {kernels::Isa::avx2, kernels::Isa::avx512};
  int compared = 0;
  for (const kernels::Isa isa : wider) {
    if (!kernels::supported(isa)) continue;
    for (const Datatype type : kTypes) {
      for (const Op op : kOps) {
        const lanes::detail::CombineFn base = kernels::baseline(type, op);
        const lanes::detail::CombineFn wide = kernels::for_isa(isa, type, op);
        ASSERT_EQ(base == nullptr, wide == nullptr);
        if (base == nullptr) continue;
        for (const std::size_t count :
             {0UL, 1UL, 3UL, 15UL, 16UL, 17UL, 63UL, 129UL, 1000UL, 4099UL}) {
          for (const bool src_first : {false, true}) {
            const auto acc = operand(type, count, rng);
            const auto src = operand(type, count, rng);
            std::vector<std::byte> want(acc.size()), got(acc.size());
            base(want.data(), acc.data(), src.data(), count, src_first);
            wide(got.data(), acc.data(), src.data(), count, src_first);
            EXPECT_EQ(want, got) << kernels::to_string(isa) << ' ' << lanes::to_string(type) << ' '
                                 << lanes::to_string(op) << " count " << count;
            auto in_place = acc;
            wide(in_place.data(), in_place.data(), src.data(), count, src_first);
            EXPECT_EQ(want, in_place) << kernels::to_string(isa) << " in place "
                                      << lanes::to_string(type) << ' ' << lanes::to_string(op);
            ++compared;
          }
        }
      }
    }
  }
  if (compared == 0) GTEST_SKIP() << "this CPU runs no wider kernels than the baseline";
}

TEST(Combine, TheBaselineComputesTheOperations) {
  // Integers wrap.
  const std::int8_t a8[] = {127, -128, 5, 0}, s8[] = {1, -1, -7, 0};
  std::int8_t d8[4];
  kernels::baseline(Datatype::int8, Op::sum)(reinterpret_cast<std::byte*>(d8),
                                             reinterpret_cast<const std::byte*>(a8),
                                             reinterpret_cast<const std::byte*>(s8), 4, false);
  EXPECT_EQ(d8[0], -128);
  EXPECT_EQ(d8[1], 127);
  EXPECT_EQ(d8[2], -2);
  EXPECT_EQ(d8[3], 0);
  // Logical operations give 0 or 1.
  const std::uint32_t la[] = {0, 0, 5, 9}, ls[] = {0, 3, 0, 2};
  std::uint32_t ld[4];
  kernels::baseline(Datatype::uint32, Op::lxor)(reinterpret_cast<std::byte*>(ld),
                                                reinterpret_cast<const std::byte*>(la),
                                                reinterpret_cast<const std::byte*>(ls), 4, false);
  EXPECT_EQ(ld[0], 0U);
  EXPECT_EQ(ld[1], 1U);
  EXPECT_EQ(ld[2], 1U);
  EXPECT_EQ(ld[3], 0U);
  // bfloat16: sums in float, rounded to nearest even; a NaN stays a quiet NaN.
  const auto bf = [](float f) {
    return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16);
  };
  const std::uint16_t ba[] = {bf(1.0F), bf(256.0F), bf(256.0F), 0x7f81};
  const std::uint16_t bs[] = {bf(2.0F), bf(1.0F), bf(3.0F), bf(1.0F)};
  std::uint16_t bd[4];
  kernels::baseline(Datatype::bfloat16, Op::sum)(reinterpret_cast<std::byte*>(bd),
                                                 reinterpret_cast<const std::byte*>(ba),
                                                 reinterpret_cast<const std::byte*>(bs), 4, false);
  EXPECT_EQ(bd[0], bf(3.0F));
  EXPECT_EQ(bd[1], bf(256.0F));       // 257 lies halfway between 256 and 258: to the even, 256
  EXPECT_EQ(bd[2], bf(260.0F));       // 259 lies halfway between 258 and 260: to the even, 260
  EXPECT_EQ(bd[3] & 0x7fc0, 0x7fc0);  // quiet NaN
  // Bitwise operations do not apply to floating point.
  EXPECT_EQ(kernels::baseline(Datatype::float32, Op::band), nullptr);
  EXPECT_EQ(kernels::baseline(Datatype::bfloat16, Op::bxor), nullptr);
}

TEST(Combine, CombineFnRunsTheWidestSupported) {
  const kernels::Isa isa = kernels::widest_supported();
  EXPECT_TRUE(kernels::supported(isa));
  EXPECT_EQ(lanes::detail::combine_fn(Datatype::int32, Op::sum),
            kernels::for_isa(isa, Datatype::int32, Op::sum));
}

}  // namespace
