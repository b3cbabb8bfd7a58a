// CUDA kernels of activations and Dropout with their backward ops; the CPU kernels in
// ops/cpu/activation.cpp are the specification (same formulas, same branches).
#include "ops/cuda/broadcast.cuh"
#include "ops/cuda/rng.cuh"

namespace cbt::cuda::ew {
namespace {

// The CPU's double constants rounded once to float, as its T(...) casts do.
constexpr float kSqrt2OverPi = static_cast<float>(0.7978845608028654);  // sqrt(2 / pi)
constexpr float kGeluCubic = static_cast<float>(0.044715);
constexpr float kGeluCubic3 = static_cast<float>(3 * 0.044715);
constexpr float kSqrtHalf = static_cast<float>(0.70710678118654752440);  // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = static_cast<float>(0.3989422804014327);    // 1 / sqrt(2 pi)

// Two branches keep exp() from overflowing for large |x|.
__device__ inline float sigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}

struct ReluOp {
  __device__ float operator()(float x) const { return x > 0 ? x : 0.0f; }
};
struct ReluGradOp {
  __device__ float operator()(float dy, float y) const { return y > 0 ? dy : 0.0f; }
};
// alpha * x is formed in double and rounded once, as on the CPU.
struct LeakyReluOp {
  double alpha;
  __device__ float operator()(float x) const { return x >= 0 ? x : static_cast<float>(alpha * x); }
};
struct LeakyReluGradOp {
  double alpha;
  __device__ float operator()(float dy, float x) const { return x >= 0 ? dy : static_cast<float>(alpha * dy); }
};
struct SigmoidOp {
  __device__ float operator()(float x) const { return sigmoid(x); }
};
struct SigmoidGradOp {
  __device__ float operator()(float dy, float y) const { return dy * y * (1 - y); }
};
struct TanhOp {
  __device__ float operator()(float x) const { return tanhf(x); }
};
struct TanhGradOp {
  __device__ float operator()(float dy, float y) const { return dy * (1 - y * y); }
};
struct SiluOp {
  __device__ float operator()(float x) const { return x * sigmoid(x); }
};
struct SiluGradOp {
  __device__ float operator()(float dy, float x) const {
    const float s = sigmoid(x);
    return dy * (s * (1.0f + x * (1.0f - s)));
  }
};
struct GeluOp {
  bool tanh_approx;
  __device__ float operator()(float x) const {
    if (tanh_approx) {
      float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
      return 0.5f * x * (1.0f + tanhf(u));
    }
    return 0.5f * x * (1.0f + erff(x * kSqrtHalf));
  }
};
struct GeluGradOp {
  bool tanh_approx;
  __device__ float operator()(float dy, float x) const {
    if (tanh_approx) {
      float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
      float t = tanhf(u);
      float du = kSqrt2OverPi * (1.0f + kGeluCubic3 * x * x);
      return dy * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
    }
    float cdf = 0.5f * (1.0f + erff(x * kSqrtHalf));
    float pdf = expf(-0.5f * x * x) * kInvSqrt2Pi;
    return dy * (cdf + x * pdf);
  }
};

// Elu, Selu and HardSigmoid: their float attributes' products formed in double and rounded
// once, as on the CPU.
struct EluOp {
  double alpha;
  __device__ float operator()(float x) const { return x > 0 ? x : static_cast<float>(alpha * expm1f(x)); }
};
struct EluGradOp {
  double alpha;
  __device__ float operator()(float dy, float x) const { return x > 0 ? dy : static_cast<float>(alpha * expf(x) * dy); }
};
struct SeluOp {
  double alpha, gamma;
  __device__ float operator()(float x) const {
    return static_cast<float>(gamma * (x > 0 ? double(x) : alpha * expm1(double(x))));
  }
};
struct SeluGradOp {
  double alpha, gamma;
  __device__ float operator()(float dy, float x) const {
    return static_cast<float>(gamma * dy * (x > 0 ? 1.0 : alpha * exp(double(x))));
  }
};
// log(1 + e^x) without overflow: x + log(1 + e^-x) for positive x.
__device__ inline float softplus_of(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
struct SoftplusOp {
  __device__ float operator()(float x) const { return softplus_of(x); }
};
struct SoftplusGradOp {
  __device__ float operator()(float dy, float x) const { return dy * sigmoid(x); }
};
struct SoftsignOp {
  __device__ float operator()(float x) const { return x / (1.0f + fabsf(x)); }
};
struct SoftsignGradOp {
  __device__ float operator()(float dy, float x) const {
    float d = 1.0f + fabsf(x);
    return dy / (d * d);
  }
};
struct HardSigmoidOp {
  double alpha, beta;
  __device__ float operator()(float x) const {
    return static_cast<float>(fmin(fmax(alpha * double(x) + beta, 0.0), 1.0));
  }
};
struct HardSigmoidGradOp {
  double alpha, beta;
  __device__ float operator()(float dy, float x) const {
    double v = alpha * double(x) + beta;
    return static_cast<float>(v > 0 && v < 1 ? alpha * dy : 0.0);
  }
};
// x max(0, min(1, x / 6 + 1/2)): 0 below -3, x above 3.
struct HardSwishOp {
  __device__ float operator()(float x) const { return x <= -3.0f ? 0.0f : x >= 3.0f ? x : x * (x + 3.0f) / 6.0f; }
};
struct HardSwishGradOp {
  __device__ float operator()(float dy, float x) const {
    return x <= -3.0f ? 0.0f : x >= 3.0f ? dy : dy * (x / 3.0f + 0.5f);
  }
};
constexpr float kSeluAlpha = 1.67326319217681884765625f, kSeluGamma = 1.05070102214813232421875f;

bool gelu_tanh(const KernelContext& ctx) { return ctx.node.attrs.get_string("approximate", "none") == "tanh"; }
double attr(const KernelContext& ctx, const char* name, float fallback) {
  return ctx.node.attrs.get_float(name, fallback);
}

// x: any shape; y: same shape.
template <class Op>
void activation(KernelContext& ctx, Op op) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  unary_map(cc.stream, ctx.in(0).ptr<float>(), ctx.out(0).ptr<float>(), ctx.in(0).numel(), op);
}

// dY, saved (X or Y), dX: same shape.
template <class Op>
void activation_grad(KernelContext& ctx, Op op) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  require_f32(ctx, ctx.in(1));
  binary_map(cc.stream, ctx.in(0).ptr<float>(), ctx.in(0).shape(), ctx.in(1).ptr<float>(), ctx.in(1).shape(),
             ctx.out(0).ptr<float>(), ctx.out(0).shape(), op);
}

