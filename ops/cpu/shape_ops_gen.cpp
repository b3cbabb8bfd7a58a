// CPU kernels of Shape, Constant, ConstantOfShape, Range, Equal and Where.
#include <algorithm>

#include "ops/cpu/shape_ops_common.h"

namespace cbt {
namespace {
using namespace shape_ops;

// y: (end - start,) int64 dims of x
void shape_kernel(KernelContext& ctx) {
  const Shape& s = ctx.in(0).shape();
  int64_t r = static_cast<int64_t>(s.size());
  auto clamp_end = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t start = clamp_end(ctx.node.attrs.get_int("start", 0));
  Tensor& y = ctx.out(0);
  std::copy_n(s.begin() + start, y.numel(), y.ptr<int64_t>());
}

void constant_kernel(KernelContext& ctx) {
  const Attributes& a = ctx.node.attrs;
  Tensor& y = ctx.out(0);
  if (const Tensor* v = a.get_tensor("value")) {
    if (v->nbytes()) std::memcpy(y.data(), v->data(), v->nbytes());
  } else if (a.has("value_float")) {
    *y.ptr<float>() = a.get_float("value_float", 0);
  } else if (a.has("value_floats")) {
    auto v = a.get_floats("value_floats");
    std::copy(v.begin(), v.end(), y.ptr<float>());
  } else if (a.has("value_int")) {
    *y.ptr<int64_t>() = a.get_int("value_int", 0);
  } else {
    auto v = a.get_ints("value_ints");
    std::copy(v.begin(), v.end(), y.ptr<int64_t>());
  }
}

void constant_of_shape_kernel(KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  const Tensor* v = ctx.node.attrs.get_tensor("value");
  if (!v) {
    zero_fill(y);  // default: float32 zeros
    return;
  }
  size_t elem = dtype_size(y.dtype());
  auto* dst = static_cast<std::byte*>(y.data());
  for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(dst + i * elem, v->data(), elem);
}

// y[i] = start + i * delta
void range_kernel(KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  auto fill = [&]<class T>() {
    T start = *ctx.in(0).ptr<T>(), delta = *ctx.in(2).ptr<T>();
    T* p = y.ptr<T>();
    for (int64_t i = 0; i < y.numel(); ++i) p[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  };
  switch (y.dtype()) {
    case DType::Int64:
      fill.operator()<int64_t>();
      break;
    case DType::Int32:
      fill.operator()<int32_t>();
      break;
    default:
      dispatch_float(y.dtype(), fill);
  }
}

// Calls f.template operator()<T>() with T the C++ type of a comparable dtype.
template <class F>
void dispatch_value(DType t, F&& f) {
  switch (t) {
    case DType::Float32:
      f.template operator()<float>();
      return;
    case DType::Float64:
      f.template operator()<double>();
      return;
    case DType::Int64:
      f.template operator()<int64_t>();
      return;
    case DType::Int32:
      f.template operator()<int32_t>();
      return;
    case DType::Int8:
      f.template operator()<int8_t>();
      return;
    case DType::UInt8:
      f.template operator()<uint8_t>();
      return;
    case DType::Bool:
      f.template operator()<uint8_t>();
      return;
    default:
      throw ModelError(std::string("Equal on unsupported dtype ") + dtype_name(t));
  }
}

// y = (a == b) with broadcasting; bool stored as one byte
void equal_kernel(KernelContext& ctx) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  auto* out = static_cast<uint8_t*>(y.data());
  auto sa = broadcast_strides(a.shape(), y.shape()), sb = broadcast_strides(b.shape(), y.shape());
  dispatch_value(a.dtype(), [&]<class T>() {
    const T* pa = static_cast<const T*>(a.data());
    const T* pb = static_cast<const T*>(b.data());
    int64_t i = 0;
    for_each_strided(y.shape(), sa, sb, [&](int64_t oa, int64_t ob) { out[i++] = pa[oa] == pb[ob] ? 1 : 0; });
  });
}

// y = cond ? x : y with broadcasting of all three
void where_kernel(KernelContext& ctx) {
  const Tensor &c = ctx.in(0), &x = ctx.in(1), &z = ctx.in(2);
  Tensor& y = ctx.out(0);
  const Shape& s = y.shape();
  // Copy Y everywhere, then X where the condition holds: two strided passes, any dtype.
  size_t elem = dtype_size(y.dtype());
  strided_copy(y.data(), strides_of(s), z.data(), broadcast_strides(z.shape(), s), s, elem);
  const auto* cond = static_cast<const uint8_t*>(c.data());
  const auto* px = static_cast<const std::byte*>(x.data());
  auto* py = static_cast<std::byte*>(y.data());
  auto sc = broadcast_strides(c.shape(), s), sx = broadcast_strides(x.shape(), s);
  with_elem_size(elem, [&]<size_t E>() {
    int64_t i = 0;
    for_each_strided(s, sc, sx, [&](int64_t oc, int64_t ox) {
      const int64_t e = static_cast<int64_t>(E);
      if (cond[oc]) std::memcpy(py + i * e, px + ox * e, E);
      ++i;
    });
  });
}

// cond: broadcast to dY; dX, dZ: the shapes of X and Y, summed over their broadcast axes
void where_grad_kernel(KernelContext& ctx) {
  const Tensor &c = ctx.in(0), &dY = ctx.in(1);
  const Shape& s = dY.shape();
  const auto* cond = static_cast<const uint8_t*>(c.data());
  auto sc = broadcast_strides(c.shape(), s);
  dispatch_float(dY.dtype(), [&]<class T>() {
    const T* dy = dY.ptr<T>();
    // Output k takes dY where the condition equals `when`.
    auto route = [&](size_t k, bool when) {
      if (!ctx.has_out(k)) return;
      Tensor& d = ctx.out(k);
      zero_fill(d);
      T* dd = d.ptr<T>();
      int64_t i = 0;
      for_each_strided(s, sc, broadcast_strides(d.shape(), s), [&](int64_t oc, int64_t od) {
        if ((cond[oc] != 0) == when) dd[od] += dy[i];
        ++i;
      });
    };
    route(0, true);
    route(1, false);
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "Shape", DeviceKind::CPU, shape_kernel);
CBT_REGISTER_KERNEL("", "Constant", DeviceKind::CPU, constant_kernel);
CBT_REGISTER_KERNEL("", "ConstantOfShape", DeviceKind::CPU, constant_of_shape_kernel);
CBT_REGISTER_KERNEL("", "Range", DeviceKind::CPU, range_kernel);
CBT_REGISTER_KERNEL("", "Equal", DeviceKind::CPU, equal_kernel);
CBT_REGISTER_KERNEL("", "Where", DeviceKind::CPU, where_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "WhereGrad", DeviceKind::CPU, where_grad_kernel);

}  // namespace cbt
