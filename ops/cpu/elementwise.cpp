// CPU kernels of element-wise arithmetic, Cast, Clip and their backward ops.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "graph/composite_ops.h"
#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"
#include "ops/mod.h"

namespace cbt::cpu {
namespace {

template <class Op>
void binary_kernel(KernelContext& ctx, Op op) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  dispatch_arith(y.dtype(), [&]<class T>() {
    binary_broadcast(a.ptr<T>(), a.shape(), b.ptr<T>(), b.shape(), y.ptr<T>(), y.shape(),
                     [&](T u, T v) { return op(u, v); });
  });
}

// relu=1 (graph/fusion.h): max(a + b, 0), as a Relu after the Add computes it.
void add(KernelContext& ctx) {
  if (ctx.node.attrs.get_int("relu", 0)) {
    binary_kernel(ctx, [](auto u, auto v) {
      auto s = u + v;
      return s > 0 ? s : decltype(s)(0);
    });
  } else {
    binary_kernel(ctx, [](auto u, auto v) { return u + v; });
  }
}
void sub(KernelContext& ctx) {
  binary_kernel(ctx, [](auto u, auto v) { return u - v; });
}
void mul(KernelContext& ctx) {
  binary_kernel(ctx, [](auto u, auto v) { return u * v; });
}

// NaN wins, as numpy's maximum and minimum.
void max_kernel(KernelContext& ctx) {
  binary_kernel(ctx, [](auto u, auto v) { return u > v || u != u ? u : v; });
}
void min_kernel(KernelContext& ctx) {
  binary_kernel(ctx, [](auto u, auto v) { return u < v || u != u ? u : v; });
}
void prelu(KernelContext& ctx) {
  binary_kernel(ctx, [](auto x, auto slope) { return x < 0 ? slope * x : x; });
}

// Mod (ops/mod.h for integers; floats fmod 1).
void mod(KernelContext& ctx) {
  const bool fmod = ctx.node.attrs.get_int("fmod", 0) != 0;
  binary_kernel(ctx, [fmod](auto u, auto v) {
    if constexpr (std::is_integral_v<decltype(u)>)
      return integer_mod(u, v, fmod);
    else
      return std::fmod(u, v);
  });
}

void div(KernelContext& ctx) {
  const Tensor& b = ctx.in(1);
  if (!is_floating(b.dtype()))
    for (int64_t i = 0; i < b.numel(); ++i)
      if (b.at_i64(i) == 0) throw UserError("node " + ctx.node.describe() + ": integer division by zero");
  binary_kernel(ctx, [](auto u, auto v) { return u / v; });
}

// Values of an arithmetic tensor as T (Pow's exponent may be an integer tensor).
template <class T>
const T* as_type(const Tensor& t, std::vector<T>& buf) {
  if (t.dtype() == dtype_of<T>()) return t.ptr<T>();
  buf.resize(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) buf[i] = static_cast<T>(t.at_f64(i));
  return buf.data();
}

void pow(KernelContext& ctx) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  dispatch_float(y.dtype(), [&]<class T>() {
    std::vector<T> bb;
    const T* e = as_type<T>(b, bb);
    if (b.numel() == 1 && e[0] == T(2)) {  // the common square: avoid std::pow
      unary_map(a.ptr<T>(), y.ptr<T>(), y.numel(), [](T v) { return v * v; });
      return;
    }
    binary_broadcast(a.ptr<T>(), a.shape(), e, b.shape(), y.ptr<T>(), y.shape(),
                     [](T u, T v) { return std::pow(u, v); });
  });
}

void neg(KernelContext& ctx) {
  dispatch_arith(ctx.in(0).dtype(), [&]<class T>() {
    unary_map(ctx.in(0).ptr<T>(), ctx.out(0).ptr<T>(), ctx.in(0).numel(), [](T v) { return -v; });
  });
}

template <class Fn>
void float_unary(KernelContext& ctx, Fn fn) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    unary_map(ctx.in(0).ptr<T>(), ctx.out(0).ptr<T>(), ctx.in(0).numel(), [&](T v) { return static_cast<T>(fn(v)); });
  });
}

