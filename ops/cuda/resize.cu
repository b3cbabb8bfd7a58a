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
  const ResizeAxis &A = g.ax[0], &B = g.ax[1], &C = g.ax[2];
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  CBT_GRID_STRIDE_LOOP(k, n) {
    const int64_t p = k / out_plane, r = k % out_plane;
    const int64_t a = r / (B.out * C.out), b = r / C.out % B.out, c = r % C.out;
    const ResizeTaps ta = resize_taps(a, A), tb = resize_taps(b, B), tc = resize_taps(c, C);
    double sum = 0;
    for (int ka = 0; ka < 2; ++ka) {
      const float wa = ka ? ta.w1 : ta.w0;
      if (wa == 0.0f) continue;
      for (int kb = 0; kb < 2; ++kb) {
        const float wb = kb ? tb.w1 : tb.w0;
        if (wb == 0.0f) continue;
        for (int kc = 0; kc < 2; ++kc) {
          const float wc = kc ? tc.w1 : tc.w0;
          if (wc == 0.0f) continue;
          const int64_t ia = ka ? ta.i1 : ta.i0, ib = kb ? tb.i1 : tb.i0, ic = kc ? tc.i1 : tc.i0;
          sum += double(wa) * wb * wc * x[p * in_plane + (ia * B.in + ib) * C.in + ic];
        }
      }
    }
    y[k] = static_cast<float>(sum);
  }
}

__global__ void resize_bwd_kernel(const float* dy, float* dx, ResizeGeom g, int64_t n) {
  const ResizeAxis &A = g.ax[0], &B = g.ax[1], &C = g.ax[2];
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  CBT_GRID_STRIDE_LOOP(k, n) {
    const int64_t p = k / in_plane, r = k % in_plane;
    const int64_t a = r / (B.in * C.in), b = r / C.in % B.in, c = r % C.in;
    int64_t a_lo, a_hi, b_lo, b_hi, c_lo, c_hi;
    resize_readers(a, A, &a_lo, &a_hi);
    resize_readers(b, B, &b_lo, &b_hi);
    resize_readers(c, C, &c_lo, &c_hi);
    double sum = 0;
    for (int64_t oa = a_lo; oa < a_hi; ++oa) {
      const float wa = resize_weight(resize_taps(oa, A), a);
      for (int64_t ob = b_lo; ob < b_hi; ++ob) {
        const float wb = resize_weight(resize_taps(ob, B), b);
        for (int64_t oc = c_lo; oc < c_hi; ++oc) {
          const float wc = resize_weight(resize_taps(oc, C), c);
          sum += double(wa) * wb * wc * dy[p * out_plane + (oa * B.out + ob) * C.out + oc];
        }
      }
    }
    dx[k] = static_cast<float>(sum);
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