double alpha_of(const KernelContext& ctx) { return ctx.node.attrs.get_float("alpha", 0.01f); }

void relu(KernelContext& ctx) { activation(ctx, ReluOp{}); }
// dX = (a + b) where Y > 0: a ReluGrad with a second dY (graph/fusion.h,
// fuse_gradient_sum_relu).
struct ReluGradSumOp {
  __device__ float operator()(float a, float y, float b) const { return y > 0 ? a + b : 0.0f; }
};

// --precision bf16: dX = dY (+ dY2) where Y > 0, every tensor bfloat16, the sum in float
// rounded once (without dY2, dY as it is).
struct Bf16ReluGradOp {
  bool sum;
  __device__ float operator()(float dy, float y, float dy2) const { return y > 0 ? (sum ? dy + dy2 : dy) : 0.0f; }
};

void relu_grad_bf16(KernelContext& ctx) {
  const size_t n_in = ctx.has_in(2) ? 3 : 2;
  const Tensor& dx = ctx.out(0);
  for (size_t i = 0; i < n_in; ++i)
    CBT_CHECK(ctx.in(i).dtype() == DType::BFloat16 && ctx.in(i).shape() == dx.shape() && dx.dtype() == DType::BFloat16,
              "node ", ctx.node.describe(),
              ": a bfloat16 ReluGrad takes every input and dX bfloat16 of one shape, got ",
              dtype_name(ctx.in(i).dtype()), " ", shape_str(ctx.in(i).shape()), " as input ", i, " and ",
              dtype_name(dx.dtype()), " ", shape_str(dx.shape()), " as dX");
  bf16_map(context_of(ctx.device_ctx).stream, ctx.in(0).data(), ctx.in(1).data(),
           n_in == 3 ? ctx.in(2).data() : nullptr, dx.data(), dx.numel(), Bf16ReluGradOp{n_in == 3});
}

