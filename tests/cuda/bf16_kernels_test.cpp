// The bfloat16 CUDA kernels of --precision bf16 against the CPU: the channels-last conversions
// bit for bit (NaN, infinities and ties included), BatchNorm with channels_last=1 against the
// float32 CPU kernels run in (N, C, H, W) on the same bfloat16-rounded inputs, and the
// bfloat16 Add and ReluGrad against float sums rounded once, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/gpu.h"
#include "common/op_harness.h"
#include "cuda/cuda_cases.h"
#include "cuda/run_cuda_node.h"
#include "graph/channels_last.h"
#include "ops/bfloat16.h"
#include "ops/kernel.h"
#include "runtime/cuda/cuda_backend.h"

namespace cbt::test {
namespace {

uint16_t* bits(const Tensor& t) { return static_cast<uint16_t*>(t.data()); }

// float (N, C, H, W) -> bfloat16 of the same logical shape stored (N, H, W, C), and back.
Tensor to_nhwc(const Tensor& x) {
  const Shape& s = x.shape();
  const int64_t N = s[0], C = s[1], P = s[2] * s[3];
  Tensor y(DType::BFloat16, s);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < P; ++p)
        bits(y)[(n * P + p) * C + c] = bf16_from_float(x.ptr<float>()[(n * C + c) * P + p]);
  return y;
}

Tensor from_nhwc(const Tensor& x) {
  const Shape& s = x.shape();
  const int64_t N = s[0], C = s[1], P = s[2] * s[3];
  Tensor y(DType::Float32, s);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < P; ++p)
        y.ptr<float>()[(n * C + c) * P + p] = float_from_bf16(bits(x)[(n * P + p) * C + c]);
  return y;
}

// x with every value rounded to bfloat16 (still float32).
Tensor rounded(const Tensor& x) {
  Tensor y = x.clone();
  for (int64_t i = 0; i < y.numel(); ++i) y.ptr<float>()[i] = round_to_bf16(y.ptr<float>()[i]);
  return y;
}

// Random values rounded to bfloat16, in the same order.
Tensor random_bf16(const Shape& s, uint64_t seed) {
  Tensor f = random_tensor(DType::Float32, s, seed);
  Tensor y(DType::BFloat16, s);
  for (int64_t i = 0; i < f.numel(); ++i) bits(y)[i] = bf16_from_float(f.ptr<float>()[i]);
  return y;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(double(t.ptr<float>()[i])));
  return m;
}

// "" when every |got - want| <= rel * max|want| + ulps * (a bfloat16 ulp of want), else the
// first element that is not.
std::string close(const Tensor& got, const Tensor& want, double rel, double ulps) {
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + " != " + shape_str(want.shape());
  const double scale = rel * max_abs(want);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.ptr<float>()[i], w = want.ptr<float>()[i];
    const double ulp = w == 0 ? 0 : std::ldexp(1.0, std::ilogb(w) - 7);
    if (!(std::abs(g - w) <= scale + ulps * ulp)) {
      std::ostringstream os;
      os << "element " << i << ": got " << g << ", expected " << w << " (tolerance " << scale + ulps * ulp << ")";
      return os.str();
    }
  }
  return "";
}

// ---- ToChannelsLast / FromChannelsLast ------------------------------------------------------

// The network's input (one channel), its last stage, weights, odd shapes and a channel count
// of more than one tile.
const Shape kConversionShapes[] = {{3, 5, 7, 9},   {32, 1, 28, 28}, {32, 64, 7, 7}, {64, 32, 3, 3},
                                   {16, 16, 3, 3}, {2, 33, 1, 1},   {2, 40, 33, 35}};

// Random values with special ones among them: NaNs (signalling and with a payload), both
// infinities, -0, a subnormal, ties of bfloat16 rounding and the largest float.
Tensor conversion_input(const Shape& s, uint64_t seed) {
  Tensor x = random_tensor(DType::Float32, s, seed);
  const uint32_t special[] = {0x7f800001u, 0xffc12345u, 0x7f800000u, 0xff800000u, 0x80000000u,
                              0x00012345u, 0x3f808000u, 0x3f818000u, 0x7f7fffffu};
  for (size_t k = 0; k < std::size(special) && static_cast<int64_t>(k * 7) < x.numel(); ++k)
    std::memcpy(x.ptr<float>() + k * 7, &special[k], sizeof(float));
  return x;
}

