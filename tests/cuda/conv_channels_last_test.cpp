// Convolutions of --precision bf16 (channels_last=1: bfloat16 tensors stored (N, H, W, C)):
// ResNet-20's geometries through the registered Conv and ConvGrad CUDA kernels against the
// float32 CPU kernels on the same bfloat16-rounded values, under every --cudnn-algos; their
// choices kept apart from float32's and never cbtrain's own kernels (GPU). The rules that need
// no GPU (engine notes and bounds, node checks) run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/gpu.h"
#include "common/op_harness.h"
#include "cuda/run_cuda_node.h"
#include "graph/channels_last.h"
#include "graph/errors.h"
#include "ops/bfloat16.h"
#include "ops/cuda/algo_choice.h"
#include "ops/cuda/conv_bf16.h"
#include "ops/cuda/conv_choices.h"
#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/depthwise_conv.h"
#include "ops/cuda/direct_conv.h"
#include "ops/kernel.h"
#include "runtime/cuda/cuda_backend.h"

namespace cbt::test {
namespace {

using cuda::ConvStorage;
using cuda::EnginePrecision;

// bfloat16 outputs carry 8 bits of mantissa (2^-8 relative), and the sums' order differs.
constexpr double kBf16Tolerance = 2e-2;

// (A, B, C, D) float32 in that order -> bfloat16 stored (A, C, D, B), the logical shape kept:
// an image (N, C, H, W) stored (N, H, W, C), a filter (M, C, KH, KW) stored (M, KH, KW, C).
Tensor to_channels_last(const Tensor& t) {
  const Shape& s = t.shape();
  const int64_t B = s[1], C = s[2], D = s[3];
  Tensor out(DType::BFloat16, s);
  const float* in = t.ptr<float>();
  auto* o = static_cast<uint16_t*>(out.data());
  for (int64_t a = 0; a < s[0]; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t d = 0; d < D; ++d)
          o[((a * C + c) * D + d) * B + b] = bf16_from_float(in[((a * B + b) * C + c) * D + d]);
  return out;
}

// The inverse: bfloat16 stored (A, C, D, B) -> float32 (A, B, C, D).
Tensor from_channels_last(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::BFloat16);
  const Shape& s = t.shape();
  const int64_t B = s[1], C = s[2], D = s[3];
  Tensor out(DType::Float32, s);
  const auto* in = static_cast<const uint16_t*>(t.data());
  float* o = out.ptr<float>();
  for (int64_t a = 0; a < s[0]; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t d = 0; d < D; ++d)
          o[((a * B + b) * C + c) * D + d] = float_from_bf16(in[((a * C + c) * D + d) * B + b]);
  return out;
}

// Normal values (never all zeros) rounded to bfloat16, as float32 NCHW.
Tensor rounded_random(const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(DType::Float32, shape, seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = round_to_bf16(t.ptr<float>()[i]);
  return t;
}

// max |got - ref| / max |ref|; infinite where got has a NaN.
double relative_error(const Tensor& got, const Tensor& ref) {
  EXPECT_EQ(got.shape(), ref.shape());
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double d = std::abs(static_cast<double>(got.ptr<float>()[i]) - ref.ptr<float>()[i]);
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::abs(static_cast<double>(ref.ptr<float>()[i])));
  }
  return diff / scale;
}

struct Geometry {
  const char* name;
  int64_t n, c, hw, m, k, stride, pad;
  int64_t out() const { return (hw + 2 * pad - k) / stride + 1; }
};

// ResNet-20's kinds of convolution in bfloat16. Not its 1-channel stem: the training graph keeps
// convolutions of channel counts other than multiples of 8 in float32 (graph/channels_last.h),
// and cuDNN's legacy bfloat16 algorithms for it were 2.5e-2 off in dW (session 39, call 4).
const Geometry kResNet20[] = {{"16to16_3x3", 32, 16, 32, 16, 3, 1, 1},
                              {"16to32_3x3_stride2", 32, 16, 32, 32, 3, 2, 1},
                              {"16to32_1x1_stride2", 32, 16, 32, 32, 1, 2, 0},
                              {"64to64_3x3_7x7", 8, 64, 7, 64, 3, 1, 1}};

