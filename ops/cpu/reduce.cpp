// CPU kernels of ReduceSum/ReduceMean/ReduceMax/ReduceMin/ReduceProd and their backward ops, of
// GlobalMaxPool (ReduceMax over the spatial dims), and of ArgMax/ArgMin.
#include <algorithm>
#include <vector>

#include "ops/arg_extreme.h"
#include "ops/cpu/broadcast.h"
#include "ops/cpu/shape_ops_common.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// X's shape `in` with the reduced dims set to 1. Schema inference has validated the axes;
// they come from the attribute (older opsets) or the host tensor of input 1.
Shape kept_shape(const KernelContext& ctx, const Shape& in) {
  std::vector<int64_t> axes = ctx.node.attrs.get_ints("axes");
  if (ctx.has_in(1)) axes = ctx.in(1).to_i64_vector();
  Shape kept = in;
  if (axes.empty()) {
    if (!ctx.node.attrs.get_int("noop_with_empty_axes", 0))
      for (auto& d : kept) d = 1;
    return kept;
  }
  for (int64_t a : normalize_axes(axes, static_cast<int64_t>(in.size()))) kept[a] = 1;
  return kept;
}

// x: any shape; y: x reduced (keepdims or not: the same memory layout).
template <bool Mean>
void reduce(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  Shape kept = kept_shape(ctx, x.shape());
  auto run = [&]<class T>() {
    T scale = Mean && x.numel() ? static_cast<T>(static_cast<double>(y.numel()) / x.numel()) : T(1);
    reduce_sum_to(x.ptr<T>(), x.shape(), y.ptr<T>(), kept, scale);
  };
  if (Mean)
    dispatch_float(x.dtype(), run);
  else
    dispatch_arith(x.dtype(), run);
}

// dY: the reduced shape; dX: attribute 'shape'.
template <bool Mean>
void reduce_grad(KernelContext& ctx) {
  const Tensor& dy = ctx.in(0);
  Tensor& dx = ctx.out(0);
  Shape kept = kept_shape(ctx, dx.shape());
  dispatch_float(dy.dtype(), [&]<class T>() {
    T scale = Mean && dx.numel() ? static_cast<T>(static_cast<double>(dy.numel()) / dx.numel()) : T(1);
    broadcast_to(dy.ptr<T>(), kept, dx.ptr<T>(), dx.shape(), scale);
  });
}

// Calls f(offset in X, offset in Y) for every element of X (shape `in`), Y being X reduced to
// `kept` (the reduced dims 1).
template <class F>
void each_with_its_output(const Shape& in, const Shape& kept, F&& f) {
  shape_ops::for_each_strided(in, strides_of(in), broadcast_strides(kept, in), f);
}

// y = the largest (Max) or smallest element of each group of x reduced to `kept`; NaN wins, as
// numpy's.
template <bool Max>
void extreme(const Tensor& x, Tensor& y, const Shape& kept) {
  dispatch_arith(x.dtype(), [&]<class T>() {
    const T* px = x.ptr<T>();
    T* py = y.ptr<T>();
    std::vector<uint8_t> seen(y.numel(), 0);
    each_with_its_output(x.shape(), kept, [&](int64_t ox, int64_t oy) {
      const T v = px[ox], cur = py[oy];
      if (!seen[oy])
        py[oy] = v, seen[oy] = 1;
      else if (cur == cur && (v != v || (Max ? v > cur : v < cur)))  // a NaN, once there, stays
        py[oy] = v;
    });
  });
}

template <bool Max>
void reduce_extreme(KernelContext& ctx) {
  extreme<Max>(ctx.in(0), ctx.out(0), kept_shape(ctx, ctx.in(0).shape()));
}

// dX: dY shared evenly among the elements of x equal to their y.
void extreme_grad(const Tensor& dy, const Tensor& x, const Tensor& y, Tensor& dx, const Shape& kept) {
  dispatch_float(dy.dtype(), [&]<class T>() {
    const T *pdy = dy.ptr<T>(), *px = x.ptr<T>(), *py = y.ptr<T>();
    T* pdx = dx.ptr<T>();
    std::vector<int64_t> ties(y.numel(), 0);
    each_with_its_output(x.shape(), kept, [&](int64_t ox, int64_t oy) { ties[oy] += px[ox] == py[oy]; });
    each_with_its_output(x.shape(), kept, [&](int64_t ox, int64_t oy) {
      pdx[ox] = px[ox] == py[oy] ? pdy[oy] / static_cast<T>(ties[oy]) : T(0);
    });
  });
}

// (dY, [axes], X, Y) -> dX
void reduce_extreme_grad(KernelContext& ctx) {
  extreme_grad(ctx.in(0), ctx.in(2), ctx.in(3), ctx.out(0), kept_shape(ctx, ctx.out(0).shape()));
}

