// CPU kernels of activations and Dropout with their backward ops, side by side.
#include <algorithm>
#include <cmath>

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// x: any shape; y: same shape.
template <class Fn>
void activation(KernelContext& ctx, Fn fn) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    unary_map(ctx.in(0).ptr<T>(), ctx.out(0).ptr<T>(), ctx.in(0).numel(), [&](T v) { return static_cast<T>(fn(v)); });
  });
}

// dY, saved (X or Y), dX: same shape.
template <class Fn>
void activation_grad(KernelContext& ctx, Fn fn) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    const T* dy = ctx.in(0).ptr<T>();
    const T* s = ctx.in(1).ptr<T>();
    T* dx = ctx.out(0).ptr<T>();
    int64_t n = ctx.out(0).numel();
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) dx[i] = static_cast<T>(fn(dy[i], s[i]));
  });
}

template <class T>
T sigmoid(T x) {
  // Two branches keep exp() from overflowing for large |x|.
  if (x >= 0) return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;

bool gelu_tanh(const KernelContext& ctx) { return ctx.node.attrs.get_string("approximate", "none") == "tanh"; }

void relu(KernelContext& ctx) {
  activation(ctx, [](auto x) { return x > 0 ? x : decltype(x)(0); });
}
// A third input (graph/fusion.h, fuse_gradient_sum_relu) is a second dY, added first.
void relu_grad(KernelContext& ctx) {
  if (!ctx.has_in(2)) {
    activation_grad(ctx, [](auto dy, auto y) { return y > 0 ? dy : decltype(dy)(0); });
    return;
  }
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    const T *a = ctx.in(0).ptr<T>(), *y = ctx.in(1).ptr<T>(), *b = ctx.in(2).ptr<T>();
    T* dx = ctx.out(0).ptr<T>();
    int64_t n = ctx.out(0).numel();
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      T s = a[i] + b[i];
      dx[i] = y[i] > 0 ? s : T(0);
    }
  });
}

void leaky_relu(KernelContext& ctx) {
  double alpha = ctx.node.attrs.get_float("alpha", 0.01f);
  activation(ctx, [alpha](auto x) { return x >= 0 ? x : static_cast<decltype(x)>(alpha * x); });
}
void leaky_relu_grad(KernelContext& ctx) {
  double alpha = ctx.node.attrs.get_float("alpha", 0.01f);
  activation_grad(ctx, [alpha](auto dy, auto x) { return x >= 0 ? dy : static_cast<decltype(dy)>(alpha * dy); });
}

void sigmoid_kernel(KernelContext& ctx) {
  activation(ctx, [](auto x) { return sigmoid(x); });
}
void sigmoid_grad(KernelContext& ctx) {
  activation_grad(ctx, [](auto dy, auto y) { return dy * y * (1 - y); });
}

void tanh_kernel(KernelContext& ctx) {
  activation(ctx, [](auto x) { return std::tanh(x); });
}
void tanh_grad(KernelContext& ctx) {
  activation_grad(ctx, [](auto dy, auto y) { return dy * (1 - y * y); });
}

// X sigmoid(X), as Mul(X, Sigmoid(X)) rounds it; the gradient s (1 + X (1 - s)).
void silu(KernelContext& ctx) {
  activation(ctx, [](auto x) { return x * sigmoid(x); });
}
void silu_grad(KernelContext& ctx) {
  activation_grad(ctx, [](auto dy, auto x) {
    using T = decltype(x);
    const T s = sigmoid(x);
    return dy * (s * (T(1) + x * (T(1) - s)));
  });
}

void gelu(KernelContext& ctx) {
  if (gelu_tanh(ctx)) {
    activation(ctx, [](auto x) {
      using T = decltype(x);
      T u = T(kSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x);
      return T(0.5) * x * (T(1) + std::tanh(u));
    });
  } else {
    activation(ctx, [](auto x) {
      using T = decltype(x);
      return T(0.5) * x * (T(1) + std::erf(x * T(M_SQRT1_2)));
    });
  }
}

void gelu_grad(KernelContext& ctx) {
  if (gelu_tanh(ctx)) {
    activation_grad(ctx, [](auto dy, auto x) {
      using T = decltype(x);
      T u = T(kSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x);
      T t = std::tanh(u);
      T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * x * x);
      return dy * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
    });
  } else {
    activation_grad(ctx, [](auto dy, auto x) {
      using T = decltype(x);
      T cdf = T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
      T pdf = std::exp(T(-0.5) * x * x) * T(0.3989422804014327);  // 1 / sqrt(2 pi)
      return dy * (cdf + x * pdf);
    });
  }
}

