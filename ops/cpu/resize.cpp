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

template <class T>
void resize_forward(const ResizeGeom& g, const T* x, T* y) {
  const ResizeAxis &A = g.ax[0], &B = g.ax[1], &C = g.ax[2];
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
#pragma omp parallel for if (g.planes * out_plane > (int64_t{1} << 16))
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t a = 0; a < A.out; ++a) {
      const ResizeTaps ta = resize_taps(a, A);
      for (int64_t b = 0; b < B.out; ++b) {
        const ResizeTaps tb = resize_taps(b, B);
        for (int64_t c = 0; c < C.out; ++c) {
          const ResizeTaps tc = resize_taps(c, C);
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
          y[p * out_plane + (a * B.out + b) * C.out + c] = static_cast<T>(sum);
        }
      }
    }
}

template <class T>
void resize_backward(const ResizeGeom& g, const T* dy, T* dx) {
  const ResizeAxis &A = g.ax[0], &B = g.ax[1], &C = g.ax[2];
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
#pragma omp parallel for if (g.planes * out_plane > (int64_t{1} << 16))
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t a = 0; a < A.in; ++a) {
      int64_t a_lo, a_hi;
      resize_readers(a, A, &a_lo, &a_hi);
      for (int64_t b = 0; b < B.in; ++b) {
        int64_t b_lo, b_hi;
        resize_readers(b, B, &b_lo, &b_hi);
        for (int64_t c = 0; c < C.in; ++c) {
          int64_t c_lo, c_hi;
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
          dx[p * in_plane + (a * B.in + b) * C.in + c] = static_cast<T>(sum);
        }
      }
    }
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