// y = the product of each group of x reduced to the kept shape, in x's order (the GPU's too).
void reduce_prod(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const Shape kept = kept_shape(ctx, x.shape());
  dispatch_arith(x.dtype(), [&]<class T>() {
    const T* px = x.ptr<T>();
    T* py = y.ptr<T>();
    std::fill(py, py + y.numel(), T(1));
    each_with_its_output(x.shape(), kept, [&](int64_t ox, int64_t oy) { py[oy] *= px[ox]; });
  });
}

// (dY, [axes], X, Y) -> dX: dY times the product of the group's other elements: Y / X without
// zeros in the group; with one zero, the product of the rest at the zero and 0 elsewhere; with
// more, 0 (as PyTorch's prod).
void reduce_prod_grad(KernelContext& ctx) {
  const Tensor &dy = ctx.in(0), &x = ctx.in(2);
  Tensor& dx = ctx.out(0);
  const Shape kept = kept_shape(ctx, dx.shape());
  dispatch_float(dy.dtype(), [&]<class T>() {
    const T *pdy = dy.ptr<T>(), *px = x.ptr<T>();
    T* pdx = dx.ptr<T>();
    std::vector<T> others(dy.numel(), T(1));  // the product of the group's nonzero elements
    std::vector<int64_t> zeros(dy.numel(), 0);
    each_with_its_output(x.shape(), kept, [&](int64_t ox, int64_t oy) {
      if (px[ox] == T(0))
        ++zeros[oy];
      else
        others[oy] *= px[ox];
    });
    each_with_its_output(x.shape(), kept, [&](int64_t ox, int64_t oy) {
      pdx[ox] = zeros[oy] == 0                     ? pdy[oy] * others[oy] / px[ox]
                : zeros[oy] == 1 && px[ox] == T(0) ? pdy[oy] * others[oy]
                                                   : T(0);
    });
  });
}

// GlobalMaxPool: (N, C, spatial...) -> (N, C, 1, ...); its backward op recomputes the max.
void global_max_pool(KernelContext& ctx) { extreme<true>(ctx.in(0), ctx.out(0), ctx.out(0).shape()); }
void global_max_pool_grad(KernelContext& ctx) {
  const Tensor &dy = ctx.in(0), &x = ctx.in(1);
  Tensor y(x.dtype(), dy.shape(), x.device());
  extreme<true>(x, y, dy.shape());
  extreme_grad(dy, x, y, ctx.out(0), dy.shape());
}

// ArgMax/ArgMin: X -> int64 indices (ops/arg_extreme.h); keepdims or not, the same layout.
template <bool Max>
void arg_extreme(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const AxisView a(x.shape(), ctx.node.attrs.get_int("axis", 0));
  const bool last = ctx.node.attrs.get_int("select_last_index", 0) != 0;
  int64_t* y = ctx.out(0).ptr<int64_t>();
  dispatch_arith(x.dtype(), [&]<class T>() {
    const T* px = x.ptr<T>();
#pragma omp parallel for if (x.numel() > (int64_t{1} << 16))
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t i = 0; i < a.inner; ++i) y[o * a.inner + i] = arg_extreme_at<Max>(px, a, o, i, last);
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "ArgMax", DeviceKind::CPU, arg_extreme<true>);
CBT_REGISTER_KERNEL("", "ArgMin", DeviceKind::CPU, arg_extreme<false>);
CBT_REGISTER_KERNEL("", "GlobalMaxPool", DeviceKind::CPU, global_max_pool);
CBT_REGISTER_KERNEL(kCbtDomain, "GlobalMaxPoolGrad", DeviceKind::CPU, global_max_pool_grad);
CBT_REGISTER_KERNEL("", "ReduceMax", DeviceKind::CPU, reduce_extreme<true>);
CBT_REGISTER_KERNEL("", "ReduceMin", DeviceKind::CPU, reduce_extreme<false>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceMaxGrad", DeviceKind::CPU, reduce_extreme_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceMinGrad", DeviceKind::CPU, reduce_extreme_grad);
CBT_REGISTER_KERNEL("", "ReduceProd", DeviceKind::CPU, reduce_prod);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceProdGrad", DeviceKind::CPU, reduce_prod_grad);
CBT_REGISTER_KERNEL("", "ReduceSum", DeviceKind::CPU, reduce<false>);
CBT_REGISTER_KERNEL("", "ReduceMean", DeviceKind::CPU, reduce<true>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceSumGrad", DeviceKind::CPU, reduce_grad<false>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceMeanGrad", DeviceKind::CPU, reduce_grad<true>);

}  // namespace cbt::cpu
