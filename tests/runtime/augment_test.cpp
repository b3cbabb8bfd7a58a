// Augmentation: the crop of the zero-padded image and the flip move pixels exactly as a
// padded-then-cropped reference does, in both layouts; the choices follow from the seed.
#include "runtime/augment.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "common/op_harness.h"
#include "graph/errors.h"

namespace cbt {
namespace {

// Reference on (C, H, W): pad by `pad` zeros all round, take the HxW window whose top-left
// corner is (pad + dy, pad + dx), mirror it left-right when flip.
std::vector<float> padded_crop_reference(const float* src, int64_t C, int64_t H, int64_t W, int pad, int dy, int dx,
                                         bool flip) {
  const int64_t PH = H + 2 * pad, PW = W + 2 * pad;
  std::vector<float> padded(static_cast<size_t>(C * PH * PW), 0.0f), out(static_cast<size_t>(C * H * W));
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) padded[(c * PH + y + pad) * PW + x + pad] = src[(c * H + y) * W + x];
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) {
        const float v = padded[(c * PH + pad + dy + y) * PW + pad + dx + x];
        out[(c * H + y) * W + (flip ? W - 1 - x : x)] = v;
      }
  return out;
}

std::vector<float> to_nhwc(const float* chw, int64_t C, int64_t H, int64_t W) {
  std::vector<float> out(static_cast<size_t>(C * H * W));
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < H * W; ++i) out[i * C + c] = chw[c * H * W + i];
  return out;
}

TEST(Augment, CropAndFlipMatchAPaddedCropInBothLayouts) {
  const int64_t C = 3, H = 7, W = 9;
  const int pad = 3;
  Tensor img = test::random_tensor(DType::Float32, {C, H, W}, 21);
  const float* src = img.ptr<float>();
  const auto src_nhwc = to_nhwc(src, C, H, W);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const int dy = static_cast<int>(rng() % (2 * pad + 1)) - pad, dx = static_cast<int>(rng() % (2 * pad + 1)) - pad;
    const bool flip = rng() & 1;
    const int32_t choice[3] = {dy, dx, flip ? 1 : 0};
    const auto want = padded_crop_reference(src, C, H, W, pad, dy, dx, flip);
    std::vector<float> got(want.size(), -7.0f);
    augment_sample(src, got.data(), ImageLayout{C, H, W, Layout::NCHW}, choice);
    ASSERT_EQ(got, want) << "NCHW dy " << dy << " dx " << dx << " flip " << flip;
    augment_sample(src_nhwc.data(), got.data(), ImageLayout{C, H, W, Layout::NHWC}, choice);
    ASSERT_EQ(got, to_nhwc(want.data(), C, H, W)) << "NHWC dy " << dy << " dx " << dx << " flip " << flip;
  }
}

TEST(Augment, ShiftAndMirrorMovePixelsWhereExpected) {
  // One channel, 3 x 4, values 1..12 row by row.
  std::vector<float> src(12);
  for (int i = 0; i < 12; ++i) src[i] = static_cast<float>(i + 1);
  std::vector<float> out(12);
  const ImageLayout l{1, 3, 4, Layout::NCHW};
  const int32_t down[3] = {1, 0, 0};  // window one row lower: rows move up, zeros at the bottom
  augment_sample(src.data(), out.data(), l, down);
  EXPECT_EQ(out, (std::vector<float>{5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0}));
  const int32_t left[3] = {0, -2, 0};  // window two columns to the left: zeros on the left
  augment_sample(src.data(), out.data(), l, left);
  EXPECT_EQ(out, (std::vector<float>{0, 0, 1, 2, 0, 0, 5, 6, 0, 0, 9, 10}));
  const int32_t mirror[3] = {0, 0, 1};
  augment_sample(src.data(), out.data(), l, mirror);
  EXPECT_EQ(out, (std::vector<float>{4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9}));
  const int32_t none[3] = {0, 0, 0};
  augment_sample(src.data(), out.data(), l, none);
  EXPECT_EQ(out, src);
}

Dataset image_set(int64_t n, Augmentation a) {
  Dataset d;
  d.image = ImageLayout{2, 5, 6, Layout::NCHW};
  d.images = test::random_tensor(DType::Float32, {n, 2, 5, 6}, 31);
  d.labels = test::random_int_tensor({n}, 0, 10, 32);
  d.num_classes = 10;
  d.augment = a;
  return d;
}

TEST(Augment, ChoicesFollowFromSeedAndEpoch) {
  Dataset d = image_set(500, Augmentation{4, true});
  auto a = epoch_augmentation(d, 7, 1);
  ASSERT_EQ(a.size(), 1500u);
  EXPECT_EQ(a, epoch_augmentation(d, 7, 1)) << "same seed and epoch, same choices";
  EXPECT_NE(a, epoch_augmentation(d, 7, 2)) << "another epoch";
  EXPECT_NE(a, epoch_augmentation(d, 8, 1)) << "another seed";
  std::set<int32_t> dys, flips;
  for (size_t p = 0; p < 500; ++p) {
    EXPECT_GE(a[3 * p], -4);
    EXPECT_LE(a[3 * p], 4);
    EXPECT_GE(a[3 * p + 1], -4);
    EXPECT_LE(a[3 * p + 1], 4);
    dys.insert(a[3 * p]);
    flips.insert(a[3 * p + 2]);
  }
  EXPECT_EQ(dys.size(), 9u) << "every offset in [-4, 4] occurs";
  EXPECT_EQ(flips, (std::set<int32_t>{0, 1}));
  // Flip only: no offsets. No augmentation: no choices.
  d.augment = Augmentation{0, true};
  a = epoch_augmentation(d, 7, 1);
  for (size_t p = 0; p < 500; ++p) EXPECT_EQ(a[3 * p] | a[3 * p + 1], 0);
  d.augment = Augmentation{};
  EXPECT_TRUE(epoch_augmentation(d, 7, 1).empty());
}

TEST(Augment, GatherAppliesEachSamplesOwnChoice) {
  Dataset d = image_set(20, Augmentation{2, true});
  auto order = epoch_order(d.size(), 3, 1);
  auto choices = epoch_augmentation(d, 3, 1);
  const int64_t start = 8, count = 6, per = d.sample_numel();
  Tensor x(DType::Float32, {count, 2, 5, 6}), y(DType::Int64, {count});
  gather_batch(d, order.data() + start, count, x, y, choices.data() + 3 * start);
  std::vector<float> want(static_cast<size_t>(per));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t s = order[start + i];
    augment_sample(d.images.ptr<float>() + s * per, want.data(), d.image, choices.data() + 3 * (start + i));
    EXPECT_EQ(std::vector<float>(x.ptr<float>() + i * per, x.ptr<float>() + (i + 1) * per), want) << i;
    EXPECT_EQ(y.ptr<int64_t>()[i], d.labels.ptr<int64_t>()[s]);
  }
}

TEST(Augment, FlagParsing) {
  Augmentation a = parse_augmentation("crop:4,flip");
  EXPECT_EQ(a.pad, 4);
  EXPECT_TRUE(a.flip);
  EXPECT_FALSE(parse_augmentation("none").enabled());
  EXPECT_FALSE(parse_augmentation("").enabled());
  EXPECT_EQ(parse_augmentation("crop:2").pad, 2);
  EXPECT_FALSE(parse_augmentation("crop:2").flip);
  for (const char* bad : {"crop", "crop:0", "crop:x", "crop:4,rotate", "flip,", ",", "crop:99"})
    EXPECT_THROW(parse_augmentation(bad), UserError) << bad;
}

}  // namespace
}  // namespace cbt
