// cbtrain's direct convolution kernels: which convolutions and configurations they take
// (plain host code, runs without a GPU), and every configuration against a plain
// double-precision loop on random inputs (GPU).
#include "ops/cuda/direct_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "common/gpu.h"
#include "ops/cuda/copy_timing.h"

namespace cbt::cuda {
namespace {

DirectConv conv_of(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t K, int64_t P, bool turned = false) {
  DirectConv d;
  d.N = N, d.C = C, d.H = H, d.W = W, d.M = M, d.K = K, d.PH = P, d.PW = P, d.turned = turned;
  d.OH = H + 2 * P - K + 1, d.OW = W + 2 * P - K + 1;
  return d;
}

// The backward data of a stride-2 3x3 convolution with pads 1 of x (N, C, XH, XW) into
// M channels, as its four phases (dY (N, M, ceil(XH / 2), ceil(XW / 2)) in, dX out).
DirectConv phases_of(int64_t N, int64_t C, int64_t XH, int64_t XW, int64_t M) {
  return stride2_data_form(N, C, XH, XW, M);
}

// LeNet-5's convolutions at batch 32: forward of both, and the second's backward data (dY of
// (32, 16, 10, 10) through the turned filters, pads 4).
const DirectConv kLenet1 = conv_of(32, 1, 28, 28, 6, 5, 2);
const DirectConv kLenet2 = conv_of(32, 6, 14, 14, 16, 5, 0);
const DirectConv kLenet2Data = conv_of(32, 16, 10, 10, 6, 5, 4, true);

TEST(DirectConv, TakesLeNet5sConvolutionsInEveryConfigurationThatFits) {
  for (const DirectConv& d : {kLenet1, kLenet2, kLenet2Data}) {
    ASSERT_TRUE(direct_supported(d));
    const std::vector<DirectConfig> configs = direct_configs(d);
    ASSERT_FALSE(configs.empty());
    std::set<int> mts, pts;
    for (const DirectConfig& c : configs) {
      mts.insert(c.mt);
      pts.insert(c.pt);
      EXPECT_GE(c.bands, 1);
      EXPECT_LE(c.bands, d.OH);
      EXPECT_GE(c.splits, 1);
      EXPECT_LE(c.splits, d.M);
      EXPECT_TRUE(c.threads == 128 || c.threads == 256) << c.str();
    }
    EXPECT_GE(mts.size(), 4u);  // 1, 2, 4 and 8 channels a thread (16 where there are 9 or more)
    EXPECT_EQ(pts.size(), 3u);  // 1, 2 and 4 outputs a thread
  }
  // Six output channels: eight a thread is still offered (two padded), sixteen never.
  for (const DirectConfig& c : direct_configs(kLenet1)) EXPECT_LE(c.mt, 8);
}

TEST(DirectConv, RefusesWhatItCannotRun) {
  EXPECT_FALSE(direct_supported(conv_of(2, 3, 8, 8, 4, 7, 3)));     // a 7x7 filter
  EXPECT_FALSE(direct_supported(conv_of(2, 3, 8, 8, 4, 1, 0)));     // 1x1
  EXPECT_FALSE(direct_supported(conv_of(2, 3, 8, 8, 4, 3, 3)));     // a pad as large as the filter
  EXPECT_FALSE(direct_supported(conv_of(8, 512, 8, 8, 64, 3, 1)));  // 4,608 taps an output channel
  // 256 channels of 224 x 224: the input rows of one band alone exceed the 96 KB of shared memory.
  EXPECT_FALSE(direct_supported(conv_of(1, 256, 224, 224, 64, 3, 1)));
  EXPECT_TRUE(direct_supported(conv_of(8, 64, 8, 8, 64, 3, 1)));  // ResNet's last stage: in splits
  DirectConv wrong = conv_of(2, 3, 8, 8, 4, 3, 1);
  wrong.OH += 1;  // an output size that is not the stride-1 one
  EXPECT_FALSE(direct_supported(wrong));
  EXPECT_TRUE(direct_configs(wrong).empty());
  // Phases: dY's size must be ceil(dX's / 2), the channels four phases each, K 2 and no pads.
  EXPECT_TRUE(direct_supported(phases_of(32, 16, 32, 32, 32)));  // ResNet's first stride-2 convolution
  EXPECT_TRUE(direct_supported(phases_of(2, 3, 9, 7, 5)));       // odd sizes: the last odd phase is cut
  DirectConv off = phases_of(2, 3, 8, 8, 4);
  off.XH = 10;  // dY of 4 rows is not the stride-2 output of 10
  EXPECT_FALSE(direct_supported(off));
  off = phases_of(2, 3, 8, 8, 4);
  off.M = 13;  // not four phases a channel
  EXPECT_FALSE(direct_supported(off));
  off = phases_of(2, 3, 8, 8, 4);
  off.PH = 1;
  EXPECT_FALSE(direct_supported(off));
  off = phases_of(2, 3, 8, 8, 4);
  off.phases = false;  // K = 2 without phases
  EXPECT_FALSE(direct_supported(off));
  EXPECT_TRUE(direct_wgrad_configs(phases_of(2, 3, 8, 8, 4), size_t{32} << 20).empty());
}

// dX (N, C', XH, XW) of a stride-2 3x3 convolution with pads 1 from dY = in and the forward
// filters w (C, C', 3, 3), in double, from the convolution's definition (not its phases):
// dX[n][c'][h][x] sums dY[n][c][oh][ow] w[c][c'][kh][kw] over h = 2 oh - 1 + kh, x = 2 ow - 1 + kw.
std::vector<double> stride2_data_reference(const DirectConv& d, const std::vector<float>& in,
                                           const std::vector<float>& w) {
  const int64_t Cx = d.M / 4;
  std::vector<double> out(static_cast<size_t>(d.N * Cx * d.XH * d.XW));
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t c = 0; c < d.C; ++c)
      for (int64_t oh = 0; oh < d.H; ++oh)
        for (int64_t ow = 0; ow < d.W; ++ow) {
          const double g = in[((n * d.C + c) * d.H + oh) * d.W + ow];
          for (int64_t cx = 0; cx < Cx; ++cx)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t h = 2 * oh - 1 + kh, x = 2 * ow - 1 + kw;
                if (h < 0 || h >= d.XH || x < 0 || x >= d.XW) continue;
                out[((n * Cx + cx) * d.XH + h) * d.XW + x] += g * w[((c * Cx + cx) * 3 + kh) * 3 + kw];
              }
        }
  return out;
}

