// Optimizer updates over flat buffers (CUDA), the same arithmetic as ops/cpu/optim.cpp.
// Hyper-parameters are read on the device from the small hyper tensor, so a new learning
// rate is one host-to-device copy and the launch itself never changes.
#include "ops/cuda/common.cuh"

namespace cbt::cuda {

namespace {

// x, g, v: (P); hyper: [lr, momentum, weight_decay, grad_scale]
__global__ void sgd_momentum_kernel(float* __restrict__ x, const float* __restrict__ g, float* __restrict__ v,
                                    const float* __restrict__ hyper, int64_t n) {
  const float lr = hyper[0], mu = hyper[1], wd = hyper[2], gs = hyper[3];
  CBT_GRID_STRIDE_LOOP(i, n) {
    float vi = mu * v[i] - lr * (gs * g[i] + wd * x[i]);
    v[i] = vi;
    x[i] += vi;
  }
}

// x, g, m, s: (P); hyper: [lr, beta1, beta2, eps, weight_decay, step, grad_scale]
__global__ void adamw_kernel(float* __restrict__ x, const float* __restrict__ g, float* __restrict__ m,
                             float* __restrict__ s, const float* __restrict__ hyper, int64_t n) {
  const float lr = hyper[0], b1 = hyper[1], b2 = hyper[2], eps = hyper[3], wd = hyper[4];
  const float t = hyper[5], gs = hyper[6];
  const float c1 = 1.0f - powf(b1, t), c2 = 1.0f - powf(b2, t);
  CBT_GRID_STRIDE_LOOP(i, n) {
    float gi = gs * g[i];
    float mi = b1 * m[i] + (1 - b1) * gi;
    float si = b2 * s[i] + (1 - b2) * gi * gi;
    m[i] = mi;
    s[i] = si;
    x[i] -= lr * (wd * x[i] + (mi / c1) / (sqrtf(si / c2) + eps));
  }
}

void check_buffers(const KernelContext& ctx, size_t buffers) {
  const int64_t n = ctx.in(0).numel();
  for (size_t i = 0; i < buffers; ++i)
    CBT_CHECK(ctx.in(i).dtype() == DType::Float32 && ctx.in(i).numel() == n, ctx.node.op_type, ": buffer ", i,
              " must be float32 of ", n, " elements");
  CBT_CHECK(ctx.in(buffers).dtype() == DType::Float32 && ctx.in(buffers).numel() >= 7, ctx.node.op_type,
            ": bad hyper-parameter tensor");
}

void sgd_momentum(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  check_buffers(ctx, 3);
  const int64_t n = ctx.in(0).numel();
  if (n == 0) return;
  sgd_momentum_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(ctx.in(0).ptr<float>(), ctx.in(1).ptr<float>(),
                                                                 ctx.in(2).ptr<float>(), ctx.in(3).ptr<float>(), n);
  CBT_CUDA_CHECK_LAUNCH();
}

void adamw(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  check_buffers(ctx, 4);
  CBT_CHECK(ctx.in(4).numel() >= 6, "AdamW: the hyper-parameter tensor needs 6 values");
  const int64_t n = ctx.in(0).numel();
  if (n == 0) return;
  adamw_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(ctx.in(0).ptr<float>(), ctx.in(1).ptr<float>(),
                                                          ctx.in(2).ptr<float>(), ctx.in(3).ptr<float>(),
                                                          ctx.in(4).ptr<float>(), n);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SGDMomentum", DeviceKind::CUDA, sgd_momentum);
CBT_REGISTER_KERNEL(kCbtDomain, "AdamW", DeviceKind::CUDA, adamw);

}  // namespace cbt::cuda