TEST(CudaBf16, ChannelsLastConversionsMatchTheCpuBitForBit) {
  CBT_SKIP_WITHOUT_GPU();
  uint64_t seed = 11;
  for (const Shape& s : kConversionShapes) {
    const Tensor x = conversion_input(s, seed++);
    const Node to = make_node("ToChannelsLast", 1, 1, {}, kCbtDomain);
    const Tensor cpu_to = run_node(to, {x}).at(0);
    const Tensor gpu_to = run_cuda_node(gpu(), to, {x}, {{DType::BFloat16, s}}).at(0);
    EXPECT_TRUE(same_bytes(gpu_to, cpu_to)) << "ToChannelsLast " << shape_str(s);
    // The CPU kernel is the specification; it is also the layout these tests assume.
    EXPECT_TRUE(same_bytes(cpu_to, to_nhwc(x))) << "ToChannelsLast " << shape_str(s) << " on the CPU";

    const Node from = make_node("FromChannelsLast", 1, 1, {}, kCbtDomain);
    const Tensor cpu_from = run_node(from, {cpu_to}).at(0);
    const Tensor gpu_from = run_cuda_node(gpu(), from, {cpu_to}, {{DType::Float32, s}}).at(0);
    EXPECT_TRUE(same_bytes(gpu_from, cpu_from)) << "FromChannelsLast " << shape_str(s);
  }
}

// The harness's cases (cuda_vs_cpu_test.cpp) reach both kernels; exact comparison (tolerance 0).
std::vector<CudaCase> conversion_cases() {
  std::vector<CudaCase> v;
  auto exact = [&](const std::string& name, const char* op, std::vector<Tensor> in) {
    const size_t n = in.size();
    CudaCase c{name, make_node(op, n, n, {}, kCbtDomain), std::move(in)};
    c.training = false;
    c.check_backward = false;
    c.rtol = c.atol = 0;
    v.push_back(std::move(c));
  };
  exact("ToChannelsLast/odd_3x5x7x9", "ToChannelsLast", {random_tensor(DType::Float32, {3, 5, 7, 9}, 31)});
  exact("ToChannelsLast/resnet_32x64x7x7", "ToChannelsLast", {random_tensor(DType::Float32, {32, 64, 7, 7}, 32)});
  exact("FromChannelsLast/odd_3x5x7x9", "FromChannelsLast", {random_bf16({3, 5, 7, 9}, 33)});
  exact("FromChannelsLast/resnet_32x64x7x7", "FromChannelsLast", {random_bf16({32, 64, 7, 7}, 34)});
  // A network's filters in one node (one launch): shapes of ResNet-20's, and an odd one.
  exact("ToChannelsLast/three_filters", "ToChannelsLast",
        {random_tensor(DType::Float32, {16, 16, 3, 3}, 35), random_tensor(DType::Float32, {32, 16, 1, 1}, 36),
         random_tensor(DType::Float32, {5, 3, 7, 9}, 37)});
  exact("FromChannelsLast/three_filters", "FromChannelsLast",
        {random_bf16({64, 64, 3, 3}, 38), random_bf16({32, 16, 1, 1}, 39), random_bf16({5, 3, 7, 9}, 40)});
  return v;
}
CBT_CUDA_CASES(conversion_cases);

// ---- BatchNorm channels_last ----------------------------------------------------------------

struct BnCase {
  Shape x;
  bool relu;
  bool frozen = false;  // the backward of the inference form (running statistics)
};