void sqrt_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::sqrt(v); });
}
void erf_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::erf(v); });
}
void exp_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::exp(v); });
}
void log_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::log(v); });
}
void abs_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::abs(v); });
}
void reciprocal(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return decltype(v)(1) / v; });
}
void sin_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::sin(v); });
}
void cos_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::cos(v); });
}
void tan_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::tan(v); });
}
void asin_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::asin(v); });
}
void acos_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::acos(v); });
}
void atan_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::atan(v); });
}
void sinh_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::sinh(v); });
}
void cosh_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::cosh(v); });
}
void asinh_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::asinh(v); });
}
void acosh_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::acosh(v); });
}
void atanh_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::atanh(v); });
}
void floor_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::floor(v); });
}
void ceil_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::ceil(v); });
}
// Halves to even: nearbyint in the default rounding mode.
void round_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return std::nearbyint(v); });
}
// 0 stays 0 (and NaN NaN).
void sign_kernel(KernelContext& ctx) {
  float_unary(ctx, [](auto v) { return v > 0 ? decltype(v)(1) : v < 0 ? decltype(v)(-1) : v; });
}

void identity(KernelContext& ctx) {
  if (ctx.in(0).nbytes()) std::memcpy(ctx.out(0).data(), ctx.in(0).data(), ctx.in(0).nbytes());
}

// Calls f.template operator()<T>() for every dtype Cast handles.
template <class F>
void dispatch_cast(DType t, F&& f) {
  switch (t) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::Int32:
      return f.template operator()<int32_t>();
    case DType::Int8:
      return f.template operator()<int8_t>();
    case DType::UInt8:
      return f.template operator()<uint8_t>();
    case DType::Bool:
      return f.template operator()<bool>();
    default:
      CBT_CHECK(false, "Cast of ", dtype_name(t));
  }
}

void cast(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  dispatch_cast(x.dtype(), [&]<class S>() {
    dispatch_cast(y.dtype(), [&]<class D>() {
      unary_map(x.ptr<S>(), y.ptr<D>(), x.numel(), [](S v) { return static_cast<D>(v); });
    });
  });
}

// Clip bounds: inputs since opset 11, attributes before; absent means unbounded.
template <class T>
std::pair<T, T> clip_bounds(const KernelContext& ctx) {
  T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  const Attributes& at = ctx.node.attrs;
  if (at.has("min")) lo = static_cast<T>(at.get_float("min", 0));
  if (at.has("max")) hi = static_cast<T>(at.get_float("max", 0));
  size_t first = ctx.node.op_type == "ClipGrad" ? 2 : 1;
  if (ctx.has_in(first)) lo = ctx.in(first).ptr<T>()[0];
  if (ctx.has_in(first + 1)) hi = ctx.in(first + 1).ptr<T>()[0];
  return {lo, hi};
}

void clip(KernelContext& ctx) {
  dispatch_arith(ctx.in(0).dtype(), [&]<class T>() {
    auto [lo, hi] = clip_bounds<T>(ctx);
    unary_map(ctx.in(0).ptr<T>(), ctx.out(0).ptr<T>(), ctx.in(0).numel(),
              [lo, hi](T v) { return v < lo ? lo : (v > hi ? hi : v); });
  });
}

void clip_grad(KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    auto [lo, hi] = clip_bounds<T>(ctx);
    binary_broadcast(ctx.in(0).ptr<T>(), ctx.in(0).shape(), ctx.in(1).ptr<T>(), ctx.in(1).shape(), ctx.out(0).ptr<T>(),
                     ctx.out(0).shape(), [lo, hi](T dy, T x) { return (x > lo && x < hi) ? dy : T(0); });
  });
}

