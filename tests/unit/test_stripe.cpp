#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/stripe.hpp"

namespace lanes::transport {
namespace {

std::vector<StripePart> parts(std::size_t bytes, const std::vector<std::uint32_t>& weights) {
  std::vector<StripePart> out;
  for (std::size_t i = 0; i < weights.size(); ++i) out.push_back(stripe_part(bytes, weights, i));
  return out;
}

TEST(Stripe, PartsTileTheMessageInProportion) {
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4095},
                                  std::size_t{4000000}, (std::size_t{1} << 40) + 7}) {
    for (const std::vector<std::uint32_t>& w :
         {std::vector<std::uint32_t>{1, 1}, std::vector<std::uint32_t>{1000, 500},
          std::vector<std::uint32_t>{3, 1, 7, 1000}}) {
      const std::vector<StripePart> p = parts(bytes, w);
      std::size_t at = 0;
      std::uint64_t total = 0;
      for (const std::uint32_t x : w) total += x;
      for (std::size_t i = 0; i < p.size(); ++i) {
        EXPECT_EQ(p[i].offset, at) << bytes << " part " << i;
        at += p[i].bytes;
        if (i + 1 < p.size()) {
          EXPECT_EQ(p[i + 1].offset % kStripeAlign, 0u);
        }
        // Within one alignment unit (plus the remainder on the last part) of the exact share.
        const double exact = static_cast<double>(bytes) * w[i] / static_cast<double>(total);
        EXPECT_NEAR(static_cast<double>(p[i].bytes), exact, 2.0 * kStripeAlign) << bytes;
      }
      EXPECT_EQ(at, bytes);
    }
  }
}

TEST(Stripe, UnequalRailsSplitTwoToOne) {
  const std::vector<StripePart> p = parts(1'000'000, {1000, 500});
  EXPECT_EQ(p[0].offset, 0u);
  EXPECT_EQ(p[0].bytes, 666'624u);  // 666,666 rounded down to 64 bytes
  EXPECT_EQ(p[1].offset, 666'624u);
  EXPECT_EQ(p[1].bytes, 333'376u);
}

}  // namespace
}  // namespace lanes::transport
