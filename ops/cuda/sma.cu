// Synchronous Model Averaging over flat buffers (CUDA), the arithmetic of ops/cpu/optim.cpp:
// the learner's update (on its stream) and the central update and reduction (on the
// synchronisation stream).
#include "ops/cuda/common.cuh"

namespace cbt::cuda {

namespace {

// hyper: [lr, momentum, weight_decay, alpha]
__global__ void sma_learner_kernel(float* __restrict__ x, const float* __restrict__ g, float* __restrict__ v,
                                   const float* __restrict__ z, float* __restrict__ c, const float* __restrict__ hyper,
                                   int64_t n) {
  const float lr = hyper[0], mu = hyper[1], wd = hyper[2], alpha = hyper[3];
  CBT_GRID_STRIDE_LOOP(i, n) {
    const float xi = x[i];
    const float ci = alpha * (xi - z[i]);
    const float vi = mu * v[i] - lr * (g[i] + wd * xi);
    c[i] = ci;
    v[i] = vi;
    x[i] = xi + vi - ci;
  }
}

// hyper: [mu_z]
__global__ void sma_central_kernel(float* __restrict__ z, float* __restrict__ zp, const float* __restrict__ sum_c,
                                   const float* __restrict__ hyper, int64_t n) {
  const float mu_z = hyper[0];
  CBT_GRID_STRIDE_LOOP(i, n) {
    const float zi = z[i];
    z[i] = zi + sum_c[i] + mu_z * (zi - zp[i]);
    zp[i] = zi;
  }
}

constexpr int kMaxSumInputs = 32;
struct SumInputs {
  const float* ptr[kMaxSumInputs];
  int count;
};

// One kernel over all buffers of a GPU, summed in learner order (deterministic).
__global__ void sum_buffers_kernel(SumInputs in, float* __restrict__ out, float scale, int64_t n) {
  CBT_GRID_STRIDE_LOOP(i, n) {
    float acc = 0;
    for (int j = 0; j < in.count; ++j) acc += in.ptr[j][i];
    out[i] = scale * acc;
  }
}

void sma_learner_update(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const int64_t n = ctx.in(0).numel();
  if (n == 0) return;
  sma_learner_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(ctx.in(0).ptr<float>(), ctx.in(1).ptr<float>(),
                                                                ctx.in(2).ptr<float>(), ctx.in(3).ptr<float>(),
                                                                ctx.in(4).ptr<float>(), ctx.in(5).ptr<float>(), n);
  CBT_CUDA_CHECK_LAUNCH();
}

void sma_central_update(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const int64_t n = ctx.in(0).numel();
  if (n == 0) return;
  sma_central_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(ctx.in(0).ptr<float>(), ctx.in(1).ptr<float>(),
                                                                ctx.in(2).ptr<float>(), ctx.in(3).ptr<float>(), n);
  CBT_CUDA_CHECK_LAUNCH();
}

void sum_buffers(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  CBT_CHECK(ctx.inputs.size() <= static_cast<size_t>(kMaxSumInputs), "SumBuffers: at most ", kMaxSumInputs,
            " buffers per kernel");
  SumInputs in{};
  in.count = static_cast<int>(ctx.inputs.size());
  for (size_t j = 0; j < ctx.inputs.size(); ++j) in.ptr[j] = ctx.inputs[j].ptr<float>();
  const int64_t n = ctx.out(0).numel();
  if (n == 0) return;
  sum_buffers_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(in, ctx.out(0).ptr<float>(),
                                                                ctx.node.attrs.get_float("scale", 1.0f), n);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SMALearnerUpdate", DeviceKind::CUDA, sma_learner_update);
CBT_REGISTER_KERNEL(kCbtDomain, "SMACentralUpdate", DeviceKind::CUDA, sma_central_update);
CBT_REGISTER_KERNEL(kCbtDomain, "SumBuffers", DeviceKind::CUDA, sum_buffers);

}  // namespace cbt::cuda
