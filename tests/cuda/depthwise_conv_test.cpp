// cbtrain's depthwise convolution kernels: which convolutions and configurations they take
// (plain host code, runs without a GPU), and every configuration of each op against a plain
// double-precision loop on random inputs (GPU).
#include "ops/cuda/depthwise_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/gpu.h"
#include "ops/cuda/copy_timing.h"

namespace cbt::cuda {
namespace {

constexpr size_t kBudget = size_t{32} << 20;
constexpr ConvOp kOps[] = {ConvOp::Forward, ConvOp::BackwardData, ConvOp::BackwardFilter};

// x (N, C, H, W) with K x K filters, stride S, leading pads (PH, PW) and trailing (TH, TW).
DepthwiseConv form(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t S, int64_t PH, int64_t PW, int64_t TH,
                   int64_t TW) {
  DepthwiseConv d;
  d.N = N, d.C = C, d.H = H, d.W = W, d.K = K, d.S = S, d.PH = PH, d.PW = PW;
  d.OH = (H + PH + TH - K) / S + 1, d.OW = (W + PW + TW - K) / S + 1;
  return d;
}
// Symmetric pads P.
DepthwiseConv form(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t S, int64_t P) {
  return form(N, C, H, W, K, S, P, P, P, P);
}

std::string name(const DepthwiseConv& d) {
  return "N=" + std::to_string(d.N) + " C=" + std::to_string(d.C) + " " + std::to_string(d.H) + "x" +
         std::to_string(d.W) + " K=" + std::to_string(d.K) + " S=" + std::to_string(d.S) +
         " pads=" + std::to_string(d.PH) + "," + std::to_string(d.PW) + " out=" + std::to_string(d.OH) + "x" +
         std::to_string(d.OW);
}

const char* op_str(ConvOp op) {
  return op == ConvOp::Forward ? "forward" : op == ConvOp::BackwardData ? "backward data" : "backward filter";
}

// The shapes the kernels are for (MobileNetV2/V3, EfficientNet, ShuffleNet, ConvNeXt at batch 32).
std::vector<DepthwiseConv> shapes_of_interest() {
  std::vector<DepthwiseConv> v;
  for (int64_t c : {16, 96, 192})
    for (int64_t hw : {28, 14, 7}) {
      v.push_back(form(32, c, hw, hw, 3, 1, 1));
      v.push_back(form(32, c, hw, hw, 3, 2, 1));
      v.push_back(form(32, c, hw, hw, 5, 1, 2));
      v.push_back(form(32, c, hw, hw, 7, 1, 3));
    }
  v.push_back(form(32, 32, 112, 112, 3, 1, 1));  // MobileNetV2's first depthwise convolution
  v.push_back(form(32, 96, 112, 112, 3, 2, 1));
  return v;
}

TEST(DepthwiseConv, OffersConfigurationsForEveryShapeOfInterest) {
  for (const DepthwiseConv& d : shapes_of_interest()) {
    ASSERT_TRUE(depthwise_supported(d)) << name(d);
    for (ConvOp op : kOps) {
      const std::vector<DepthwiseConfig> configs = depthwise_configs(d, op, kBudget);
      EXPECT_GE(configs.size(), 3u) << name(d) << " " << op_str(op);
      std::set<std::string> seen;
      for (const DepthwiseConfig& c : configs) {
        EXPECT_TRUE(seen.insert(c.str()).second) << "listed twice: " << c.str();
        EXPECT_TRUE(c.threads == 64 || c.threads == 128 || c.threads == 256) << c.str();
        EXPECT_TRUE(c.pt == 1 || c.pt == 2 || c.pt == 4) << c.str();
        EXPECT_LE(depthwise_shared_bytes(d, op, c), 48u * 1024) << name(d) << " " << c.str();
        EXPECT_LE(depthwise_partial_bytes(d, op, c), kBudget) << c.str();
        if (op != ConvOp::BackwardFilter) EXPECT_EQ(depthwise_partial_bytes(d, op, c), 0u) << c.str();
      }
    }
  }
}

// Without workspace the backward filter still has its one-block-a-channel configurations.
TEST(DepthwiseConv, TheBackwardFilterRunsWithoutWorkspace) {
  const DepthwiseConv d = form(32, 96, 28, 28, 3, 1, 1);
  const std::vector<DepthwiseConfig> configs = depthwise_configs(d, ConvOp::BackwardFilter, 0);
  ASSERT_FALSE(configs.empty());
  for (const DepthwiseConfig& c : configs) EXPECT_EQ(depthwise_partial_bytes(d, ConvOp::BackwardFilter, c), 0u);
  EXPECT_GT(depthwise_configs(d, ConvOp::BackwardFilter, kBudget).size(), configs.size());
}

TEST(DepthwiseConv, RefusesWhatItCannotRun) {
  EXPECT_FALSE(depthwise_supported(form(2, 4, 8, 8, 4, 1, 1)));  // an even filter
  EXPECT_FALSE(depthwise_supported(form(2, 4, 8, 8, 9, 1, 4)));  // 9 x 9
  EXPECT_FALSE(depthwise_supported(form(2, 4, 8, 8, 3, 3, 1)));  // stride 3
  EXPECT_FALSE(depthwise_supported(form(2, 4, 8, 8, 3, 1, 3)));  // a pad as large as the filter
  DepthwiseConv far = form(2, 4, 8, 8, 3, 1, 1);
  far.OH += 2;  // the last output rows' windows start below the image
  EXPECT_FALSE(depthwise_supported(far));
  for (ConvOp op : kOps) EXPECT_TRUE(depthwise_configs(far, op, kBudget).empty());
  // One pixel, the rest padding: tiny planes still have a configuration of each op.
  const DepthwiseConv pixel = form(1, 2, 1, 1, 7, 1, 3);
  EXPECT_TRUE(depthwise_supported(pixel));
  for (ConvOp op : kOps) EXPECT_FALSE(depthwise_configs(pixel, op, kBudget).empty()) << op_str(op);
  // Asymmetric pads: one leading, none trailing, and the reverse.
  EXPECT_TRUE(depthwise_supported(form(2, 4, 8, 8, 3, 2, 1, 1, 0, 0)));
  EXPECT_TRUE(depthwise_supported(form(2, 4, 8, 8, 3, 2, 0, 0, 1, 1)));
  // A configuration not offered is not launched (host check, before any device call).
  const DepthwiseConv d = form(2, 4, 8, 8, 3, 1, 1);
  EXPECT_FALSE(depthwise_forward(nullptr, d, DepthwiseConfig{3, 1, 1, 128}, nullptr, nullptr, nullptr, false, nullptr));
  EXPECT_FALSE(depthwise_backward_data(nullptr, far, DepthwiseConfig{}, nullptr, nullptr, nullptr));
}

std::vector<float> normal(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The three ops in double from the definition (depthwise_conv.h): every output (n, c, oh, ow)
// with every tap whose input lies inside x.
struct Reference {
  std::vector<double> y, dx, dw;
};
Reference reference(const DepthwiseConv& d, const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<float>& bias, bool relu, const std::vector<float>& dy) {
  Reference r;
  r.y.assign(static_cast<size_t>(d.N * d.C * d.OH * d.OW), 0.0);
  r.dx.assign(static_cast<size_t>(d.N * d.C * d.H * d.W), 0.0);
  r.dw.assign(static_cast<size_t>(d.C * d.K * d.K), 0.0);
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t c = 0; c < d.C; ++c)
      for (int64_t oh = 0; oh < d.OH; ++oh)
        for (int64_t ow = 0; ow < d.OW; ++ow) {
          const size_t o = static_cast<size_t>(((n * d.C + c) * d.OH + oh) * d.OW + ow);
          double s = bias.empty() ? 0.0 : bias[c];
          for (int64_t kh = 0; kh < d.K; ++kh)
            for (int64_t kw = 0; kw < d.K; ++kw) {
              const int64_t h = oh * d.S - d.PH + kh, v = ow * d.S - d.PW + kw;
              if (h < 0 || h >= d.H || v < 0 || v >= d.W) continue;
              const size_t i = static_cast<size_t>(((n * d.C + c) * d.H + h) * d.W + v);
              const size_t k = static_cast<size_t>((c * d.K + kh) * d.K + kw);
              s += static_cast<double>(x[i]) * w[k];
              r.dx[i] += static_cast<double>(dy[o]) * w[k];
              r.dw[k] += static_cast<double>(dy[o]) * x[i];
            }
          r.y[o] = relu && s < 0 ? 0.0 : s;
        }
  return r;
}

// The largest |got - want| relative to want's largest magnitude; infinite where got is NaN (a
// value the kernel never wrote).
double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / scale;
}

void upload(DeviceBuffer& b, const std::vector<float>& v) {
  ASSERT_EQ(cudaMemcpy(b.p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
}

// Every configuration of every op of each of `convs` on the current device against the plain
// loop: the forward with and without bias and Relu; the backward filter also run twice, for the
// same bits (deterministic). `checked` counts the runs compared.
void check_every_configuration(const std::vector<DepthwiseConv>& convs, uint64_t seed, int& checked) {
  for (const DepthwiseConv& d : convs) {
    ASSERT_TRUE(depthwise_supported(d)) << name(d);
    const size_t x_n = static_cast<size_t>(d.N * d.C * d.H * d.W), y_n = static_cast<size_t>(d.N * d.C * d.OH * d.OW);
    const size_t w_n = static_cast<size_t>(d.C * d.K * d.K);
    const std::vector<float> x = normal(x_n, ++seed), w = normal(w_n, ++seed), bias = normal(d.C, ++seed),
                             dy = normal(y_n, ++seed);
    const Reference plain = reference(d, x, w, {}, false, dy), biased = reference(d, x, w, bias, true, dy);
    DeviceBuffer dx_in(x_n * 4), dw_in(w_n * 4), dbias(d.C * 4), ddy(y_n * 4), dy_out(y_n * 4), dx_out(x_n * 4),
        dw_out(w_n * 4), partial(kBudget);
    upload(dx_in, x);
    upload(dw_in, w);
    upload(dbias, bias);
    upload(ddy, dy);
    const auto* xp = static_cast<const float*>(dx_in.p);
    const auto* wp = static_cast<const float*>(dw_in.p);
    const auto* dyp = static_cast<const float*>(ddy.p);
    for (ConvOp op : kOps) {
      const std::vector<DepthwiseConfig> configs = depthwise_configs(d, op, kBudget);
      ASSERT_FALSE(configs.empty()) << name(d) << " " << op_str(op);
      for (const DepthwiseConfig& cfg : configs) {
        const std::string what = name(d) + " " + op_str(op) + " " + cfg.str();
        const uint64_t runs = depthwise_runs();
        if (op == ConvOp::Forward) {
          for (bool with_bias : {false, true}) {
            ASSERT_EQ(cudaMemset(dy_out.p, 0xff, y_n * 4), cudaSuccess);  // NaNs where nothing is written
            ASSERT_TRUE(depthwise_forward(nullptr, d, cfg, xp, wp,
                                          with_bias ? static_cast<const float*>(dbias.p) : nullptr, with_bias,
                                          static_cast<float*>(dy_out.p)))
                << what;
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
            // float32 sums of at most 49 products of unit-variance values
            EXPECT_LE(relative_error(dy_out.download(y_n), with_bias ? biased.y : plain.y), 1e-5)
                << what << " bias/relu=" << with_bias;
            ++checked;
          }
          EXPECT_EQ(depthwise_runs(), runs + 2) << what;
        } else if (op == ConvOp::BackwardData) {
          ASSERT_EQ(cudaMemset(dx_out.p, 0xff, x_n * 4), cudaSuccess);
          ASSERT_TRUE(depthwise_backward_data(nullptr, d, cfg, dyp, wp, static_cast<float*>(dx_out.p))) << what;
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
          EXPECT_LE(relative_error(dx_out.download(x_n), plain.dx), 1e-5) << what;
          EXPECT_EQ(depthwise_runs(), runs + 1) << what;
          ++checked;
        } else {
          ASSERT_LE(depthwise_partial_bytes(d, op, cfg), kBudget) << what;
          std::vector<float> first;
          for (int run = 0; run < 2; ++run) {
            ASSERT_EQ(cudaMemset(dw_out.p, 0xff, w_n * 4), cudaSuccess);
            ASSERT_EQ(cudaMemset(partial.p, 0xff, kBudget), cudaSuccess);
            ASSERT_TRUE(depthwise_backward_filter(nullptr, d, cfg, xp, dyp, static_cast<float*>(partial.p),
                                                  static_cast<float*>(dw_out.p)))
                << what;
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
            const std::vector<float> got = dw_out.download(w_n);
            if (run == 0) {
              // float32 sums of up to N OH OW (1,176 here) products of unit-variance values
              EXPECT_LE(relative_error(got, plain.dw), 5e-5) << what;
              first = got;
            } else {
              EXPECT_EQ(got, first) << what << ": two runs differ";
            }
          }
          EXPECT_EQ(depthwise_runs(), runs + 2) << what;
          ++checked;
        }
      }
    }
  }
}

// K = 3 with stride 1, and stride 2 on even and odd sizes (the last window half padding);
// K = 5 and 7 with stride 1; sizes that no pt, band or plane group divides; planes of one and
// of two by three pixels.
TEST(DepthwiseConv, EveryConfigurationMatchesAPlainLoop) {
  CBT_SKIP_WITHOUT_GPU();
  int checked = 0;
  check_every_configuration(
      {form(2, 5, 9, 7, 3, 1, 1), form(2, 6, 8, 8, 3, 2, 1), form(3, 3, 7, 9, 3, 2, 1), form(3, 4, 10, 10, 5, 1, 2),
       form(2, 3, 14, 14, 7, 1, 3), form(2, 7, 7, 7, 7, 1, 3), form(1, 2, 1, 1, 7, 1, 3), form(2, 3, 2, 3, 3, 2, 1)},
      90, checked);
  EXPECT_GE(checked, 150);
}

// Pads that differ before and after (Keras's SAME on even sizes at stride 2, and more): the
// kernels take any leading pads, the trailing ones being what the output size leaves.
TEST(DepthwiseConv, AsymmetricPadsMatchAPlainLoop) {
  CBT_SKIP_WITHOUT_GPU();
  int checked = 0;
  check_every_configuration({form(2, 4, 8, 8, 3, 2, 0, 0, 1, 1), form(2, 4, 9, 8, 3, 2, 1, 0, 0, 1),
                             form(2, 3, 8, 6, 5, 1, 0, 3, 4, 1), form(1, 2, 6, 7, 7, 2, 3, 2, 3, 4)},
                            120, checked);
  EXPECT_GE(checked, 60);
}

// Shapes of the models at batches small enough for the plain loop: EfficientNet's 28 x 28 and
// 14 x 14 stages, MobileNetV3's 5 x 5 ones and ConvNeXt's 7 x 7 at 7 x 7, with channel counts
// that make the planes many (groups of planes, one block a channel for the filter gradient).
TEST(DepthwiseConv, ModelShapesMatchAPlainLoop) {
  CBT_SKIP_WITHOUT_GPU();
  int checked = 0;
  check_every_configuration({form(4, 96, 28, 28, 3, 1, 1), form(4, 144, 28, 28, 3, 2, 1), form(3, 40, 14, 14, 5, 1, 2),
                             form(2, 192, 7, 7, 7, 1, 3), form(2, 32, 56, 56, 3, 1, 1)},
                            150, checked);
  EXPECT_GE(checked, 100);
}

// The search of each op times its configurations as 8 copies side by side and returns the
// fastest; against a bar no configuration comes near (1 ns a copy) it ends after a first look.
TEST(DepthwiseConv, TheSearchReturnsATimedConfiguration) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const DepthwiseConv d = form(32, 96, 14, 14, 5, 1, 2);
  int looked = 0;
  for (ConvOp op : kOps) {
    const std::vector<DepthwiseConfig> configs = depthwise_configs(d, op, kBudget);
    const std::optional<DepthwiseChoice> best = choose_depthwise(stream, d, op, 8, kBudget);
    ASSERT_TRUE(best) << op_str(op);
    EXPECT_GT(best->ms, 0.0f) << op_str(op);
    EXPECT_EQ(best->configs, configs.size());
    EXPECT_EQ(best->looked_only, 0u);
    EXPECT_NE(std::find(configs.begin(), configs.end(), best->cfg), configs.end()) << best->cfg.str();
    if (configs.size() >= 20) {  // enough for a first look at every fifth (the backward filter's 24)
      const std::optional<DepthwiseChoice> gave_up = choose_depthwise(stream, d, op, 8, kBudget, nullptr, 1e-6f);
      ASSERT_TRUE(gave_up) << op_str(op);
      EXPECT_EQ(gave_up->looked_only, (configs.size() + 4) / 5) << op_str(op);
      ++looked;
    }
  }
  EXPECT_GE(looked, 1);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace cbt::cuda