void reduce_sum_to_kernel(KernelContext& ctx) {
  const double scale = ctx.node.attrs.get_float("scale", 1.0f);
  dispatch_arith(ctx.in(0).dtype(), [&]<class T>() {
    reduce_sum_to(ctx.in(0).ptr<T>(), ctx.in(0).shape(), ctx.out(0).ptr<T>(), ctx.out(0).shape(),
                  static_cast<T>(scale));
  });
}

// Sum and Mean: the first input broadcast to Y, each further one added in place; Mean then
// divides by the count.
template <bool Mean>
void variadic_sum(KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  dispatch_float(y.dtype(), [&]<class T>() {
    T* py = y.ptr<T>();
    broadcast_to(ctx.in(0).ptr<T>(), ctx.in(0).shape(), py, y.shape(), T(1));
    for (size_t k = 1; k < ctx.inputs.size(); ++k)
      binary_broadcast(py, y.shape(), ctx.in(k).ptr<T>(), ctx.in(k).shape(), py, y.shape(),
                       [](T a, T b) { return a + b; });
    if (Mean) {
      const T n = static_cast<T>(ctx.inputs.size());
      unary_map(py, py, y.numel(), [n](T v) { return v / n; });
    }
  });
}

// x broadcast to shape ys, materialised only when it is smaller.
template <class T>
const T* expanded(const T* x, const Shape& xs, const Shape& ys, std::vector<T>& buf) {
  if (shape_numel(xs) == shape_numel(ys)) return x;
  buf.resize(shape_numel(ys));
  broadcast_to(x, xs, buf.data(), ys, T(1));
  return buf.data();
}

// out = the values f(i) over the broadcast shape ys, summed back to out's shape.
template <class T, class F>
void write_reduced(Tensor& out, const Shape& ys, F f) {
  int64_t n = shape_numel(ys);
  std::vector<T> tmp;
  T* dst = out.ptr<T>();
  if (out.numel() != n) {
    tmp.resize(n);
    dst = tmp.data();
  }
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) dst[i] = f(i);
  if (!tmp.empty()) reduce_sum_to(tmp.data(), ys, out.ptr<T>(), out.shape(), T(1));
}

// dY: broadcast shape of A and B; outputs dA (A's shape), optional dB (B's shape).
template <class Da, class Db>
void pair_grad(KernelContext& ctx, Da da, Db db) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    const Tensor& dy_t = ctx.in(0);
    const Shape& ys = dy_t.shape();
    std::vector<T> ab, bb, bconv;
    const T* dy = dy_t.ptr<T>();
    const T* a = expanded(ctx.in(1).ptr<T>(), ctx.in(1).shape(), ys, ab);
    const T* b = expanded(as_type<T>(ctx.in(2), bconv), ctx.in(2).shape(), ys, bb);
    if (ctx.has_out(0)) write_reduced<T>(ctx.out(0), ys, [&](int64_t i) { return da(dy[i], a[i], b[i]); });
    if (ctx.has_out(1)) write_reduced<T>(ctx.out(1), ys, [&](int64_t i) { return db(dy[i], a[i], b[i]); });
  });
}

void div_grad(KernelContext& ctx) {
  pair_grad(
      ctx, [](auto dy, auto, auto b) { return dy / b; }, [](auto dy, auto a, auto b) { return -dy * a / (b * b); });
}

void pow_grad(KernelContext& ctx) {
  pair_grad(
      ctx, [](auto dy, auto a, auto b) { return dy * b * std::pow(a, b - 1); },
      [](auto dy, auto a, auto b) { return dy * std::pow(a, b) * std::log(a); });
}

// The larger (smaller) operand takes dY; a tie gives each half, as PyTorch's maximum does.
void max_grad(KernelContext& ctx) {
  pair_grad(
      ctx, [](auto dy, auto a, auto b) { return a > b    ? dy
                                                : a == b ? dy / 2
                                                         : decltype(dy)(0); },
      [](auto dy, auto a, auto b) { return b > a    ? dy
                                           : a == b ? dy / 2
                                                    : decltype(dy)(0); });
}
void min_grad(KernelContext& ctx) {
  pair_grad(
      ctx, [](auto dy, auto a, auto b) { return a < b    ? dy
                                                : a == b ? dy / 2
                                                         : decltype(dy)(0); },
      [](auto dy, auto a, auto b) { return b < a    ? dy
                                           : a == b ? dy / 2
                                                    : decltype(dy)(0); });
}
void prelu_grad(KernelContext& ctx) {
  pair_grad(
      ctx, [](auto dy, auto x, auto slope) { return x < 0 ? slope * dy : dy; },
      [](auto dy, auto x, auto) { return x < 0 ? x * dy : decltype(dy)(0); });
}

