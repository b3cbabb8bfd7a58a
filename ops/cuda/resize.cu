// Resize and ResizeGrad CUDA kernels, one thread an output element (forward) or an input
// element (backward, gathering the outputs that read it: deterministic); the sampling is
// graph/ops/resize_params.h's, as on the CPU (ops/cpu/resize.cpp, the specification).
#include <vector>

#include "graph/ops/resize_params.h"
#include "ops/cuda/dense_util.cuh"
#include "ops/cuda/host_input.h"

namespace cbt::cuda {
namespace {

// X's shape `in` resampled to `out` (the inferred output shape, which sizes determine when
// they are given).
ResizeGeom geom_of(KernelContext& ctx, const Shape& in, const Shape& out) {
  std::vector<float> scales = host_input<float>(ctx, 2);
  std::vector<int64_t> axes = ctx.node.attrs.get_ints("axes"), sizes;
  if (scales.empty()) sizes.assign(out.begin(), out.end()), axes.clear();
  return resize_geom(in, resize_target(in, scales, sizes, axes), parse_resize_mode(ctx.node.attrs));
}

__global__ void resize_fwd_kernel(const float* x, float* y, ResizeGeom g, int64_t n) {
  const int64_t B = g.ax[1].out, C = g.ax[2].out, plane = g.out_plane();
  CBT_GRID_STRIDE_LOOP(k, n) {
    const int64_t r = k % plane;
    y[k] = static_cast<float>(resize_output(x + k / plane * g.in_plane(), g, r / (B * C), r / C % B, r % C));
  }
}

__global__ void resize_bwd_kernel(const float* dy, float* dx, ResizeGeom g, int64_t n) {
  const int64_t B = g.ax[1].in, C = g.ax[2].in, plane = g.in_plane();
  CBT_GRID_STRIDE_LOOP(k, n) {
    const int64_t r = k % plane;
    dx[k] = static_cast<float>(resize_input_grad(dy + k / plane * g.out_plane(), g, r / (B * C), r / C % B, r % C));
  }
}

void resize(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  check_float32(x, ctx.node, "resizes float32 tensors");
  const int64_t n = ctx.out(0).numel();
  if (n == 0) return;
  const ResizeGeom g = geom_of(ctx, x.shape(), ctx.out(0).shape());
  resize_fwd_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(fptr(x), fptr_out(ctx.out(0)), g, n);
  CBT_CUDA_CHECK_LAUNCH();
}

// (dY, roi, scales, sizes) -> dX of attribute 'shape'
void resize_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& dy = ctx.in(0);
  check_float32(dy, ctx.node, "resizes float32 tensors");
  const int64_t n = ctx.out(0).numel();
  if (n == 0) return;
  const ResizeGeom g = geom_of(ctx, ctx.out(0).shape(), dy.shape());
  resize_bwd_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(fptr(dy), fptr_out(ctx.out(0)), g, n);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "Resize", DeviceKind::CUDA, resize);
CBT_REGISTER_KERNEL(kCbtDomain, "ResizeGrad", DeviceKind::CUDA, resize_grad);

}  // namespace cbt::cuda
