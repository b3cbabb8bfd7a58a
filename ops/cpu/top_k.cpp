// TopK and TopKGrad CPU kernels (ops/top_k.h's rule).
#include "ops/top_k.h"

#include <vector>

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// X, K -> Values, Indices (axis, largest; always sorted); either output may be unwanted.
void top_k(KernelContext& ctx) {
  if (!ctx.has_out(0) && !ctx.has_out(1)) return;
  const Tensor& x = ctx.in(0);
  const int64_t axis = ctx.node.attrs.get_int("axis", -1);
  const AxisView a(x.shape(), axis);
  const int64_t k = (ctx.has_out(0) ? ctx.out(0) : ctx.out(1)).dim(static_cast<int>(axis));
  const bool largest = ctx.node.attrs.get_int("largest", 1) != 0;
  const auto n = static_cast<size_t>(a.outer * k * a.inner);
  std::vector<int64_t> own_indices(ctx.has_out(1) ? 0 : n);
  int64_t* indices = ctx.has_out(1) ? ctx.out(1).ptr<int64_t>() : own_indices.data();
  dispatch_arith(x.dtype(), [&]<class T>() {
    const T* px = x.ptr<T>();
    std::vector<T> own_values(ctx.has_out(0) ? 0 : n);
    T* values = ctx.has_out(0) ? ctx.out(0).ptr<T>() : own_values.data();
#pragma omp parallel for if (a.outer * a.inner * a.len * k > (int64_t{1} << 16))
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t i = 0; i < a.inner; ++i) top_k_line(px, values, indices, a, k, o, i, largest);
  });
}

// dValues, Indices, X -> dX (axis)
void top_k_grad(KernelContext& ctx) {
  const Tensor& dy = ctx.in(0);
  const AxisView a(ctx.in(2).shape(), ctx.node.attrs.get_int("axis", -1));
  const int64_t k = dy.numel() / (a.outer * a.inner);
  dispatch_arith(dy.dtype(), [&]<class T>() {
    const T* pdy = dy.ptr<T>();
    const int64_t* indices = ctx.in(1).ptr<int64_t>();
    T* dx = ctx.out(0).ptr<T>();
#pragma omp parallel for if (ctx.out(0).numel() > (int64_t{1} << 16))
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t i = 0; i < a.inner; ++i) top_k_grad_line(pdy, indices, dx, a, k, o, i);
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "TopK", DeviceKind::CPU, top_k);
CBT_REGISTER_KERNEL(kCbtDomain, "TopKGrad", DeviceKind::CPU, top_k_grad);

}  // namespace cbt::cpu
