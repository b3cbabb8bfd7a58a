// CPU kernels of Greater, Less, GreaterOrEqual, LessOrEqual, Not, And, Or, Xor, IsNaN and IsInf
// (ops/float_class.h); bool is one byte, 0 or 1.
#include <cstdint>
#include <functional>

#include "ops/cpu/shape_ops_common.h"
#include "ops/float_class.h"
#include "ops/number_dispatch.h"

namespace cbt {
namespace {
using namespace shape_ops;

// y = cmp(a, b) with broadcasting, over values of type T.
template <class T, class Cmp>
void compare_as(const Tensor& a, const Tensor& b, Tensor& y, Cmp cmp) {
  auto* out = static_cast<uint8_t*>(y.data());
  const T* pa = static_cast<const T*>(a.data());
  const T* pb = static_cast<const T*>(b.data());
  int64_t i = 0;
  for_each_strided(y.shape(), broadcast_strides(a.shape(), y.shape()), broadcast_strides(b.shape(), y.shape()),
                   [&](int64_t oa, int64_t ob) { out[i++] = cmp(pa[oa], pb[ob]) ? 1 : 0; });
}

template <class Cmp>
void comparison(KernelContext& ctx) {
  dispatch_number(ctx.in(0).dtype(), [&]<class T>() { compare_as<T>(ctx.in(0), ctx.in(1), ctx.out(0), Cmp{}); });
}

// Bools are compared as 0/1 bytes.
template <class Op>
void logical(KernelContext& ctx) {
  compare_as<uint8_t>(ctx.in(0), ctx.in(1), ctx.out(0), [](uint8_t u, uint8_t v) { return Op{}(u != 0, v != 0); });
}

void not_kernel(KernelContext& ctx) {
  const auto* x = static_cast<const uint8_t*>(ctx.in(0).data());
  auto* y = static_cast<uint8_t*>(ctx.out(0).data());
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) y[i] = x[i] ? 0 : 1;
}

// IsNaN (Nan) or IsInf: X (float) -> bool.
template <bool Nan>
void float_class(KernelContext& ctx) {
  const bool negative = ctx.node.attrs.get_int("detect_negative", 1) != 0;
  const bool positive = ctx.node.attrs.get_int("detect_positive", 1) != 0;
  auto* y = static_cast<uint8_t*>(ctx.out(0).data());
  auto run = [&]<class T>() {
    const T* x = ctx.in(0).ptr<T>();
    for (int64_t i = 0; i < ctx.in(0).numel(); ++i)
      y[i] = (Nan ? is_nan_value(x[i]) : is_inf_value(x[i], negative, positive)) ? 1 : 0;
  };
  if (ctx.in(0).dtype() == DType::Float64)
    run.template operator()<double>();
  else
    run.template operator()<float>();
}

}  // namespace

CBT_REGISTER_KERNEL("", "Greater", DeviceKind::CPU, comparison<std::greater<>>);
CBT_REGISTER_KERNEL("", "Less", DeviceKind::CPU, comparison<std::less<>>);
CBT_REGISTER_KERNEL("", "GreaterOrEqual", DeviceKind::CPU, comparison<std::greater_equal<>>);
CBT_REGISTER_KERNEL("", "LessOrEqual", DeviceKind::CPU, comparison<std::less_equal<>>);
CBT_REGISTER_KERNEL("", "Not", DeviceKind::CPU, not_kernel);
CBT_REGISTER_KERNEL("", "And", DeviceKind::CPU, logical<std::logical_and<>>);
CBT_REGISTER_KERNEL("", "Or", DeviceKind::CPU, logical<std::logical_or<>>);
CBT_REGISTER_KERNEL("", "Xor", DeviceKind::CPU, logical<std::not_equal_to<>>);
CBT_REGISTER_KERNEL("", "IsNaN", DeviceKind::CPU, float_class<true>);
CBT_REGISTER_KERNEL("", "IsInf", DeviceKind::CPU, float_class<false>);

}  // namespace cbt
