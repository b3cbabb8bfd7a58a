// Optimizer updates over flat buffers (CPU). Hyper-parameters come as a small float tensor
// so that a device copy can change between steps without rebuilding anything.
#include <cmath>

#include "ops/kernel.h"

namespace cbt {

namespace {

// inputs: x (P), g (P), v (P), hyper [lr, momentum, weight_decay]
void sgd_momentum(KernelContext& ctx) {
  float* x = ctx.in(0).ptr<float>();
  const float* g = ctx.in(1).ptr<float>();
  float* v = ctx.in(2).ptr<float>();
  const float* h = ctx.in(3).ptr<float>();
  const float lr = h[0], mu = h[1], wd = h[2];
  const int64_t n = ctx.in(0).numel();
#pragma omp parallel for simd if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    v[i] = mu * v[i] - lr * (g[i] + wd * x[i]);
    x[i] += v[i];
  }
}

// inputs: x, g, m, s (P each), hyper [lr, beta1, beta2, eps, weight_decay, step]
void adamw(KernelContext& ctx) {
  float* x = ctx.in(0).ptr<float>();
  const float* g = ctx.in(1).ptr<float>();
  float* m = ctx.in(2).ptr<float>();
  float* s = ctx.in(3).ptr<float>();
  const float* h = ctx.in(4).ptr<float>();
  const float lr = h[0], b1 = h[1], b2 = h[2], eps = h[3], wd = h[4], t = h[5];
  const float c1 = 1.0f - std::pow(b1, t), c2 = 1.0f - std::pow(b2, t);
  const int64_t n = ctx.in(0).numel();
#pragma omp parallel for simd if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    s[i] = b2 * s[i] + (1 - b2) * g[i] * g[i];
    x[i] -= lr * (wd * x[i] + (m[i] / c1) / (std::sqrt(s[i] / c2) + eps));
  }
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SGDMomentum", DeviceKind::CPU, sgd_momentum);
CBT_REGISTER_KERNEL(kCbtDomain, "AdamW", DeviceKind::CPU, adamw);

}  // namespace cbt