Attributes conv_attrs(const Geometry& g, bool channels_last) {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{g.k, g.k});
  a.set("strides", std::vector<int64_t>{g.stride, g.stride});
  a.set("pads", std::vector<int64_t>{g.pad, g.pad, g.pad, g.pad});
  if (channels_last) a.set(kChannelsLastAttr, int64_t{1});
  return a;
}

Node conv_node(const Geometry& g, bool channels_last) { return make_node("Conv", 2, 1, conv_attrs(g, channels_last)); }

Node conv_grad_node(const Geometry& g, bool channels_last) {
  Attributes a = conv_attrs(g, channels_last);
  a.set("outputs_needed", std::vector<int64_t>{1, 1, 0});
  return make_node("ConvGrad", 3, 3, std::move(a), kCbtDomain);
}

// Runs `node`'s CPU kernel on host tensors; `outs` allocated by the caller (undefined: absent).
std::vector<Tensor> run_cpu(const Node& node, std::vector<Tensor> in, std::vector<Tensor> outs) {
  KernelFn fn = find_kernel(node.domain, node.op_type, DeviceKind::CPU);
  EXPECT_TRUE(fn) << node.op_type;
  std::shared_ptr<void> state;
  KernelContext ctx{node, in, outs, true, 1, nullptr, &state};
  fn(ctx);
  return outs;
}

// Runs `node`'s CUDA kernel on device copies of `in`, outputs of `out_types` (dtype, shape;
// Undefined: absent); returns them downloaded.
std::vector<Tensor> run_gpu(Backend& b, const Node& node, const std::vector<Tensor>& in,
                            const std::vector<ValueType>& out_types) {
  std::vector<Tensor> all = run_cuda_node(b, node, in, out_types);
  all.resize(out_types.size());
  return all;
}

// One GPU backend per --cudnn-algos setting (each lives until the process exits).
Backend& gpu(ConvAlgos how) {
  static std::map<ConvAlgos, Backend*> backends;
  Backend*& b = backends[how];
  if (!b) {
    b = make_cuda_backend(0).release();
    b->set_conv_algos(how);
  }
  return *b;
}

struct Errors {
  double y = 0, dx = 0, dw = 0;
};

// Y, dX and dW of `g` on the GPU in bfloat16 channels-last against the CPU in float32 on the
// same rounded values.
Errors channels_last_errors(Backend& b, const Geometry& g, uint64_t seed) {
  const int64_t o = g.out();
  const Shape xs{g.n, g.c, g.hw, g.hw}, ws{g.m, g.c, g.k, g.k}, ys{g.n, g.m, o, o};
  const Tensor x = rounded_random(xs, seed), w = rounded_random(ws, seed + 1), dy = rounded_random(ys, seed + 2);
  Errors e;
  const Tensor y_ref = run_cpu(conv_node(g, false), {x, w}, {Tensor(DType::Float32, ys)})[0];
  const std::vector<Tensor> y =
      run_gpu(b, conv_node(g, true), {to_channels_last(x), to_channels_last(w)}, {{DType::BFloat16, ys}});
  e.y = relative_error(from_channels_last(y[0]), y_ref);
  const std::vector<Tensor> ref =
      run_cpu(conv_grad_node(g, false), {dy, x, w}, {Tensor(DType::Float32, xs), Tensor(DType::Float32, ws), Tensor()});
  const std::vector<Tensor> got =
      run_gpu(b, conv_grad_node(g, true), {to_channels_last(dy), to_channels_last(x), to_channels_last(w)},
              {{DType::BFloat16, xs}, {DType::BFloat16, ws}, {}});
  e.dx = relative_error(from_channels_last(got[0]), ref[0]);
  e.dw = relative_error(from_channels_last(got[1]), ref[1]);
  return e;
}