void relu_grad(KernelContext& ctx) {
  if (ctx.in(0).dtype() == DType::BFloat16) return relu_grad_bf16(ctx);
  if (!ctx.has_in(2)) return activation_grad(ctx, ReluGradOp{});
  auto& cc = context_of(ctx.device_ctx);
  for (size_t i = 0; i < 3; ++i) require_f32(ctx, ctx.in(i));
  ternary_flat_map(cc.stream, ctx.in(0).ptr<float>(), ctx.in(1).ptr<float>(), ctx.in(2).ptr<float>(),
                   ctx.out(0).ptr<float>(), ctx.out(0).numel(), ReluGradSumOp{});
}
void leaky_relu(KernelContext& ctx) { activation(ctx, LeakyReluOp{alpha_of(ctx)}); }
void leaky_relu_grad(KernelContext& ctx) { activation_grad(ctx, LeakyReluGradOp{alpha_of(ctx)}); }
void sigmoid_kernel(KernelContext& ctx) { activation(ctx, SigmoidOp{}); }
void sigmoid_grad(KernelContext& ctx) { activation_grad(ctx, SigmoidGradOp{}); }
void tanh_kernel(KernelContext& ctx) { activation(ctx, TanhOp{}); }
void tanh_grad(KernelContext& ctx) { activation_grad(ctx, TanhGradOp{}); }
void silu(KernelContext& ctx) { activation(ctx, SiluOp{}); }
void silu_grad(KernelContext& ctx) { activation_grad(ctx, SiluGradOp{}); }
void gelu(KernelContext& ctx) { activation(ctx, GeluOp{gelu_tanh(ctx)}); }
void gelu_grad(KernelContext& ctx) { activation_grad(ctx, GeluGradOp{gelu_tanh(ctx)}); }
void elu(KernelContext& ctx) { activation(ctx, EluOp{attr(ctx, "alpha", 1.0f)}); }
void elu_grad(KernelContext& ctx) { activation_grad(ctx, EluGradOp{attr(ctx, "alpha", 1.0f)}); }
void selu(KernelContext& ctx) {
  activation(ctx, SeluOp{attr(ctx, "alpha", kSeluAlpha), attr(ctx, "gamma", kSeluGamma)});
}
void selu_grad(KernelContext& ctx) {
  activation_grad(ctx, SeluGradOp{attr(ctx, "alpha", kSeluAlpha), attr(ctx, "gamma", kSeluGamma)});
}
void softplus(KernelContext& ctx) { activation(ctx, SoftplusOp{}); }
void softplus_grad(KernelContext& ctx) { activation_grad(ctx, SoftplusGradOp{}); }
void softsign(KernelContext& ctx) { activation(ctx, SoftsignOp{}); }
void softsign_grad(KernelContext& ctx) { activation_grad(ctx, SoftsignGradOp{}); }
struct MishOp {
  __device__ float operator()(float x) const { return x * tanhf(softplus_of(x)); }
};
struct MishGradOp {
  __device__ float operator()(float dy, float x) const {
    const float t = tanhf(softplus_of(x));
    return dy * (t + x * sigmoid(x) * (1.0f - t * t));
  }
};
struct CeluOp {
  double alpha;
  __device__ float operator()(float x) const {
    return x > 0 ? x : static_cast<float>(alpha * expm1(double(x) / alpha));
  }
};
struct CeluGradOp {
  double alpha;
  __device__ float operator()(float dy, float x) const {
    return x > 0 ? dy : static_cast<float>(dy * exp(double(x) / alpha));
  }
};
struct ThresholdedReluOp {
  double alpha;
  __device__ float operator()(float x) const { return double(x) > alpha ? x : 0.0f; }
};
struct ThresholdedReluGradOp {
  double alpha;
  __device__ float operator()(float dy, float x) const { return double(x) > alpha ? dy : 0.0f; }
};