// A float attribute, as a double (the same value the references compute with).
double attr(const KernelContext& ctx, const char* name, float fallback) {
  return ctx.node.attrs.get_float(name, fallback);
}
constexpr float kSeluAlpha = 1.67326319217681884765625f, kSeluGamma = 1.05070102214813232421875f;

void elu(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 1.0f);
  activation(ctx, [alpha](auto x) { return x > 0 ? x : static_cast<decltype(x)>(alpha * std::expm1(x)); });
}
void elu_grad(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 1.0f);
  activation_grad(ctx,
                  [alpha](auto dy, auto x) { return x > 0 ? dy : static_cast<decltype(x)>(alpha * std::exp(x) * dy); });
}
void selu(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", kSeluAlpha), gamma = attr(ctx, "gamma", kSeluGamma);
  activation(ctx, [alpha, gamma](auto x) {
    return static_cast<decltype(x)>(gamma * (x > 0 ? double(x) : alpha * std::expm1(double(x))));
  });
}
void selu_grad(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", kSeluAlpha), gamma = attr(ctx, "gamma", kSeluGamma);
  activation_grad(ctx, [alpha, gamma](auto dy, auto x) {
    return static_cast<decltype(x)>(gamma * dy * (x > 0 ? 1.0 : alpha * std::exp(double(x))));
  });
}
// log(1 + e^x) without overflow: x + log(1 + e^-x) for positive x.
template <class T>
T softplus_of(T x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
void softplus(KernelContext& ctx) {
  activation(ctx, [](auto x) { return softplus_of(x); });
}
void softplus_grad(KernelContext& ctx) {
  activation_grad(ctx, [](auto dy, auto x) { return dy * sigmoid(x); });
}
void softsign(KernelContext& ctx) {
  activation(ctx, [](auto x) { return x / (decltype(x)(1) + std::abs(x)); });
}
void softsign_grad(KernelContext& ctx) {
  activation_grad(ctx, [](auto dy, auto x) {
    auto d = decltype(x)(1) + std::abs(x);
    return dy / (d * d);
  });
}
void hard_sigmoid(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 0.2f), beta = attr(ctx, "beta", 0.5f);
  activation(
      ctx, [alpha, beta](auto x) { return static_cast<decltype(x)>(std::clamp(alpha * double(x) + beta, 0.0, 1.0)); });
}
void hard_sigmoid_grad(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 0.2f), beta = attr(ctx, "beta", 0.5f);
  activation_grad(ctx, [alpha, beta](auto dy, auto x) {
    const double v = alpha * double(x) + beta;
    return static_cast<decltype(x)>(v > 0 && v < 1 ? alpha * dy : 0.0);
  });
}
// x max(0, min(1, x / 6 + 1/2)): 0 below -3, x above 3.
void hard_swish(KernelContext& ctx) {
  activation(ctx, [](auto x) {
    using T = decltype(x);
    return x <= T(-3) ? T(0) : x >= T(3) ? x : x * (x + T(3)) / T(6);
  });
}
void hard_swish_grad(KernelContext& ctx) {
  activation_grad(ctx, [](auto dy, auto x) {
    using T = decltype(x);
    return x <= T(-3) ? T(0) : x >= T(3) ? dy : dy * (x / T(3) + T(0.5));
  });
}
void mish(KernelContext& ctx) {
  activation(ctx, [](auto x) { return x * std::tanh(softplus_of(x)); });
}
void mish_grad(KernelContext& ctx) {
  activation_grad(ctx, [](auto dy, auto x) {
    const auto t = std::tanh(softplus_of(x));
    return dy * (t + x * sigmoid(x) * (decltype(x)(1) - t * t));
  });
}
void celu(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 1.0f);
  activation(ctx,
             [alpha](auto x) { return x > 0 ? x : static_cast<decltype(x)>(alpha * std::expm1(double(x) / alpha)); });
}
void celu_grad(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 1.0f);
  activation_grad(ctx, [alpha](auto dy, auto x) {
    return x > 0 ? dy : static_cast<decltype(x)>(dy * std::exp(double(x) / alpha));
  });
}
void thresholded_relu(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 1.0f);
  activation(ctx, [alpha](auto x) { return double(x) > alpha ? x : decltype(x)(0); });
}
void thresholded_relu_grad(KernelContext& ctx) {
  const double alpha = attr(ctx, "alpha", 1.0f);
  activation_grad(ctx, [alpha](auto dy, auto x) { return double(x) > alpha ? dy : decltype(dy)(0); });
}

