// ScatterElements (and Scatter) and ScatterElementsGrad CPU kernels (ops/scatter_elements.h's
// rule).
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
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  dispatch_arith(data.dtype(), [&]<class T>() {
    T* y = ctx.out(0).ptr<T>();
    std::copy(data.ptr<T>(), data.ptr<T>() + data.numel(), y);
    dispatch_index(indices, [&]<class I>() {
      for (int64_t l = 0; l < v.lines; ++l) scatter_line(v, l, indices.ptr<I>(), updates.ptr<T>(), y, add);
    });
  });
}

// dY, indices -> dData, dUpdates (axis, reduction); either may be unwanted.
void scatter_elements_grad(KernelContext& ctx) {
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const ScatterView v(dy.shape(), indices.shape(), ctx.node.attrs.get_int("axis", 0));
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  dispatch_arith(dy.dtype(), [&]<class T>() {
    T* d_data = ctx.has_out(0) ? ctx.out(0).ptr<T>() : nullptr;
    T* d_updates = ctx.has_out(1) ? ctx.out(1).ptr<T>() : nullptr;
    if (d_data) std::copy(dy.ptr<T>(), dy.ptr<T>() + dy.numel(), d_data);
    dispatch_index(indices, [&]<class I>() {
      for (int64_t l = 0; l < v.lines; ++l)
        scatter_grad_line(v, l, indices.ptr<I>(), dy.ptr<T>(), d_data, d_updates, add);
    });
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "ScatterElements", DeviceKind::CPU, scatter_elements);
CBT_REGISTER_KERNEL("", "Scatter", DeviceKind::CPU, scatter_elements);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterElementsGrad", DeviceKind::CPU, scatter_elements_grad);

}  // namespace cbt::cpu