// Every geometry under every --cudnn-algos matches the CPU within bfloat16's tolerance; with
// the engines (the default) every product runs on an engine of cuDNN's backend API (the
// legacy API would be the fallback of a search that found none).
TEST(ConvChannelsLast, ResNet20sConvolutionsMatchTheCpuInBFloat16) {
  CBT_SKIP_WITHOUT_GPU();
  uint64_t seed = 300;
  for (ConvAlgos how : {ConvAlgos::Engines, ConvAlgos::Find, ConvAlgos::Heuristic})
    for (const Geometry& g : kResNet20) {
      const std::string what = std::string(g.name) + " algos " + std::to_string(static_cast<int>(how));
      const uint64_t engines = cuda::engine_runs();
      const Errors e = channels_last_errors(gpu(how), g, seed += 10);
      EXPECT_LE(e.y, kBf16Tolerance) << what << ": Y";
      EXPECT_LE(e.dx, kBf16Tolerance) << what << ": dX";
      EXPECT_LE(e.dw, kBf16Tolerance) << what << ": dW";
      const uint64_t ran = cuda::engine_runs() - engines;
      if (how == ConvAlgos::Engines)
        EXPECT_EQ(ran, 3u) << what << ": the forward, backward-data and backward-filter products on engines";
      else
        EXPECT_EQ(ran, 0u) << what << ": a legacy mode ran an engine";
    }
}

// An image 8 bytes off the engines' 16-byte alignment (a view into a larger buffer) runs cuDNN's
// legacy algorithm, which a bfloat16 search leaves to be chosen when a pointer first needs it
// (kBackupLater), and gives the aligned image's results within bfloat16's tolerance.
TEST(ConvChannelsLast, AnImageOffTheEnginesAlignmentRunsTheLegacyBackup) {
  CBT_SKIP_WITHOUT_GPU();
  const Geometry& g = kResNet20[0];
  const int64_t o = g.out();
  const Shape xs{g.n, g.c, g.hw, g.hw}, ws{g.m, g.c, g.k, g.k}, ys{g.n, g.m, o, o};
  const Tensor x = rounded_random(xs, 900), w = rounded_random(ws, 901);
  const Tensor y_ref = run_cpu(conv_node(g, false), {x, w}, {Tensor(DType::Float32, ys)})[0];
  Backend& b = gpu(ConvAlgos::Engines);
  const Tensor x_cl = to_channels_last(x);
  // The image 4 bfloat16s (8 bytes) into a buffer of its size and 4 more.
  const Tensor buffer = b.empty(DType::BFloat16, {x_cl.numel() + 4});
  const Tensor x_off =
      Tensor::view(DType::BFloat16, xs, static_cast<uint16_t*>(buffer.data()) + 4, buffer.device(), buffer.storage());
  b.copy_from_host(x_off, x_cl);
  const Tensor w_dev = b.upload(to_channels_last(w));
  const Tensor y_dev = b.empty(DType::BFloat16, ys);
  const Node node = conv_node(g, true);
  KernelFn fn = find_kernel(node.domain, node.op_type, DeviceKind::CUDA);
  ASSERT_TRUE(fn);
  std::shared_ptr<void> state;
  std::vector<Tensor> in{x_off, w_dev}, out{y_dev};
  KernelContext ctx{node, in, out, true, 1, b.kernel_context(), &state};
  const uint64_t engines = cuda::engine_runs();
  fn(ctx);
  b.synchronize();
  EXPECT_EQ(cuda::engine_runs(), engines) << "the engine ran on a misaligned image";
  EXPECT_LE(relative_error(from_channels_last(b.download(y_dev)), y_ref), kBf16Tolerance);
}

