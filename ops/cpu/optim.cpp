// Updates over flat buffers (CPU): optimizers and Synchronous Model Averaging. Hyper-
// parameters come as a small float tensor so that a device copy can change between steps
// without rebuilding anything.
#include <cmath>

#include "ops/kernel.h"

namespace cbt {

namespace {

// inputs: x (P), g (P), v (P), hyper [lr, momentum, weight_decay, grad_scale]
void sgd_momentum(KernelContext& ctx) {
  float* x = ctx.in(0).ptr<float>();
  const float* g = ctx.in(1).ptr<float>();
  float* v = ctx.in(2).ptr<float>();
  const float* h = ctx.in(3).ptr<float>();
  const float lr = h[0], mu = h[1], wd = h[2], s = h[3];
  const int64_t n = ctx.in(0).numel();
#pragma omp parallel for simd if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    v[i] = mu * v[i] - lr * (s * g[i] + wd * x[i]);
    x[i] += v[i];
  }
}

// inputs: x, g, m, s (P each), hyper [lr, beta1, beta2, eps, weight_decay, step, grad_scale]
void adamw(KernelContext& ctx) {
  float* x = ctx.in(0).ptr<float>();
  const float* g = ctx.in(1).ptr<float>();
  float* m = ctx.in(2).ptr<float>();
  float* s = ctx.in(3).ptr<float>();
  const float* h = ctx.in(4).ptr<float>();
  const float lr = h[0], b1 = h[1], b2 = h[2], eps = h[3], wd = h[4], t = h[5], gs = h[6];
  const float c1 = 1.0f - std::pow(b1, t), c2 = 1.0f - std::pow(b2, t);
  const int64_t n = ctx.in(0).numel();
#pragma omp parallel for simd if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float gi = gs * g[i];
    m[i] = b1 * m[i] + (1 - b1) * gi;
    s[i] = b2 * s[i] + (1 - b2) * gi * gi;
    x[i] -= lr * (wd * x[i] + (m[i] / c1) / (std::sqrt(s[i] / c2) + eps));
  }
}

// The learner's half of an SMA round (DESIGN.md), at the pre-step replica:
// inputs: x, g, v, z, c (P each), hyper [lr, momentum, weight_decay, alpha]
void sma_learner_update(KernelContext& ctx) {
  float* x = ctx.in(0).ptr<float>();
  const float* g = ctx.in(1).ptr<float>();
  float* v = ctx.in(2).ptr<float>();
  const float* z = ctx.in(3).ptr<float>();
  float* c = ctx.in(4).ptr<float>();
  const float* h = ctx.in(5).ptr<float>();
  const float lr = h[0], mu = h[1], wd = h[2], alpha = h[3];
  const int64_t n = ctx.in(0).numel();
#pragma omp parallel for simd if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    c[i] = alpha * (x[i] - z[i]);
    v[i] = mu * v[i] - lr * (g[i] + wd * x[i]);
    x[i] += v[i] - c[i];
  }
}

// The central half: inputs z, z_prev, sum_c (P each), hyper [mu_z]
void sma_central_update(KernelContext& ctx) {
  float* z = ctx.in(0).ptr<float>();
  float* zp = ctx.in(1).ptr<float>();
  const float* sc = ctx.in(2).ptr<float>();
  const float mu_z = ctx.in(3).ptr<float>()[0];
  const int64_t n = ctx.in(0).numel();
#pragma omp parallel for simd if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float zi = z[i];
    z[i] = zi + sc[i] + mu_z * (zi - zp[i]);
    zp[i] = zi;
  }
}

// Clipping by global norm, as torch.nn.utils.clip_grad_norm_: the norm is of scale*g (the
// gradient the update will apply), and g is scaled by min(1, max_norm / (norm + 1e-6)).
// inputs: g (P), in place; attributes max_norm, scale (default 1). A serial sum in double:
// the same order every run (--deterministic).
void clip_grad_norm(KernelContext& ctx) {
  float* g = ctx.in(0).ptr<float>();
  const double max_norm = ctx.node.attrs.get_float("max_norm", 0.0f);
  const double scale = ctx.node.attrs.get_float("scale", 1.0f);
  const int64_t n = ctx.in(0).numel();
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += static_cast<double>(g[i]) * g[i];
  const double coef = max_norm / (std::fabs(scale) * std::sqrt(sq) + 1e-6);
  if (!(coef < 1.0)) return;  // also leaves a non-finite gradient to the divergence checks
  const float c = static_cast<float>(coef);
#pragma omp parallel for simd if (n > 65536)
  for (int64_t i = 0; i < n; ++i) g[i] *= c;
}

// out = scale * sum of inputs (attribute "scale", default 1); one pass over all buffers.
void sum_buffers(KernelContext& ctx) {
  float* out = ctx.out(0).ptr<float>();
  const float scale = ctx.node.attrs.get_float("scale", 1.0f);
  const int64_t n = ctx.out(0).numel();
  const size_t k = ctx.inputs.size();
#pragma omp parallel for if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    float acc = 0;
    for (size_t j = 0; j < k; ++j) acc += ctx.inputs[j].ptr<float>()[i];
    out[i] = scale * acc;
  }
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SGDMomentum", DeviceKind::CPU, sgd_momentum);
CBT_REGISTER_KERNEL(kCbtDomain, "AdamW", DeviceKind::CPU, adamw);
CBT_REGISTER_KERNEL(kCbtDomain, "SMALearnerUpdate", DeviceKind::CPU, sma_learner_update);
CBT_REGISTER_KERNEL(kCbtDomain, "SMACentralUpdate", DeviceKind::CPU, sma_central_update);
CBT_REGISTER_KERNEL(kCbtDomain, "SumBuffers", DeviceKind::CPU, sum_buffers);
CBT_REGISTER_KERNEL(kCbtDomain, "ClipGradNorm", DeviceKind::CPU, clip_grad_norm);

}  // namespace cbt
