// CPU kernels of Softmax/LogSoftmax along one axis and their backward ops.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// A tensor seen as (outer, len, inner) around the softmax axis.
struct AxisView {
  int64_t outer, len, inner;
};

AxisView axis_view(const KernelContext& ctx, const Shape& s) {
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", -1), static_cast<int64_t>(s.size()));
  return {dims_product(s, 0, axis), s[axis], dims_product(s, axis + 1, s.size())};
}

// Calls f(offset) for every (outer, inner) line of `v`, in parallel; a line is `len`
// elements `inner` apart (contiguous for the usual last axis).
template <class LineFn>
void for_each_line(const AxisView& v, LineFn f) {
  int64_t total = v.outer * v.len * v.inner;
#pragma omp parallel for schedule(static) if (total >= kParallelMin && v.outer * v.inner > 1)
  for (int64_t q = 0; q < v.outer * v.inner; ++q) f((q / v.inner) * v.len * v.inner + q % v.inner);
}

// x, y: (outer, len, inner); log selects LogSoftmax.
template <class T>
void softmax_forward(const T* x, T* y, const AxisView& v, bool log) {
  int64_t st = v.inner;
  for_each_line(v, [&](int64_t o) {
    const T* xr = x + o;
    T* yr = y + o;
    T m = xr[0];
    for (int64_t k = 1; k < v.len; ++k) m = std::max(m, xr[k * st]);
    T sum = 0;
    for (int64_t k = 0; k < v.len; ++k) {
      T e = std::exp(xr[k * st] - m);
      if (!log) yr[k * st] = e;
      sum += e;
    }
    if (log) {
      T lse = m + std::log(sum);
      for (int64_t k = 0; k < v.len; ++k) yr[k * st] = xr[k * st] - lse;
    } else {
      T inv = T(1) / sum;
      for (int64_t k = 0; k < v.len; ++k) yr[k * st] *= inv;
    }
  });
}

// dY, Y, dX: (outer, len, inner).
template <class T>
void softmax_backward(const T* dy, const T* y, T* dx, const AxisView& v, bool log) {
  int64_t st = v.inner;
  for_each_line(v, [&](int64_t o) {
    T s = 0;
    for (int64_t k = 0; k < v.len; ++k) s += log ? dy[o + k * st] : dy[o + k * st] * y[o + k * st];
    for (int64_t k = 0; k < v.len; ++k) {
      int64_t i = o + k * st;
      dx[i] = log ? dy[i] - std::exp(y[i]) * s : y[i] * (dy[i] - s);
    }
  });
}

template <bool Log>
void softmax_kernel(KernelContext& ctx) {
  AxisView v = axis_view(ctx, ctx.in(0).shape());
  dispatch_float(ctx.in(0).dtype(),
                 [&]<class T>() { softmax_forward(ctx.in(0).ptr<T>(), ctx.out(0).ptr<T>(), v, Log); });
}

template <bool Log>
void softmax_grad_kernel(KernelContext& ctx) {
  AxisView v = axis_view(ctx, ctx.in(0).shape());
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    softmax_backward(ctx.in(0).ptr<T>(), ctx.in(1).ptr<T>(), ctx.out(0).ptr<T>(), v, Log);
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "Softmax", DeviceKind::CPU, softmax_kernel<false>);
CBT_REGISTER_KERNEL("", "LogSoftmax", DeviceKind::CPU, softmax_kernel<true>);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxGrad", DeviceKind::CPU, softmax_grad_kernel<false>);
CBT_REGISTER_KERNEL(kCbtDomain, "LogSoftmaxGrad", DeviceKind::CPU, softmax_grad_kernel<true>);

}  // namespace cbt::cpu