// BatchNormTraining and BatchNormGrad with channels_last=1 on `b` against the float32 CPU
// kernels on the same rounded inputs. The backward nodes of both devices read the CPU's saved
// statistics and, with relu, the GPU's Y, so that they differ only in their own work.
void check_batch_norm(Backend& b, const BnCase& k, uint64_t seed) {
  const Shape& s = k.x;
  const int64_t C = s[1];
  const std::string what = shape_str(s) + (k.relu ? " relu" : "") + (k.frozen ? " frozen" : "");
  Tensor x = random_tensor(DType::Float32, s, seed);
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 2.0f;  // a mean away from 0, as after a Relu
  const Tensor xr = rounded(x), x_cl = to_nhwc(x);
  const Tensor scale = random_tensor(DType::Float32, {C}, seed + 1),
               bias = random_tensor(DType::Float32, {C}, seed + 2);
  const Tensor run_mean = random_tensor(DType::Float32, {C}, seed + 3);
  Tensor run_var = random_tensor(DType::Float32, {C}, seed + 4);
  for (int64_t i = 0; i < C; ++i) run_var.ptr<float>()[i] = 1.0f + std::abs(run_var.ptr<float>()[i]);

  Attributes a;
  a.set("epsilon", 1e-5f);
  a.set("momentum", 0.9f);
  a.set("relu", int64_t{k.relu});
  const Node cpu_fwd = make_node("BatchNormTraining", 5, 3, a, kCbtDomain);
  a.set(kChannelsLastAttr, int64_t{1});
  const Node gpu_fwd = make_node("BatchNormTraining", 5, 3, a, kCbtDomain);
  const Tensor cpu_mean = run_mean.clone(), cpu_var = run_var.clone();
  const std::vector<Tensor> want = run_node(cpu_fwd, {xr, scale, bias, cpu_mean, cpu_var});
  // Y, saved mean, saved 1/std, then X, scale, bias, running mean, running variance
  const std::vector<Tensor> got = run_cuda_node(b, gpu_fwd, {x_cl, scale, bias, run_mean, run_var},
                                                {{DType::BFloat16, s}, {DType::Float32, {C}}, {DType::Float32, {C}}});
  const Tensor y_gpu = from_nhwc(got[0]);
  EXPECT_EQ(close(y_gpu, want[0], 1e-2, 2), "") << what << ": Y";
  EXPECT_EQ(close(got[1], want[1], 1e-3, 0), "") << what << ": saved mean";
  EXPECT_EQ(close(got[2], want[2], 1e-3, 0), "") << what << ": saved 1/std";
  EXPECT_EQ(close(got[6], cpu_mean, 1e-3, 0), "") << what << ": running mean";
  EXPECT_EQ(close(got[7], cpu_var, 1e-3, 0), "") << what << ": running variance";

  const Tensor dy = random_tensor(DType::Float32, s, seed + 5);
  Attributes g;
  g.set("epsilon", 1e-5f);
  g.set("relu", int64_t{k.relu});
  g.set("frozen_stats", int64_t{k.frozen});
  // dY, X, scale, mean, 1/std (running mean and variance when frozen) (, Y)
  std::vector<Tensor> cpu_in{rounded(dy), xr, scale, k.frozen ? run_mean : want[1], k.frozen ? run_var : want[2]};
  std::vector<Tensor> gpu_in{to_nhwc(dy), x_cl, scale, cpu_in[3], cpu_in[4]};
  if (k.relu) {
    cpu_in.push_back(y_gpu);
    gpu_in.push_back(got[0]);
  }
  const Node cpu_bwd = make_node("BatchNormGrad", cpu_in.size(), 3, g, kCbtDomain);
  g.set(kChannelsLastAttr, int64_t{1});
  const Node gpu_bwd = make_node("BatchNormGrad", gpu_in.size(), 3, g, kCbtDomain);
  const std::vector<Tensor> want_grad = run_node(cpu_bwd, cpu_in);
  const std::vector<Tensor> got_grad =
      run_cuda_node(b, gpu_bwd, gpu_in, {{DType::BFloat16, s}, {DType::Float32, {C}}, {DType::Float32, {C}}});
  EXPECT_EQ(close(from_nhwc(got_grad[0]), want_grad[0], 1e-2, 2), "") << what << ": dX";
  EXPECT_EQ(close(got_grad[1], want_grad[1], 1e-3, 0), "") << what << ": dScale";
  EXPECT_EQ(close(got_grad[2], want_grad[2], 1e-3, 0), "") << what << ": dBias";
}