// out = conv(in, w) + bias (then Relu) in double, as DirectConv defines it.
std::vector<double> reference(const DirectConv& d, const std::vector<float>& in, const std::vector<float>& w,
                              const std::vector<float>& bias, bool relu) {
  if (d.phases) return stride2_data_reference(d, in, w);
  std::vector<double> out(static_cast<size_t>(d.N * d.M * d.OH * d.OW));
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t m = 0; m < d.M; ++m)
      for (int64_t oh = 0; oh < d.OH; ++oh)
        for (int64_t ow = 0; ow < d.OW; ++ow) {
          double s = bias.empty() ? 0.0 : bias[m];
          for (int64_t c = 0; c < d.C; ++c)
            for (int64_t kh = 0; kh < d.K; ++kh)
              for (int64_t kw = 0; kw < d.K; ++kw) {
                const int64_t h = oh + kh - d.PH, x = ow + kw - d.PW;
                if (h < 0 || h >= d.H || x < 0 || x >= d.W) continue;
                const float tap = d.turned ? w[((c * d.M + m) * d.K + (d.K - 1 - kh)) * d.K + (d.K - 1 - kw)]
                                           : w[((m * d.C + c) * d.K + kh) * d.K + kw];
                s += static_cast<double>(in[((n * d.C + c) * d.H + h) * d.W + x]) * tap;
              }
          out[((n * d.M + m) * d.OH + oh) * d.OW + ow] = relu && s < 0 ? 0.0 : s;
        }
  return out;
}

std::vector<float> normal(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The largest |got - want|; infinite where got is NaN (a value the kernel never wrote).
double worst_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
  }
  return worst;
}

double largest_magnitude(const std::vector<double>& v) {
  double scale = 1e-30;
  for (double x : v) scale = std::max(scale, std::abs(x));
  return scale;
}