// (dY, saved) -> dX = fn(dY, saved), one shape.
template <class Fn>
void saved_grad(KernelContext& ctx, Fn fn) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    binary_broadcast(ctx.in(0).ptr<T>(), ctx.in(0).shape(), ctx.in(1).ptr<T>(), ctx.in(1).shape(), ctx.out(0).ptr<T>(),
                     ctx.out(0).shape(), [&](T dy, T s) { return static_cast<T>(fn(dy, s)); });
  });
}

void exp_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto y) { return dy * y; });
}
void log_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto x) { return dy / x; });
}
void abs_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto x) { return x > 0 ? dy : x < 0 ? -dy : decltype(dy)(0); });
}
void reciprocal_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto y) { return -dy * y * y; });
}
void sin_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto x) { return dy * std::cos(x); });
}
void cos_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto x) { return -dy * std::sin(x); });
}

void tan_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy * (T(1) + s * s);
  });
}
void asin_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy / std::sqrt(T(1) - s * s);
  });
}
void acos_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return -dy / std::sqrt(T(1) - s * s);
  });
}
void atan_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy / (T(1) + s * s);
  });
}
void sinh_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy * std::cosh(s);
  });
}
void cosh_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy * std::sinh(s);
  });
}
void asinh_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy / std::sqrt(s * s + T(1));
  });
}
void acosh_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy / std::sqrt(s * s - T(1));
  });
}
void atanh_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto s) {
    using T = decltype(s);
    return dy / (T(1) - s * s);
  });
}

