// GatherND, ScatterND and their backward ops on the CPU (ops/scatter_nd.h's rule).
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
      nd_scatter_element(v, indices.ptr<int64_t>(), dy.ptr<T>(), dx.ptr<T>(), s, true);
  });
}

// data, indices, updates -> Y (reduction)
void scatter_nd(KernelContext& ctx) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const NdIndexView v(data.shape(), indices.shape(), 0);
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  dispatch_arith(data.dtype(), [&]<class T>() {
    T* y = ctx.out(0).ptr<T>();
    std::copy(data.ptr<T>(), data.ptr<T>() + data.numel(), y);
    for (int64_t s = 0; s < v.slice; ++s) nd_scatter_element(v, indices.ptr<int64_t>(), updates.ptr<T>(), y, s, add);
  });
}

// dY, indices -> dData (dY, 0 where "none" overwrote), dUpdates (dY at the tuples); either may
// be unwanted.
void scatter_nd_grad(KernelContext& ctx) {
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const NdIndexView v(dy.shape(), indices.shape(), 0);
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  const int64_t* idx = indices.ptr<int64_t>();
  dispatch_arith(dy.dtype(), [&]<class T>() {
    if (ctx.has_out(0)) {
      T* dd = ctx.out(0).ptr<T>();
      std::copy(dy.ptr<T>(), dy.ptr<T>() + dy.numel(), dd);
      for (int64_t m = 0; m < v.tuples && !add; ++m)
        if (const int64_t off = nd_offset(v, idx, m); off >= 0) std::fill(dd + off, dd + off + v.slice, T(0));
    }
    if (ctx.has_out(1)) {
      T* du = ctx.out(1).ptr<T>();
      for (int64_t e = 0; e < v.tuples * v.slice; ++e) du[e] = nd_gather_element(v, idx, dy.ptr<T>(), e);
    }
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "GatherND", DeviceKind::CPU, gather_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "GatherNDGrad", DeviceKind::CPU, gather_nd_grad);
CBT_REGISTER_KERNEL("", "ScatterND", DeviceKind::CPU, scatter_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterNDGrad", DeviceKind::CPU, scatter_nd_grad);

}  // namespace cbt::cpu
