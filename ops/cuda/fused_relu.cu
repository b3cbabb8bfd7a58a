// The fused Relu's own passes, for the cases where no product epilogue or reduction takes it.
#include "ops/cuda/fused_relu.cuh"

namespace cbt::cuda {
namespace {

__global__ void relu_in_place_kernel(float* y, int64_t n) { CBT_GRID_STRIDE_LOOP(i, n) y[i] = relu_of(y[i]); }

__global__ void relu_mask_kernel(const float* dy, const float* y, float* masked, int64_t n) {
  CBT_GRID_STRIDE_LOOP(i, n) masked[i] = relu_grad_of(dy[i], y[i]);
}

}  // namespace

void relu_in_place(const CudaContext& cc, float* y, int64_t n) {
  relu_in_place_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(y, n);
  CBT_CUDA_CHECK_LAUNCH();
}

const float* fused_relu_grad(KernelContext& ctx, size_t y_input, size_t masked_output, bool mask) {
  const auto* dy = static_cast<const float*>(ctx.in(0).data());
  if (!fused_relu(ctx)) return dy;
  CBT_CHECK(ctx.has_out(masked_output), "node ", ctx.node.describe(), ": relu=1 needs the masked gradient's output");
  auto* masked = static_cast<float*>(ctx.out(masked_output).data());
  if (mask) {
    const int64_t n = ctx.in(0).numel();
    relu_mask_kernel<<<blocks_for(n), kThreads, 0, context_of(ctx.device_ctx).stream>>>(
        dy, static_cast<const float*>(ctx.in(y_input).data()), masked, n);
    CBT_CUDA_CHECK_LAUNCH();
  }
  return masked;
}

}  // namespace cbt::cuda
