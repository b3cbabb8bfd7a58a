// Resize and ResizeGrad CPU kernels: each output element sums its taps along the last three
// axes (graph/ops/resize_params.h); the backward pass gathers, for each input element, the
// gradients of the outputs that read it, in a fixed order.
#include <vector>

#include "graph/ops/resize_params.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

std::vector<float> scales_of(const KernelContext& ctx) {
  if (!ctx.has_in(2) || ctx.in(2).numel() == 0) return {};
  const float* s = ctx.in(2).ptr<float>();
  return {s, s + ctx.in(2).numel()};
}

std::vector<int64_t> sizes_of(const KernelContext& ctx) {
  return ctx.has_in(3) ? ctx.in(3).to_i64_vector() : std::vector<int64_t>{};
}

// X's shape `in` resampled as the node says.
ResizeGeom geom_of(const KernelContext& ctx, const Shape& in) {
  return resize_geom(in, resize_target(in, scales_of(ctx), sizes_of(ctx), ctx.node.attrs.get_ints("axes")),
                     parse_resize_mode(ctx.node.attrs));
}

// Calls f(p, a, b, c, offset) for every element of `planes` blocks of the dims (A, B, C), the
// offset counting from the first.
template <class F>
void each_element(int64_t planes, int64_t A, int64_t B, int64_t C, F&& f) {
#pragma omp parallel for if (planes * A * B * C > (int64_t{1} << 16))
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) f(p, a, b, c, ((p * A + a) * B + b) * C + c);
}

template <class T>
void resize_forward(const ResizeGeom& g, const T* x, T* y) {
  each_element(g.planes, g.ax[0].out, g.ax[1].out, g.ax[2].out,
               [&](int64_t p, int64_t a, int64_t b, int64_t c, int64_t o) {
                 y[o] = static_cast<T>(resize_output(x + p * g.in_plane(), g, a, b, c));
               });
}

template <class T>
void resize_backward(const ResizeGeom& g, const T* dy, T* dx) {
  each_element(g.planes, g.ax[0].in, g.ax[1].in, g.ax[2].in,
               [&](int64_t p, int64_t a, int64_t b, int64_t c, int64_t i) {
                 dx[i] = static_cast<T>(resize_input_grad(dy + p * g.out_plane(), g, a, b, c));
               });
}

void resize(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const ResizeGeom g = geom_of(ctx, x.shape());
  dispatch_float(x.dtype(), [&]<class T>() { resize_forward(g, x.ptr<T>(), ctx.out(0).ptr<T>()); });
}

// (dY, roi, scales, sizes) -> dX of attribute 'shape'
void resize_grad(KernelContext& ctx) {
  const Tensor& dy = ctx.in(0);
  const ResizeGeom g = geom_of(ctx, ctx.out(0).shape());
  dispatch_float(dy.dtype(), [&]<class T>() { resize_backward(g, dy.ptr<T>(), ctx.out(0).ptr<T>()); });
}

}  // namespace

CBT_REGISTER_KERNEL("", "Resize", DeviceKind::CPU, resize);
CBT_REGISTER_KERNEL(kCbtDomain, "ResizeGrad", DeviceKind::CPU, resize_grad);

}  // namespace cbt::cpu