void sqrt_grad(KernelContext& ctx) {
  const bool zero_at_zero = ctx.node.attrs.get_int(kZeroGradAtZero, 0) != 0;  // a norm's (composite_ops.h)
  saved_grad(ctx, [zero_at_zero](auto dy, auto y) {
    using T = decltype(y);
    return zero_at_zero && y == T(0) ? T(0) : dy / (T(2) * y);
  });
}
void erf_grad(KernelContext& ctx) {
  saved_grad(ctx, [](auto dy, auto x) {
    using T = decltype(x);
    return dy * static_cast<T>(2.0 / std::sqrt(M_PI)) * std::exp(-x * x);
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "Add", DeviceKind::CPU, add);
CBT_REGISTER_KERNEL("", "Sub", DeviceKind::CPU, sub);
CBT_REGISTER_KERNEL("", "Mul", DeviceKind::CPU, mul);
CBT_REGISTER_KERNEL("", "Div", DeviceKind::CPU, div);
CBT_REGISTER_KERNEL("", "Mod", DeviceKind::CPU, mod);
CBT_REGISTER_KERNEL("", "Pow", DeviceKind::CPU, pow);
CBT_REGISTER_KERNEL("", "Sum", DeviceKind::CPU, variadic_sum<false>);
CBT_REGISTER_KERNEL("", "Mean", DeviceKind::CPU, variadic_sum<true>);
CBT_REGISTER_KERNEL("", "Max", DeviceKind::CPU, max_kernel);
CBT_REGISTER_KERNEL("", "Min", DeviceKind::CPU, min_kernel);
CBT_REGISTER_KERNEL("", "PRelu", DeviceKind::CPU, prelu);
CBT_REGISTER_KERNEL("", "Neg", DeviceKind::CPU, neg);
CBT_REGISTER_KERNEL("", "Sqrt", DeviceKind::CPU, sqrt_kernel);
CBT_REGISTER_KERNEL("", "Erf", DeviceKind::CPU, erf_kernel);
CBT_REGISTER_KERNEL("", "Exp", DeviceKind::CPU, exp_kernel);
CBT_REGISTER_KERNEL("", "Log", DeviceKind::CPU, log_kernel);
CBT_REGISTER_KERNEL("", "Abs", DeviceKind::CPU, abs_kernel);
CBT_REGISTER_KERNEL("", "Reciprocal", DeviceKind::CPU, reciprocal);
CBT_REGISTER_KERNEL("", "Sin", DeviceKind::CPU, sin_kernel);
CBT_REGISTER_KERNEL("", "Cos", DeviceKind::CPU, cos_kernel);
CBT_REGISTER_KERNEL("", "Tan", DeviceKind::CPU, tan_kernel);
CBT_REGISTER_KERNEL("", "Asin", DeviceKind::CPU, asin_kernel);
CBT_REGISTER_KERNEL("", "Acos", DeviceKind::CPU, acos_kernel);
CBT_REGISTER_KERNEL("", "Atan", DeviceKind::CPU, atan_kernel);
CBT_REGISTER_KERNEL("", "Sinh", DeviceKind::CPU, sinh_kernel);
CBT_REGISTER_KERNEL("", "Cosh", DeviceKind::CPU, cosh_kernel);
CBT_REGISTER_KERNEL("", "Asinh", DeviceKind::CPU, asinh_kernel);
CBT_REGISTER_KERNEL("", "Acosh", DeviceKind::CPU, acosh_kernel);
CBT_REGISTER_KERNEL("", "Atanh", DeviceKind::CPU, atanh_kernel);
CBT_REGISTER_KERNEL("", "Floor", DeviceKind::CPU, floor_kernel);
CBT_REGISTER_KERNEL("", "Ceil", DeviceKind::CPU, ceil_kernel);
CBT_REGISTER_KERNEL("", "Round", DeviceKind::CPU, round_kernel);
CBT_REGISTER_KERNEL("", "Sign", DeviceKind::CPU, sign_kernel);
CBT_REGISTER_KERNEL("", "Identity", DeviceKind::CPU, identity);
CBT_REGISTER_KERNEL("", "Cast", DeviceKind::CPU, cast);
// The cast kernel converts to whatever type the output was given, so CastLike shares it.
CBT_REGISTER_KERNEL("", "CastLike", DeviceKind::CPU, cast);
CBT_REGISTER_KERNEL("", "Clip", DeviceKind::CPU, clip);
CBT_REGISTER_KERNEL(kCbtDomain, "ClipGrad", DeviceKind::CPU, clip_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceSumTo", DeviceKind::CPU, reduce_sum_to_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "DivGrad", DeviceKind::CPU, div_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "PowGrad", DeviceKind::CPU, pow_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "MaxGrad", DeviceKind::CPU, max_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "MinGrad", DeviceKind::CPU, min_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "PReluGrad", DeviceKind::CPU, prelu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SqrtGrad", DeviceKind::CPU, sqrt_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ErfGrad", DeviceKind::CPU, erf_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ExpGrad", DeviceKind::CPU, exp_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "LogGrad", DeviceKind::CPU, log_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AbsGrad", DeviceKind::CPU, abs_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ReciprocalGrad", DeviceKind::CPU, reciprocal_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SinGrad", DeviceKind::CPU, sin_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "CosGrad", DeviceKind::CPU, cos_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "TanGrad", DeviceKind::CPU, tan_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AsinGrad", DeviceKind::CPU, asin_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AcosGrad", DeviceKind::CPU, acos_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AtanGrad", DeviceKind::CPU, atan_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SinhGrad", DeviceKind::CPU, sinh_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "CoshGrad", DeviceKind::CPU, cosh_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AsinhGrad", DeviceKind::CPU, asinh_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AcoshGrad", DeviceKind::CPU, acosh_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AtanhGrad", DeviceKind::CPU, atanh_grad);

}  // namespace cbt::cpu
