// CPU kernels of ReduceSum/ReduceMean and their backward ops (broadcast back).
#include "ops/cpu/broadcast.h"
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

}  // namespace

CBT_REGISTER_KERNEL("", "ReduceSum", DeviceKind::CPU, reduce<false>);
CBT_REGISTER_KERNEL("", "ReduceMean", DeviceKind::CPU, reduce<true>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceSumGrad", DeviceKind::CPU, reduce_grad<false>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceMeanGrad", DeviceKind::CPU, reduce_grad<true>);

}  // namespace cbt::cpu