// One geometry's float32 and bfloat16 convolutions keep choices of their own, each under its
// storage; the bfloat16 one is an engine's, never one of cbtrain's own float32 NCHW kernels,
// even where CBT_CONV_DIRECT=always makes them take every convolution they can.
TEST(ConvChannelsLast, Float32AndBFloat16ChoicesAreKeptApart) {
  CBT_SKIP_WITHOUT_GPU();
  const Geometry& g = kResNet20[0];  // 16 -> 16, 3x3, stride 1: the direct kernels' kind
  for (const char* direct : {"", "always"}) {
    struct Env {
      explicit Env(const char* v) {
        if (*v) setenv("CBT_CONV_DIRECT", v, 1);
      }
      ~Env() { unsetenv("CBT_CONV_DIRECT"); }
    } env(direct);
    std::unique_ptr<Backend> b = make_cuda_backend(0);
    const Shape xs{g.n, g.c, g.hw, g.hw}, ws{g.m, g.c, g.k, g.k}, ys{g.n, g.m, g.out(), g.out()};
    const Tensor x = rounded_random(xs, 500), w = rounded_random(ws, 501);
    const Tensor y_ref = run_cpu(conv_node(g, false), {x, w}, {Tensor(DType::Float32, ys)})[0];

    const uint64_t own_before = cuda::direct_runs() + cuda::depthwise_runs();
    const Errors e = channels_last_errors(*b, g, 510);
    EXPECT_LE(std::max({e.y, e.dx, e.dw}), kBf16Tolerance) << direct;
    EXPECT_EQ(cuda::direct_runs() + cuda::depthwise_runs(), own_before) << "CBT_CONV_DIRECT=" << direct;
    const std::vector<Tensor> y = run_gpu(*b, conv_node(g, false), {x, w}, {{DType::Float32, ys}});
    EXPECT_LE(relative_error(y[0], y_ref), 1e-4) << "float32 after bfloat16, CBT_CONV_DIRECT=" << direct;
    if (std::string(direct) == "always")
      EXPECT_GT(cuda::direct_runs(), own_before) << "the float32 convolution took no direct kernel";

    // The forward choices of this geometry: one per storage.
    std::set<int64_t> storages;
    std::lock_guard lock(cuda::conv_choices_mutex());
    for (const auto& [key, choice] : cuda::conv_choices()) {
      const int64_t* k = key.dims.data() + cuda::kKeyGeometry;
      if (key.dims[cuda::kKeyStorage] == 1) {
        EXPECT_FALSE(choice.runs_direct()) << cuda::format_choice(key, choice);
        const int64_t algos = key.dims[cuda::kKeyOp + 3];  // --cudnn-algos
        EXPECT_TRUE(choice.engine.has_value() || algos != static_cast<int64_t>(ConvAlgos::Engines))
            << cuda::format_choice(key, choice);
      }
      const bool same = k[0] == g.n && k[1] == g.c && k[2] == g.m && k[4] == g.hw && k[6] == g.k && k[8] == g.stride;
      const int64_t direct_mode = key.dims[cuda::kKeyBudget + 1];  // CBT_CONV_DIRECT follows the budget
      if (same && key.dims[cuda::kKeyOp] == static_cast<int64_t>(cuda::ConvOp::Forward) &&
          direct_mode == static_cast<int64_t>(cuda::direct_mode()))
        storages.insert(key.dims[cuda::kKeyStorage]);
    }
    EXPECT_EQ(storages, (std::set<int64_t>{0, 1})) << "CBT_CONV_DIRECT=" << direct;
  }
}

// The engine rules of bfloat16 data: tensor cores (float32 sums of exact products) allowed,
// narrowed inputs or sums, transforms and run-time compilation not; the accuracy bound is
// bfloat16's, above TF32's, and NaN never passes. float32's rules are unchanged.
TEST(ConvChannelsLast, BFloat16EnginesMayUseTensorCoresWithinItsBound) {
  cuda::EngineNotes tc;
  tc.tensor_core = true;
  EXPECT_TRUE(cuda::engine_allowed(tc, EnginePrecision::BFloat16, false));
  EXPECT_TRUE(cuda::engine_allowed(tc, EnginePrecision::BFloat16, true));
  EXPECT_FALSE(cuda::engine_allowed(tc, EnginePrecision::Float32, false));
  EXPECT_EQ(cuda::float_precision(false), EnginePrecision::Float32);
  EXPECT_EQ(cuda::float_precision(true), EnginePrecision::Tf32);
  for (int i = 0; i < 4; ++i) {
    cuda::EngineNotes n = tc;
    (i == 0 ? n.down_convert : i == 1 ? n.reduced_precision : i == 2 ? n.fft : n.runtime_compilation) = true;
    EXPECT_FALSE(cuda::engine_allowed(n, EnginePrecision::BFloat16, false)) << i;
  }
  cuda::EngineNotes nd = tc;
  nd.nondeterministic = true;
  EXPECT_TRUE(cuda::engine_allowed(nd, EnginePrecision::BFloat16, false));
  EXPECT_FALSE(cuda::engine_allowed(nd, EnginePrecision::BFloat16, true));

  EXPECT_DOUBLE_EQ(cuda::max_relative_error(EnginePrecision::BFloat16), 1.6e-2);
  EXPECT_DOUBLE_EQ(cuda::max_relative_error(EnginePrecision::Float32), 1e-4);
  EXPECT_DOUBLE_EQ(cuda::max_relative_error(EnginePrecision::Tf32), 5e-3);
  EXPECT_TRUE(cuda::accurate_enough(1.2e-2, EnginePrecision::BFloat16));
  EXPECT_FALSE(cuda::accurate_enough(1.2e-2, EnginePrecision::Tf32));
  EXPECT_FALSE(cuda::accurate_enough(2e-2, EnginePrecision::BFloat16));
  EXPECT_FALSE(cuda::accurate_enough(std::nan(""), EnginePrecision::BFloat16));
  EXPECT_FALSE(cuda::accurate_enough(HUGE_VAL, EnginePrecision::BFloat16));
}