// The ratio input (opset 12+) wins over the attribute (older opsets; default 0.5).
double dropout_ratio(const KernelContext& ctx, size_t ratio_input) {
  if (ctx.has_in(ratio_input)) return ctx.in(ratio_input).at_f64(0);
  return ctx.node.attrs.get_float("ratio", 0.5f);
}

// x, y, mask: same shape. Active while training or when training_mode says so.
void dropout(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  bool training = ctx.training || (ctx.has_in(2) && ctx.in(2).at_i64(0) != 0);
  double ratio = training ? dropout_ratio(ctx, 1) : 0.0;
  bool* mask = ctx.has_out(1) ? ctx.out(1).ptr<bool>() : nullptr;
  int64_t n = x.numel();
  uint64_t seed = ctx.seed;
  dispatch_float(x.dtype(), [&]<class T>() {
    const T* xp = x.ptr<T>();
    T* y = ctx.out(0).ptr<T>();
    const T scale = static_cast<T>(1.0 / (1.0 - ratio));
    const float r = static_cast<float>(ratio);
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      bool keep = ratio == 0 || rng_uniform(seed, static_cast<uint64_t>(i)) >= r;
      y[i] = keep ? xp[i] * scale : T(0);
      if (mask) mask[i] = keep;
    }
  });
}

// dY, mask, dX: same shape.
void dropout_grad(KernelContext& ctx) {
  const bool* mask = ctx.in(1).ptr<bool>();
  double ratio = dropout_ratio(ctx, 2);
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    const T scale = static_cast<T>(1.0 / (1.0 - ratio));
    const T* dy = ctx.in(0).ptr<T>();
    T* dx = ctx.out(0).ptr<T>();
    int64_t n = ctx.out(0).numel();
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) dx[i] = mask[i] ? dy[i] * scale : T(0);
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "Dropout", DeviceKind::CPU, dropout);
CBT_REGISTER_KERNEL(kCbtDomain, "DropoutGrad", DeviceKind::CPU, dropout_grad);
CBT_REGISTER_KERNEL("", "Relu", DeviceKind::CPU, relu);
CBT_REGISTER_KERNEL("", "LeakyRelu", DeviceKind::CPU, leaky_relu);
CBT_REGISTER_KERNEL("", "Sigmoid", DeviceKind::CPU, sigmoid_kernel);
CBT_REGISTER_KERNEL("", "Tanh", DeviceKind::CPU, tanh_kernel);
CBT_REGISTER_KERNEL("", "Gelu", DeviceKind::CPU, gelu);
CBT_REGISTER_KERNEL(kCbtDomain, "ReluGrad", DeviceKind::CPU, relu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "LeakyReluGrad", DeviceKind::CPU, leaky_relu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SigmoidGrad", DeviceKind::CPU, sigmoid_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "TanhGrad", DeviceKind::CPU, tanh_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "GeluGrad", DeviceKind::CPU, gelu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "Silu", DeviceKind::CPU, silu);
CBT_REGISTER_KERNEL(kCbtDomain, "SiluGrad", DeviceKind::CPU, silu_grad);
CBT_REGISTER_KERNEL("", "Elu", DeviceKind::CPU, elu);
CBT_REGISTER_KERNEL("", "Selu", DeviceKind::CPU, selu);
CBT_REGISTER_KERNEL("", "Softplus", DeviceKind::CPU, softplus);
CBT_REGISTER_KERNEL("", "Softsign", DeviceKind::CPU, softsign);
CBT_REGISTER_KERNEL("", "HardSigmoid", DeviceKind::CPU, hard_sigmoid);
CBT_REGISTER_KERNEL("", "HardSwish", DeviceKind::CPU, hard_swish);
CBT_REGISTER_KERNEL(kCbtDomain, "EluGrad", DeviceKind::CPU, elu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SeluGrad", DeviceKind::CPU, selu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftplusGrad", DeviceKind::CPU, softplus_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftsignGrad", DeviceKind::CPU, softsign_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "HardSigmoidGrad", DeviceKind::CPU, hard_sigmoid_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "HardSwishGrad", DeviceKind::CPU, hard_swish_grad);
CBT_REGISTER_KERNEL("", "Mish", DeviceKind::CPU, mish);
CBT_REGISTER_KERNEL("", "Celu", DeviceKind::CPU, celu);
CBT_REGISTER_KERNEL("", "ThresholdedRelu", DeviceKind::CPU, thresholded_relu);
CBT_REGISTER_KERNEL(kCbtDomain, "MishGrad", DeviceKind::CPU, mish_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "CeluGrad", DeviceKind::CPU, celu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ThresholdedReluGrad", DeviceKind::CPU, thresholded_relu_grad);

}  // namespace cbt::cpu
