// GatherND, ScatterND and their backward ops on the CPU (ops/scatter_nd.h's rule,
// ops/scatter_reduction.h's reductions).
#include <algorithm>

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"
#include "ops/scatter_nd.h"

namespace cbt::cpu {
namespace {

// data, indices -> Y (batch_dims)
void gather_nd(KernelContext& ctx) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1);
  const NdIndexView v(data.shape(), indices.shape(), ctx.node.attrs.get_int("batch_dims", 0));
  dispatch_arith(data.dtype(), [&]<class T>() {
    T* y = ctx.out(0).ptr<T>();
    for (int64_t e = 0; e < v.tuples * v.slice; ++e)
      y[e] = nd_gather_element(v, indices.ptr<int64_t>(), data.ptr<T>(), e);
  });
}

// dY, indices, data -> dData: zeros, dY added where the slices came from.
void gather_nd_grad(KernelContext& ctx) {
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  Tensor& dx = ctx.out(0);
  const NdIndexView v(dx.shape(), indices.shape(), ctx.node.attrs.get_int("batch_dims", 0));
  dispatch_arith(dy.dtype(), [&]<class T>() {
    std::fill(dx.ptr<T>(), dx.ptr<T>() + dx.numel(), T(0));
    for (int64_t s = 0; s < v.slice; ++s)
      nd_scatter_element(v, indices.ptr<int64_t>(), dy.ptr<T>(), dx.ptr<T>(), s, ScatterReduction::Add);
  });
}

// data, indices, updates -> Y (reduction)
void scatter_nd(KernelContext& ctx) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const NdIndexView v(data.shape(), indices.shape(), 0);
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  dispatch_arith(data.dtype(), [&]<class T>() {
    T* y = ctx.out(0).ptr<T>();
    std::copy(data.ptr<T>(), data.ptr<T>() + data.numel(), y);
    for (int64_t s = 0; s < v.slice; ++s) nd_scatter_element(v, indices.ptr<int64_t>(), updates.ptr<T>(), y, s, r);
  });
}

// data, indices, updates -> tally (2, data's elements): a, then b (reduction mul, max or min).
void scatter_nd_tally(KernelContext& ctx) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const NdIndexView v(data.shape(), indices.shape(), 0);
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  dispatch_arith(data.dtype(), [&]<class T>() {
    T *a = ctx.out(0).ptr<T>(), *b = a + data.numel();
    for (int64_t p = 0; p < data.numel(); ++p) tally_start(r, data.ptr<T>()[p], a[p], b[p]);
    for (int64_t s = 0; s < v.slice; ++s) nd_tally_element(v, indices.ptr<int64_t>(), updates.ptr<T>(), a, b, s, r);
  });
}

// dY, indices[, data, updates, tally] -> dData, dUpdates (reduction); either may be unwanted.
// None: dY, 0 where it overwrote, and dY at the tuples; add: dY twice; mul, max and min: from
// the tally.
void scatter_nd_grad(KernelContext& ctx) {
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const NdIndexView v(dy.shape(), indices.shape(), 0);
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  const int64_t* idx = indices.ptr<int64_t>();
  dispatch_arith(dy.dtype(), [&]<class T>() {
    const T* g = dy.ptr<T>();
    const T *x = nullptr, *u = nullptr, *a = nullptr, *b = nullptr;
    if (needs_tally(r)) x = ctx.in(2).ptr<T>(), u = ctx.in(3).ptr<T>(), a = ctx.in(4).ptr<T>(), b = a + dy.numel();
    if (ctx.has_out(0)) {
      T* dd = ctx.out(0).ptr<T>();
      if (needs_tally(r))
        for (int64_t p = 0; p < dy.numel(); ++p) dd[p] = tally_d_data(r, g[p], x[p], a[p], b[p]);
      else
        std::copy(g, g + dy.numel(), dd);
      for (int64_t m = 0; m < v.tuples && r == ScatterReduction::None; ++m)
        if (const int64_t off = nd_offset(v, idx, m); off >= 0) std::fill(dd + off, dd + off + v.slice, T(0));
    }
    if (ctx.has_out(1)) {
      T* du = ctx.out(1).ptr<T>();
      for (int64_t e = 0; e < v.tuples * v.slice; ++e)
        du[e] = needs_tally(r) ? nd_tally_d_update(v, idx, g, x, u, a, b, e, r) : nd_gather_element(v, idx, g, e);
    }
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "GatherND", DeviceKind::CPU, gather_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "GatherNDGrad", DeviceKind::CPU, gather_nd_grad);
CBT_REGISTER_KERNEL("", "ScatterND", DeviceKind::CPU, scatter_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterNDTally", DeviceKind::CPU, scatter_nd_tally);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterNDGrad", DeviceKind::CPU, scatter_nd_grad);

}  // namespace cbt::cpu