void mish(KernelContext& ctx) { activation(ctx, MishOp{}); }
void mish_grad(KernelContext& ctx) { activation_grad(ctx, MishGradOp{}); }
void celu(KernelContext& ctx) { activation(ctx, CeluOp{attr(ctx, "alpha", 1.0f)}); }
void celu_grad(KernelContext& ctx) { activation_grad(ctx, CeluGradOp{attr(ctx, "alpha", 1.0f)}); }
void thresholded_relu(KernelContext& ctx) { activation(ctx, ThresholdedReluOp{attr(ctx, "alpha", 1.0f)}); }
void thresholded_relu_grad(KernelContext& ctx) {
  activation_grad(ctx, ThresholdedReluGradOp{attr(ctx, "alpha", 1.0f)});
}
void hard_swish(KernelContext& ctx) { activation(ctx, HardSwishOp{}); }
void hard_swish_grad(KernelContext& ctx) { activation_grad(ctx, HardSwishGradOp{}); }
void hard_sigmoid(KernelContext& ctx) {
  activation(ctx, HardSigmoidOp{attr(ctx, "alpha", 0.2f), attr(ctx, "beta", 0.5f)});
}
void hard_sigmoid_grad(KernelContext& ctx) {
  activation_grad(ctx, HardSigmoidGradOp{attr(ctx, "alpha", 0.2f), attr(ctx, "beta", 0.5f)});
}

// Dropout's ratio: an optional float scalar input (opset 12+) that wins over the attribute.
// The input is a device tensor; the kernel reads it, so the stream never waits for the host.
struct DropoutRatio {
  const float* f32 = nullptr;
  const double* f64 = nullptr;
  double attr = 0.5;
  __device__ double value() const { return f64 ? *f64 : f32 ? static_cast<double>(*f32) : attr; }
};

DropoutRatio dropout_ratio(const KernelContext& ctx, size_t ratio_input) {
  DropoutRatio r;
  r.attr = ctx.node.attrs.get_float("ratio", 0.5f);
  if (!ctx.has_in(ratio_input)) return r;
  const Tensor& t = ctx.in(ratio_input);
  if (t.device().is_cpu())
    r.attr = t.at_f64(0);
  else if (t.dtype() == DType::Float64)
    r.f64 = t.ptr<double>();
  else
    r.f32 = t.ptr<float>();
  return r;
}

// x, y, mask (optional): same shape. Active while training or when training_mode (a device
// bool scalar, optional) says so; element i is kept when rng_uniform(seed, i) >= ratio,
// exactly as on the CPU.
__global__ void dropout_kernel(const float* x, float* y, bool* mask, int64_t n, uint64_t seed, DropoutRatio ratio_in,
                               bool training, const bool* training_mode) {
  bool active = training || (training_mode && *training_mode);
  double ratio = active ? ratio_in.value() : 0.0;
  float scale = static_cast<float>(1.0 / (1.0 - ratio));
  float r = static_cast<float>(ratio);
  CBT_GRID_STRIDE_LOOP(i, n) {
    bool keep = ratio == 0 || rng_uniform(seed, static_cast<uint64_t>(i)) >= r;
    y[i] = keep ? x[i] * scale : 0.0f;
    if (mask) mask[i] = keep;
  }
}

void dropout(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  require_f32(ctx, x);
  const bool* training_mode = nullptr;
  bool training = ctx.training;
  if (ctx.has_in(2)) {
    if (ctx.in(2).device().is_cpu())
      training = training || ctx.in(2).at_i64(0) != 0;
    else
      training_mode = ctx.in(2).ptr<bool>();
  }
  int64_t n = x.numel();
  if (n == 0) return;
  bool* mask = ctx.has_out(1) ? ctx.out(1).ptr<bool>() : nullptr;
  dropout_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(x.ptr<float>(), ctx.out(0).ptr<float>(), mask, n, ctx.seed,
                                                            dropout_ratio(ctx, 1), training, training_mode);
  CBT_CUDA_CHECK_LAUNCH();
}

