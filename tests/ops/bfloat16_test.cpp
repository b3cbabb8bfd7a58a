// The host's bfloat16 (ops/bfloat16.h), which the channels-last conversions and the bf16 tests'
// references use: round to nearest even, ties included; NaN stays NaN; infinities and
// overflow; every bfloat16 survives the round trip; random floats within half an ulp.
#include "ops/bfloat16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace cbt::test {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(Bfloat16, RoundsToNearestAndTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81): down to the even one;
  // 1 + 3 * 2^-8 halfway between 0x3f81 and 0x3f82 (even): up.
  EXPECT_EQ(bf16_from_float(from_bits(0x3f808000u)), 0x3f80u);
  EXPECT_EQ(bf16_from_float(from_bits(0x3f818000u)), 0x3f82u);
  EXPECT_EQ(bf16_from_float(from_bits(0xbf808000u)), 0xbf80u);  // negative ties alike
  EXPECT_EQ(bf16_from_float(from_bits(0xbf818000u)), 0xbf82u);
  // Off the tie, to the nearer one.
  EXPECT_EQ(bf16_from_float(from_bits(0x3f808001u)), 0x3f81u);
  EXPECT_EQ(bf16_from_float(from_bits(0x3f807fffu)), 0x3f80u);
  // The carry runs into the exponent: just below 2 rounds to 2.
  EXPECT_EQ(bf16_from_float(from_bits(0x3fffffffu)), 0x4000u);
  EXPECT_EQ(bf16_from_float(1.0f), 0x3f80u);
  EXPECT_EQ(bf16_from_float(-2.5f), 0xc020u);
  EXPECT_EQ(bf16_from_float(0.0f), 0x0000u);
  EXPECT_EQ(bf16_from_float(-0.0f), 0x8000u);
}

TEST(Bfloat16, NanStaysNanAndInfinitiesStay) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16_from_float(inf), 0x7f80u);
  EXPECT_EQ(bf16_from_float(-inf), 0xff80u);
  EXPECT_EQ(float_from_bf16(0x7f80u), inf);
  EXPECT_EQ(float_from_bf16(0xff80u), -inf);
  // Past the largest bfloat16 (0x7f7f) by more than half an ulp: infinity, as IEEE rounding has it.
  EXPECT_EQ(bf16_from_float(std::numeric_limits<float>::max()), 0x7f80u);
  EXPECT_EQ(bf16_from_float(-std::numeric_limits<float>::max()), 0xff80u);
  // Quiet, signalling (whose payload lies only in the bits that go: truncation would give
  // infinity) and negative NaNs.
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0x7fa00000u, 0xffc12345u, 0xff800001u}) {
    const uint16_t b = bf16_from_float(from_bits(nan));
    EXPECT_TRUE(std::isnan(float_from_bf16(b))) << std::hex << nan;
    EXPECT_EQ(b & 0x8000u, (nan >> 16) & 0x8000u) << std::hex << nan << ": the sign is kept";
  }
  EXPECT_TRUE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Bfloat16, EveryBfloat16SurvivesTheRoundTrip) {
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const float f = float_from_bf16(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(float_from_bf16(bf16_from_float(f)))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(bf16_from_float(f), b) << std::hex << b;
  }
}

TEST(Bfloat16, RandomFloatsRoundWithinHalfAnUlp) {
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<int> exponent(-100, 100);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  for (int i = 0; i < 1000000; ++i) {
    const float f = std::ldexp(mantissa(rng), exponent(rng));
    if (std::fpclassify(f) != FP_NORMAL) continue;  // subnormals keep fewer bits
    const float r = round_to_bf16(f);
    // Half an ulp of an 8-bit significand: at most 2^-8 of |f|; and nearest, so it is the
    // closer of the two bfloat16 neighbours that truncation and the next one up give.
    ASSERT_LE(std::abs(double(r) - double(f)), std::ldexp(std::abs(double(f)), -8)) << f;
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    const double below = float_from_bf16(static_cast<uint16_t>(u >> 16));
    const double above = float_from_bf16(static_cast<uint16_t>((u >> 16) + 1));
    ASSERT_LE(std::abs(double(r) - double(f)), std::min(std::abs(below - f), std::abs(above - f))) << f;
  }
}

}  // namespace
}  // namespace cbt::test