// ResNet-20's stages, odd channels (one channel a thread), 24 channels (three threads a row:
// no warp shuffles) and 300 channels (two tiles of channels), with few and many learners
// (blocks of about 2048 and 8192 elements).
TEST(CudaBf16, ChannelsLastBatchNormMatchesTheFloat32Cpu) {
  CBT_SKIP_WITHOUT_GPU();
  std::vector<BnCase> cases;
  for (const Shape& s : {Shape{8, 16, 28, 28}, Shape{32, 32, 14, 14}, Shape{32, 64, 7, 7}, Shape{3, 5, 7, 9},
                         Shape{4, 24, 5, 5}, Shape{2, 300, 3, 3}})
    for (bool relu : {false, true}) cases.push_back({s, relu});
  cases.push_back({{8, 16, 28, 28}, true, true});
  cases.push_back({{3, 5, 7, 9}, false, true});
  uint64_t seed = 700;
  for (int learners : {1, 16})
    for (const BnCase& k : cases) {
      SCOPED_TRACE(std::to_string(learners) + " learners");
      check_batch_norm(gpu(learners), k, seed);
      seed += 10;
    }
}

// ---- Add and ReluGrad -----------------------------------------------------------------------

float f(const Tensor& t, int64_t i) { return float_from_bf16(bits(t)[i]); }

// Eight elements a thread (n divisible by 8) and one (an odd count).
const Shape kElementwiseShapes[] = {{8, 16, 28, 28}, {3, 5, 7, 9}};

TEST(CudaBf16, AddIsTheFloatSumRoundedOnce) {
  CBT_SKIP_WITHOUT_GPU();
  uint64_t seed = 900;
  for (const Shape& s : kElementwiseShapes)
    for (bool relu : {false, true}) {
      const Tensor a = random_bf16(s, seed++), b = random_bf16(s, seed++);
      Attributes at;
      if (relu) at.set("relu", int64_t{1});
      const Tensor y = run_cuda_node(gpu(), make_node("Add", 2, 1, at), {a, b}, {{DType::BFloat16, s}}).at(0);
      Tensor want(DType::BFloat16, s);
      for (int64_t i = 0; i < want.numel(); ++i) {
        float sum = f(a, i) + f(b, i);
        bits(want)[i] = bf16_from_float(relu && !(sum > 0) ? 0.0f : sum);
      }
      EXPECT_TRUE(same_bytes(y, want)) << shape_str(s) << (relu ? " relu" : "");
    }
}

TEST(CudaBf16, AddRefusesMixedTypesAndBroadcasting) {
  CBT_SKIP_WITHOUT_GPU();
  const Node add = make_node("Add", 2, 1);
  EXPECT_ANY_THROW(
      run_cuda_node(gpu(), add, {random_bf16({2, 3}, 1), random_bf16({3}, 2)}, {{DType::BFloat16, {2, 3}}}));
  EXPECT_ANY_THROW(run_cuda_node(gpu(), add, {random_bf16({2, 3}, 1), random_tensor(DType::Float32, {2, 3}, 2)},
                                 {{DType::BFloat16, {2, 3}}}));
}

TEST(CudaBf16, ReluGradPassesTheRoundedSumWhereYIsPositive) {
  CBT_SKIP_WITHOUT_GPU();
  uint64_t seed = 950;
  for (const Shape& s : kElementwiseShapes)
    for (bool second : {false, true}) {
      const Tensor dy = random_bf16(s, seed++), y = random_bf16(s, seed++), dy2 = random_bf16(s, seed++);
      std::vector<Tensor> in{dy, y};
      if (second) in.push_back(dy2);
      const Node node = make_node("ReluGrad", in.size(), 1, {}, kCbtDomain);
      const Tensor dx = run_cuda_node(gpu(), node, in, {{DType::BFloat16, s}}).at(0);
      Tensor want(DType::BFloat16, s);
      for (int64_t i = 0; i < want.numel(); ++i)
        bits(want)[i] = f(y, i) > 0 ? (second ? bf16_from_float(f(dy, i) + f(dy2, i)) : bits(dy)[i]) : 0;
      EXPECT_TRUE(same_bytes(dx, want)) << shape_str(s) << (second ? " with dY2" : "");
    }
}

}  // namespace
}  // namespace cbt::test