// dY, mask, dX: same shape; dX = dY / (1 - ratio) where kept.
__global__ void dropout_grad_kernel(const float* dy, const bool* mask, float* dx, int64_t n, DropoutRatio ratio_in) {
  float scale = static_cast<float>(1.0 / (1.0 - ratio_in.value()));
  CBT_GRID_STRIDE_LOOP(i, n) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
}

void dropout_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  int64_t n = ctx.out(0).numel();
  if (n == 0) return;
  dropout_grad_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(ctx.in(0).ptr<float>(), ctx.in(1).ptr<bool>(),
                                                                 ctx.out(0).ptr<float>(), n, dropout_ratio(ctx, 2));
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "Dropout", DeviceKind::CUDA, dropout);
CBT_REGISTER_KERNEL(kCbtDomain, "DropoutGrad", DeviceKind::CUDA, dropout_grad);
CBT_REGISTER_KERNEL("", "Relu", DeviceKind::CUDA, relu);
CBT_REGISTER_KERNEL("", "LeakyRelu", DeviceKind::CUDA, leaky_relu);
CBT_REGISTER_KERNEL("", "Sigmoid", DeviceKind::CUDA, sigmoid_kernel);
CBT_REGISTER_KERNEL("", "Tanh", DeviceKind::CUDA, tanh_kernel);
CBT_REGISTER_KERNEL("", "Gelu", DeviceKind::CUDA, gelu);
CBT_REGISTER_KERNEL(kCbtDomain, "ReluGrad", DeviceKind::CUDA, relu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "LeakyReluGrad", DeviceKind::CUDA, leaky_relu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SigmoidGrad", DeviceKind::CUDA, sigmoid_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "TanhGrad", DeviceKind::CUDA, tanh_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "GeluGrad", DeviceKind::CUDA, gelu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "Silu", DeviceKind::CUDA, silu);
CBT_REGISTER_KERNEL(kCbtDomain, "SiluGrad", DeviceKind::CUDA, silu_grad);
CBT_REGISTER_KERNEL("", "Elu", DeviceKind::CUDA, elu);
CBT_REGISTER_KERNEL("", "Selu", DeviceKind::CUDA, selu);
CBT_REGISTER_KERNEL("", "Softplus", DeviceKind::CUDA, softplus);
CBT_REGISTER_KERNEL("", "Softsign", DeviceKind::CUDA, softsign);
CBT_REGISTER_KERNEL("", "HardSigmoid", DeviceKind::CUDA, hard_sigmoid);
CBT_REGISTER_KERNEL("", "HardSwish", DeviceKind::CUDA, hard_swish);
CBT_REGISTER_KERNEL(kCbtDomain, "EluGrad", DeviceKind::CUDA, elu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SeluGrad", DeviceKind::CUDA, selu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftplusGrad", DeviceKind::CUDA, softplus_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftsignGrad", DeviceKind::CUDA, softsign_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "HardSigmoidGrad", DeviceKind::CUDA, hard_sigmoid_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "HardSwishGrad", DeviceKind::CUDA, hard_swish_grad);
CBT_REGISTER_KERNEL("", "Mish", DeviceKind::CUDA, mish);
CBT_REGISTER_KERNEL("", "Celu", DeviceKind::CUDA, celu);
CBT_REGISTER_KERNEL("", "ThresholdedRelu", DeviceKind::CUDA, thresholded_relu);
CBT_REGISTER_KERNEL(kCbtDomain, "MishGrad", DeviceKind::CUDA, mish_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "CeluGrad", DeviceKind::CUDA, celu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ThresholdedReluGrad", DeviceKind::CUDA, thresholded_relu_grad);

}  // namespace cbt::cuda::ew
