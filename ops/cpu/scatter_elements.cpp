// ScatterElements (and Scatter), ScatterElementsTally and ScatterElementsGrad CPU kernels
// (ops/scatter_elements.h's rule, ops/scatter_reduction.h's reductions).
#include "ops/scatter_elements.h"

#include <algorithm>

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// data, indices, updates -> Y (axis, reduction)
void scatter_elements(KernelContext& ctx) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const ScatterView v(data.shape(), updates.shape(), ctx.node.attrs.get_int("axis", 0));
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  dispatch_arith(data.dtype(), [&]<class T>() {
    T* y = ctx.out(0).ptr<T>();
    std::copy(data.ptr<T>(), data.ptr<T>() + data.numel(), y);
    dispatch_index(indices, [&]<class I>() {
      for (int64_t l = 0; l < v.lines; ++l) scatter_line(v, l, indices.ptr<I>(), updates.ptr<T>(), y, r);
    });
  });
}

// data, indices, updates -> tally (2, data's elements): a, then b (axis, reduction mul, max or
// min).
void scatter_elements_tally(KernelContext& ctx) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const ScatterView v(data.shape(), updates.shape(), ctx.node.attrs.get_int("axis", 0));
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  dispatch_arith(data.dtype(), [&]<class T>() {
    T *a = ctx.out(0).ptr<T>(), *b = a + data.numel();
    for (int64_t p = 0; p < data.numel(); ++p) tally_start(r, data.ptr<T>()[p], a[p], b[p]);
    dispatch_index(indices, [&]<class I>() {
      for (int64_t l = 0; l < v.lines; ++l) scatter_tally_line(v, l, indices.ptr<I>(), updates.ptr<T>(), a, b, r);
    });
  });
}

// dY, indices[, data, updates, tally] -> dData, dUpdates (axis, reduction); either may be
// unwanted. None and add read dY at the targets; mul, max and min also the tally.
void scatter_elements_grad(KernelContext& ctx) {
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const ScatterView v(dy.shape(), indices.shape(), ctx.node.attrs.get_int("axis", 0));
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  dispatch_arith(dy.dtype(), [&]<class T>() {
    T* d_data = ctx.has_out(0) ? ctx.out(0).ptr<T>() : nullptr;
    T* d_updates = ctx.has_out(1) ? ctx.out(1).ptr<T>() : nullptr;
    if (!needs_tally(r)) {
      if (d_data) std::copy(dy.ptr<T>(), dy.ptr<T>() + dy.numel(), d_data);
      dispatch_index(indices, [&]<class I>() {
        for (int64_t l = 0; l < v.lines; ++l)
          scatter_grad_line(v, l, indices.ptr<I>(), dy.ptr<T>(), d_data, d_updates, r);
      });
      return;
    }
    const T *g = dy.ptr<T>(), *x = ctx.in(2).ptr<T>(), *u = ctx.in(3).ptr<T>();
    const T *a = ctx.in(4).ptr<T>(), *b = a + dy.numel();
    if (d_data)
      for (int64_t p = 0; p < dy.numel(); ++p) d_data[p] = tally_d_data(r, g[p], x[p], a[p], b[p]);
    if (d_updates)
      dispatch_index(indices, [&]<class I>() {
        for (int64_t at = 0; at < indices.numel(); ++at) {
          const int64_t t = scatter_update_target(v, indices.ptr<I>(), at);
          d_updates[at] = t >= 0 ? tally_d_update(r, g[t], x[t], u[at], a[t], b[t]) : T(0);
        }
      });
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "ScatterElements", DeviceKind::CPU, scatter_elements);
CBT_REGISTER_KERNEL("", "Scatter", DeviceKind::CPU, scatter_elements);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterElementsTally", DeviceKind::CPU, scatter_elements_tally);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterElementsGrad", DeviceKind::CPU, scatter_elements_grad);

}  // namespace cbt::cpu