// Which nodes are channels-last, and what their kernels refuse before running (host tensors:
// the checks read types and attributes only).
TEST(ConvChannelsLast, NodesAreCheckedBeforeTheyRun) {
  const Geometry& g = kResNet20[0];
  const Shape xs{g.n, g.c, g.hw, g.hw}, ws{g.m, g.c, g.k, g.k}, ys{g.n, g.m, g.out(), g.out()};
  EXPECT_EQ(cuda::conv_storage(conv_node(g, true), false), ConvStorage::BFloat16Nhwc);
  EXPECT_EQ(cuda::conv_storage(conv_node(g, false), false), ConvStorage::Float32Nchw);
  EXPECT_EQ(cuda::conv_storage(conv_node(g, true), true), ConvStorage::Float32Nchw) << "a ConvTranspose";

  auto check = [](const Node& node, std::vector<Tensor> in, std::vector<Tensor> out, bool grad) {
    KernelContext ctx{node, in, out, true, 1, nullptr, nullptr};
    cuda::check_conv_tensors(ctx, grad);
  };
  const Tensor xb(DType::BFloat16, xs), wb(DType::BFloat16, ws), yb(DType::BFloat16, ys);
  const Tensor xf(DType::Float32, xs), wf(DType::Float32, ws), yf(DType::Float32, ys), bias(DType::Float32, {g.m});
  EXPECT_NO_THROW(check(conv_node(g, true), {xb, wb}, {yb}, false));
  EXPECT_NO_THROW(check(conv_node(g, false), {xf, wf}, {yf}, false));
  EXPECT_THROW(check(conv_node(g, false), {xb, wb}, {yb}, false), ModelError) << "bfloat16 without channels_last";
  EXPECT_THROW(check(conv_node(g, true), {xf, wb}, {yb}, false), InternalError) << "a float32 X";
  EXPECT_THROW(check(conv_node(g, true), {xb, wb}, {yf}, false), InternalError) << "a float32 Y";
  EXPECT_THROW(check(make_node("Conv", 3, 1, conv_attrs(g, true)), {xb, wb, bias}, {yb}, false), InternalError)
      << "a bias";
  Node relu = conv_node(g, true);
  relu.attrs.set("relu", int64_t{1});
  EXPECT_THROW(check(relu, {xb, wb}, {yb}, false), InternalError) << "a fused Relu";

  EXPECT_NO_THROW(check(conv_grad_node(g, true), {yb, xb, wb}, {xb, wb, Tensor()}, true));
  Node first = conv_grad_node(g, true);  // the first layer: no dX
  first.attrs.set("outputs_needed", std::vector<int64_t>{0, 1, 0});
  EXPECT_NO_THROW(check(first, {yb, xb, wb}, {Tensor(), wb, Tensor()}, true));
  EXPECT_THROW(check(conv_grad_node(g, true), {yb, xb, wb}, {xb, wf, Tensor()}, true), InternalError) << "float32 dW";
  Node with_db = conv_grad_node(g, true);
  with_db.attrs.set("outputs_needed", std::vector<int64_t>{1, 1, 1});
  EXPECT_THROW(check(with_db, {yb, xb, wb}, {xb, wb, bias}, true), InternalError) << "a bias gradient";
}

}  // namespace
}  // namespace cbt::test