void upload(DeviceBuffer& b, const std::vector<float>& v) {
  ASSERT_EQ(cudaMemcpy(b.p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
}

// Every configuration of each of `convs` on the current device against the plain loop, with
// and without bias and Relu (phases: without); `checked` counts the runs compared.
void check_every_configuration(const std::vector<DirectConv>& convs, uint64_t seed, int& checked) {
  for (const DirectConv& d : convs) {
    const size_t in_n = static_cast<size_t>(d.N * d.C * d.H * d.W), w_n = static_cast<size_t>(direct_filter_floats(d));
    const size_t out_n = static_cast<size_t>(direct_out_floats(d));
    const std::vector<float> in = normal(in_n, ++seed), w = normal(w_n, ++seed), bias = normal(d.M, ++seed);
    DeviceBuffer din(in_n * 4), dw(w_n * 4), dbias(bias.size() * 4), dout(out_n * 4);
    upload(din, in);
    upload(dw, w);
    upload(dbias, bias);
    for (bool with_bias : {false, true}) {
      if (with_bias && d.phases) {  // a backward data has neither: the launch refuses them
        EXPECT_FALSE(direct_conv(nullptr, d, direct_configs(d).at(0), static_cast<const float*>(din.p),
                                 static_cast<const float*>(dw.p), static_cast<const float*>(dbias.p), true,
                                 static_cast<float*>(dout.p)));
        continue;
      }
      const std::vector<double> want = reference(d, in, w, with_bias ? bias : std::vector<float>{}, with_bias);
      const double scale = largest_magnitude(want);
      for (const DirectConfig& cfg : direct_configs(d)) {
        ASSERT_EQ(cudaMemset(dout.p, 0xff, out_n * 4), cudaSuccess);  // NaNs where nothing is written
        const uint64_t runs = direct_runs();
        ASSERT_TRUE(direct_conv(nullptr, d, cfg, static_cast<const float*>(din.p), static_cast<const float*>(dw.p),
                                with_bias ? static_cast<const float*>(dbias.p) : nullptr, with_bias,
                                static_cast<float*>(dout.p)))
            << cfg.str() << " (" << direct_shared_bytes(d, cfg) << " bytes of shared memory)";
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_EQ(direct_runs(), runs + 1);
        const std::vector<float> got = dout.download(out_n);
        const double worst = worst_error(got, want);
        // float32 sums of at most 576 products of unit-variance values
        EXPECT_LE(worst / scale, 1e-5) << "C=" << d.C << " M=" << d.M << " K=" << d.K << " turned=" << d.turned
                                       << " phases=" << d.phases << " bias/relu=" << with_bias << " " << cfg.str();
        ++checked;
      }
    }
  }
}

// Rows whose width is a multiple of 4 are copied 16 bytes at a time, which needs 16-byte aligned
// images: an input one float off that grid (a view into a larger buffer) takes the 4-byte copies
// and gives the same outputs, bit for bit, as the aligned input in every configuration (a
// 16-byte copy from it would fail with a misaligned address).
TEST(DirectConv, AnInputOffTheSixteenByteGridGivesTheSameOutputs) {
  CBT_SKIP_WITHOUT_GPU();
  const DirectConv d = conv_of(2, 3, 8, 12, 5, 3, 1);
  const size_t in_n = static_cast<size_t>(d.N * d.C * d.H * d.W), w_n = static_cast<size_t>(d.M * d.C * d.K * d.K);
  const size_t out_n = static_cast<size_t>(d.N * d.M * d.OH * d.OW);
  const std::vector<float> in = normal(in_n, 41), w = normal(w_n, 42);
  DeviceBuffer din((in_n + 1) * 4), dw(w_n * 4), dout(out_n * 4), dout_off(out_n * 4);
  upload(dw, w);
  float* aligned = static_cast<float*>(din.p);
  const std::vector<double> want = reference(d, in, w, {}, false);
  int checked = 0;
  for (const DirectConfig& cfg : direct_configs(d)) {
    ASSERT_EQ(cudaMemcpy(aligned, in.data(), in_n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(direct_conv(nullptr, d, cfg, aligned, static_cast<const float*>(dw.p), nullptr, false,
                            static_cast<float*>(dout.p)));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(aligned + 1, in.data(), in_n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(direct_conv(nullptr, d, cfg, aligned + 1, static_cast<const float*>(dw.p), nullptr, false,
                            static_cast<float*>(dout_off.p)));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << cfg.str();
    const std::vector<float> a = dout.download(out_n), b = dout_off.download(out_n);
    EXPECT_LE(worst_error(a, want) / largest_magnitude(want), 1e-5) << cfg.str();
    EXPECT_EQ(a, b) << cfg.str();
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

// ResNet's 64-channel stage at 16 x 16: configurations whose band of input rows takes more than
// the 48 KB a kernel gets without opting in.
const DirectConv kWide = conv_of(2, 64, 16, 16, 64, 3, 1);

// Host code: kWide's list holds configurations beyond 48 KB (the multi-GPU test's premise) and
// none beyond the 96 KB the kernels opt in to.
TEST(DirectConv, OffersConfigurationsBeyond48KBOfSharedMemoryUpTo96) {
  int beyond = 0;
  for (const DirectConfig& c : direct_configs(kWide)) {
    beyond += direct_shared_bytes(kWide, c) > 48 * 1024;
    EXPECT_LE(direct_shared_bytes(kWide, c), 96u * 1024) << c.str();
  }
  EXPECT_GT(beyond, 0);
}

TEST(DirectConv, EveryConfigurationMatchesAPlainLoop) {
  CBT_SKIP_WITHOUT_GPU();
  // LeNet-5's three at a batch of 3; 3x3 ones with channels that no `mt` divides and heights
  // that no `pt` divides, and one's backward data; ResNet's last stage (in channel splits), and
  // kWide; each with and without bias and Relu.
  int checked = 0;
  check_every_configuration(
      {conv_of(3, 1, 28, 28, 6, 5, 2), conv_of(3, 6, 14, 14, 16, 5, 0), conv_of(3, 16, 10, 10, 6, 5, 4, true),
       conv_of(2, 3, 7, 5, 5, 3, 1), conv_of(2, 4, 7, 6, 20, 3, 1), conv_of(2, 5, 7, 5, 3, 3, 1, true),
       conv_of(2, 64, 8, 8, 64, 3, 1), kWide},
      7, checked);
  EXPECT_GE(checked, 200);
}

// The backward data of stride-2 3x3 convolutions as four phases, in every configuration against
// the convolution's definition: even and odd sizes (an odd size cuts the last odd phase),
// channels that no `mt` divides (so that a thread's channels span phases), one row of dX, and
// ResNet's two stride-2 convolutions at a batch of 2.
TEST(DirectConv, StrideTwoBackwardDataMatchesAPlainLoopInEveryConfiguration) {
  CBT_SKIP_WITHOUT_GPU();
  int checked = 0;
  const std::vector<DirectConv> convs{phases_of(2, 3, 9, 8, 5), phases_of(3, 5, 7, 7, 6), phases_of(2, 4, 1, 14, 3),
                                      phases_of(2, 16, 32, 32, 32), phases_of(2, 32, 16, 16, 64)};
  for (const DirectConv& d : convs) {
    ASSERT_TRUE(direct_supported(d)) << d.XH << "x" << d.XW;
    ASSERT_FALSE(direct_configs(d).empty()) << d.XH << "x" << d.XW;
  }
  check_every_configuration(convs, 61, checked);
  EXPECT_GE(checked, 100);
}

TEST(DirectWgrad, TakesLeNet5sConvolutionsWithinTheWorkspace) {
  for (const DirectConv& d : {kLenet1, kLenet2}) {
    const std::vector<WgradConfig> configs = direct_wgrad_configs(d, size_t{32} << 20);
    ASSERT_FALSE(configs.empty());
    for (const WgradConfig& c : configs) {
      EXPECT_LE(direct_wgrad_partial_bytes(d, c), size_t{32} << 20) << c.str();
      EXPECT_LE(c.z, d.OH);
      EXPECT_LE(c.ipb, d.N);
    }
    // A budget below every configuration's partial sums leaves none.
    EXPECT_TRUE(direct_wgrad_configs(d, 16).empty());
  }
  EXPECT_TRUE(direct_wgrad_configs(kLenet2Data, size_t{32} << 20).empty());  // a turned form is not a filter gradient
}

TEST(DirectWgrad, OffersTiledConfigurationsThatDivideResNetsStages) {
  // ResNet-32's three stages at batch 32: 16, 32 and 64 channels of 32, 16 and 8 pixels a side.
  for (const DirectConv& d :
       {conv_of(32, 16, 32, 32, 16, 3, 1), conv_of(32, 32, 16, 16, 32, 3, 1), conv_of(32, 64, 8, 8, 64, 3, 1)}) {
    int tiled = 0, wide = 0;
    for (const WgradConfig& c : direct_wgrad_configs(d, size_t{32} << 20)) {
      if (c.mt == 0) continue;
      ++tiled;
      wide += c.mt * c.ct >= 4;
      EXPECT_EQ(d.M % c.mt, 0) << c.str();
      EXPECT_EQ(d.C % c.ct, 0) << c.str();
      EXPECT_GE(c.rb, 1) << c.str();
      EXPECT_LE(c.rb, d.OH) << c.str();
      EXPECT_LE(c.ipb, 4) << c.str();
      EXPECT_LE(direct_wgrad_partial_bytes(d, c), size_t{32} << 20) << c.str();
    }
    EXPECT_GE(tiled, 12) << "C=" << d.C;
    EXPECT_GE(wide, 6) << "C=" << d.C;
  }
  // A grid takes at most 65,535 blocks along y (bands x image groups): 4,000 images of 224 rows
  // in bands of 4 would need 224,000 with one image a block, yet their sums fit the workspace.
  const DirectConv tall = conv_of(4000, 1, 224, 224, 2, 3, 1);
  int tall_tiled = 0;
  for (const WgradConfig& c : direct_wgrad_configs(tall, size_t{32} << 20)) {
    if (c.mt == 0) continue;
    ++tall_tiled;
    EXPECT_LE(direct_wgrad_partial_bytes(tall, c) / (tall.M * tall.C * 9 * sizeof(float)), 65535u) << c.str();
  }
  EXPECT_GT(tall_tiled, 0);
  // 5x5 filters have only the narrow tiles; 7 input channels take no two-channel tile.
  for (const WgradConfig& c : direct_wgrad_configs(kLenet2, size_t{32} << 20)) EXPECT_LE(c.mt * c.ct, 2) << c.str();
  for (const WgradConfig& c : direct_wgrad_configs(conv_of(4, 7, 8, 8, 8, 3, 1), size_t{32} << 20))
    EXPECT_LE(c.ct, 1) << c.str();
}

// dW (M, C, K, K) of the forward convolution d from x and dy, in double.
std::vector<double> wgrad_reference(const DirectConv& d, const std::vector<float>& x, const std::vector<float>& dy) {
  std::vector<double> dw(static_cast<size_t>(d.M * d.C * d.K * d.K), 0.0);
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t m = 0; m < d.M; ++m)
      for (int64_t c = 0; c < d.C; ++c)
        for (int64_t kh = 0; kh < d.K; ++kh)
          for (int64_t kw = 0; kw < d.K; ++kw) {
            double s = 0;
            for (int64_t oh = 0; oh < d.OH; ++oh)
              for (int64_t ow = 0; ow < d.OW; ++ow) {
                const int64_t h = oh + kh - d.PH, w = ow + kw - d.PW;
                if (h < 0 || h >= d.H || w < 0 || w >= d.W) continue;
                s += static_cast<double>(dy[((n * d.M + m) * d.OH + oh) * d.OW + ow]) *
                     x[((n * d.C + c) * d.H + h) * d.W + w];
              }
            dw[((m * d.C + c) * d.K + kh) * d.K + kw] += s;
          }
  return dw;
}

// Every backward-filter configuration of each of `convs` on the current device against the
// plain loop; `checked` counts the runs compared.
void check_every_wgrad_configuration(const std::vector<DirectConv>& convs, uint64_t seed, int& checked) {
  for (const DirectConv& d : convs) {
    const size_t x_n = static_cast<size_t>(d.N * d.C * d.H * d.W), dy_n = static_cast<size_t>(d.N * d.M * d.OH * d.OW);
    const size_t dw_n = static_cast<size_t>(d.M * d.C * d.K * d.K);
    const std::vector<float> x = normal(x_n, ++seed), dy = normal(dy_n, ++seed);
    const std::vector<double> want = wgrad_reference(d, x, dy);
    const double scale = largest_magnitude(want);
    const std::vector<WgradConfig> configs = direct_wgrad_configs(d, size_t{32} << 20);
    ASSERT_FALSE(configs.empty());
    size_t partial_bytes = 0;
    for (const WgradConfig& c : configs) partial_bytes = std::max(partial_bytes, direct_wgrad_partial_bytes(d, c));
    DeviceBuffer dx(x_n * 4), ddy(dy_n * 4), ddw(dw_n * 4), partial(partial_bytes);
    upload(dx, x);
    upload(ddy, dy);
    for (const WgradConfig& cfg : configs) {
      ASSERT_EQ(cudaMemset(ddw.p, 0xff, dw_n * 4), cudaSuccess);  // NaNs where nothing is written
      ASSERT_EQ(cudaMemset(partial.p, 0xff, partial_bytes), cudaSuccess);
      const uint64_t runs = direct_runs();
      ASSERT_TRUE(direct_wgrad(nullptr, d, cfg, static_cast<const float*>(dx.p), static_cast<const float*>(ddy.p),
                               static_cast<float*>(partial.p), static_cast<float*>(ddw.p)))
          << cfg.str();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(direct_runs(), runs + 1);
      const std::vector<float> got = ddw.download(dw_n);
      const double worst = worst_error(got, want);
      // float32 sums of up to 2,352 products of unit-variance values
      EXPECT_LE(worst / scale, 5e-5) << "C=" << d.C << " M=" << d.M << " K=" << d.K << " " << cfg.str();
      ++checked;
    }
  }
}

// LeNet-5's two at a batch of 3 (images that no `ipb` divides), a 3x3 one with odd sizes, a
// 16-channel ResNet stage at a batch of 2, and a 32-channel one whose 6 rows no band of 4
// divides (the tiled kernel's blocks of fewer rows).
const std::vector<DirectConv> kWgradConvs = {conv_of(3, 1, 28, 28, 6, 5, 2), conv_of(3, 6, 14, 14, 16, 5, 0),
                                             conv_of(2, 3, 7, 5, 5, 3, 1), conv_of(2, 16, 8, 8, 16, 3, 1),
                                             conv_of(3, 32, 6, 6, 32, 3, 1)};

// Both searches against a bar no configuration comes near (1 ns a copy) end after their first
// look at every fifth configuration, and say so; without a bar (as with CBT_CONV_DIRECT=always)
// they time them all and return a configuration timed again.
TEST(DirectKernels, ASearchAgainstAnUnreachableBarEndsAfterAFirstLook) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const DirectConv d = conv_of(32, 64, 8, 8, 64, 3, 1);  // ResNet-32's 64-channel stage
  const size_t configs = direct_configs(d).size(), wgrad_configs = direct_wgrad_configs(d, size_t{32} << 20).size();
  ASSERT_GE(configs, 20u);
  ASSERT_GE(wgrad_configs, 20u);
  const auto looked = [](size_t n) { return (n + 4) / 5; };
  const std::optional<DirectChoice> gave_up = choose_direct(stream, d, 8, nullptr, 1e-6f);
  ASSERT_TRUE(gave_up);
  EXPECT_EQ(gave_up->configs, configs);
  EXPECT_EQ(gave_up->looked_only, looked(configs));
  EXPECT_GT(gave_up->ms, 0.0f);
  const std::optional<WgradChoice> wgrad_gave_up = choose_direct_wgrad(stream, d, 8, size_t{32} << 20, nullptr, 1e-6f);
  ASSERT_TRUE(wgrad_gave_up);
  EXPECT_EQ(wgrad_gave_up->configs, wgrad_configs);
  EXPECT_EQ(wgrad_gave_up->looked_only, looked(wgrad_configs));
  const std::optional<DirectChoice> all = choose_direct(stream, d, 8);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->looked_only, 0u);
  EXPECT_GT(all->ms, 0.0f);
  const std::optional<WgradChoice> wgrad_all = choose_direct_wgrad(stream, d, 8, size_t{32} << 20);
  ASSERT_TRUE(wgrad_all);
  EXPECT_EQ(wgrad_all->looked_only, 0u);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(DirectWgrad, EveryConfigurationMatchesAPlainLoop) {
  CBT_SKIP_WITHOUT_GPU();
  int checked = 0;
  check_every_wgrad_configuration(kWgradConvs, 70, checked);
  EXPECT_GE(checked, 100);
}

// Each GPU of the process runs the configurations that take more than 48 KB of shared memory:
// a kernel's opt-in belongs to one device's context (it was made once, on the first GPU).
TEST(DirectKernels, ConfigurationsBeyond48KBOfSharedMemoryRunOnEveryGpu) {
  CBT_SKIP_WITHOUT_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "fewer than 2 CUDA devices: skipped";
  for (int dev = 0; dev < devices; ++dev) {
    ASSERT_EQ(cudaSetDevice(dev), cudaSuccess);
    int checked = 0;
    check_every_configuration({kWide}, 7, checked);
    check_every_wgrad_configuration(kWgradConvs, 70, checked);
    EXPECT_GE(checked, 100) << "GPU " << dev;
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}

}  // namespace
}  // namespace cbt::cuda
