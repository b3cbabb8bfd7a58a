// Clipping a flat gradient buffer by its global norm (CUDA), the arithmetic of
// ops/cpu/optim.cpp's clip_grad_norm: block partial sums of squares in double, one block
// that turns them into the factor, and a scaling pass. No host round trip, so it can live
// inside a learner's CUDA graph.
#include "ops/cuda/common.cuh"
#include "ops/cuda/dense_util.cuh"

namespace cbt::cuda {

namespace {

constexpr int kClipBlocks = 1024;

// partial[b] = sum of g[i]^2 over block b's grid-stride share.
__global__ void clip_partials_kernel(const float* __restrict__ g, int64_t n, double* __restrict__ partial) {
  __shared__ double shared[32];
  double acc = 0;
  CBT_GRID_STRIDE_LOOP(i, n) acc += static_cast<double>(g[i]) * g[i];
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// factor[0] = min(1, max_norm / (|scale| * sqrt(sum partial) + 1e-6)); one block, fixed order.
__global__ void clip_factor_kernel(const double* __restrict__ partial, int blocks, double max_norm, double scale,
                                   float* __restrict__ factor) {
  __shared__ double shared[32];
  double acc = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) acc += partial[b];
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) {
    const double coef = max_norm / (fabs(scale) * sqrt(acc) + 1e-6);
    factor[0] = coef < 1.0 ? static_cast<float>(coef) : 1.0f;
  }
}

__global__ void clip_scale_kernel(float* __restrict__ g, int64_t n, const float* __restrict__ factor) {
  const float c = factor[0];
  if (c == 1.0f) return;
  CBT_GRID_STRIDE_LOOP(i, n) g[i] *= c;
}

// inputs: g (P) in place; attributes max_norm, scale.
void clip_grad_norm(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  CBT_CHECK(ctx.in(0).dtype() == DType::Float32, "ClipGradNorm: the gradient buffer must be float32");
  const int64_t n = ctx.in(0).numel();
  if (n == 0) return;
  const double max_norm = ctx.node.attrs.get_float("max_norm", 0.0f);
  const double scale = ctx.node.attrs.get_float("scale", 1.0f);
  const int blocks = std::min(blocks_for(n), kClipBlocks);
  Scratch scratch(cc);
  double* partial = scratch.take<double>(blocks, "the gradient norm");
  float* factor = scratch.take<float>(1, "the clipping factor");
  float* g = ctx.in(0).ptr<float>();
  clip_partials_kernel<<<blocks, kThreads, 0, cc.stream>>>(g, n, partial);
  CBT_CUDA_CHECK_LAUNCH();
  clip_factor_kernel<<<1, kThreads, 0, cc.stream>>>(partial, blocks, max_norm, scale, factor);
  CBT_CUDA_CHECK_LAUNCH();
  clip_scale_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(g, n, factor);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "ClipGradNorm", DeviceKind::CUDA, clip_grad_norm);

}  // namespace cbt::cuda
