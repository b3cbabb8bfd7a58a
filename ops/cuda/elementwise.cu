// CUDA kernels of element-wise arithmetic, Cast, Clip and their backward ops; the CPU kernels
// in ops/cpu/elementwise.cpp are the specification.
#include <cmath>
#include <limits>
#include <type_traits>

#include "graph/composite_ops.h"
#include "ops/cuda/broadcast.cuh"
#include "ops/mod.h"

namespace cbt::cuda::ew {
namespace {

struct AddOp {
  template <class T>
  __device__ T operator()(T u, T v) const {
    return u + v;
  }
};
// relu=1 (graph/fusion.h): max(a + b, 0), as a Relu after the Add computes it.
struct AddReluOp {
  template <class T>
  __device__ T operator()(T u, T v) const {
    T s = u + v;
    return s > 0 ? s : T(0);
  }
};
struct SubOp {
  template <class T>
  __device__ T operator()(T u, T v) const {
    return u - v;
  }
};
struct MulOp {
  template <class T>
  __device__ T operator()(T u, T v) const {
    return u * v;
  }
};
// NaN wins, as on the CPU (numpy's maximum and minimum).
struct MaximumOp {
  template <class T>
  __device__ T operator()(T u, T v) const {
    return u > v || u != u ? u : v;
  }
};
struct MinimumOp {
  template <class T>
  __device__ T operator()(T u, T v) const {
    return u < v || u != u ? u : v;
  }
};
struct PReluOp {
  template <class T>
  __device__ T operator()(T x, T slope) const {
    return x < 0 ? slope * x : x;
  }
};
// The CPU reports integer division by zero; a kernel cannot, and the GPU's quotient is
// undefined, so it is 0 here.
struct DivOp {
  template <class T>
  __device__ T operator()(T u, T v) const {
    if constexpr (std::is_integral_v<T>)
      return v == 0 ? T(0) : u / v;
    else
      return u / v;
  }
};

// Mod (ops/mod.h for integers; floats fmod 1).
struct ModOp {
  bool fmod;
  template <class T>
  __device__ T operator()(T u, T v) const {
    if constexpr (std::is_integral_v<T>)
      return integer_mod(u, v, fmod);
    else
      return ::fmod(u, v);
  }
};

// An exponent of any arithmetic type as float, converted through double as the CPU does.
template <class E>
__device__ inline float as_f32(E e) {
  return static_cast<float>(static_cast<double>(e));
}

// 2 squares exactly, as the CPU's fast path for a scalar exponent of 2 does.
struct PowOp {
  template <class E>
  __device__ float operator()(float u, E e) const {
    float v = as_f32(e);
    return v == 2.0f ? u * u : powf(u, v);
  }
};

struct NegOp {
  template <class T>
  __device__ T operator()(T v) const {
    return -v;
  }
};
struct SqrtOp {
  __device__ float operator()(float v) const { return sqrtf(v); }
};
struct ErfOp {
  __device__ float operator()(float v) const { return erff(v); }
};
struct ExpOp {
  __device__ float operator()(float v) const { return expf(v); }
};
struct LogOp {
  __device__ float operator()(float v) const { return logf(v); }
};
struct AbsOp {
  __device__ float operator()(float v) const { return fabsf(v); }
};
struct ReciprocalOp {
  __device__ float operator()(float v) const { return 1.0f / v; }
};
struct SinOp {
  __device__ float operator()(float v) const { return sinf(v); }
};
struct CosOp {
  __device__ float operator()(float v) const { return cosf(v); }
};
struct TanOp {
  __device__ float operator()(float v) const { return tanf(v); }
};
struct AsinOp {
  __device__ float operator()(float v) const { return asinf(v); }
};
struct AcosOp {
  __device__ float operator()(float v) const { return acosf(v); }
};
struct AtanOp {
  __device__ float operator()(float v) const { return atanf(v); }
};
struct SinhOp {
  __device__ float operator()(float v) const { return sinhf(v); }
};
struct CoshOp {
  __device__ float operator()(float v) const { return coshf(v); }
};
struct AsinhOp {
  __device__ float operator()(float v) const { return asinhf(v); }
};
struct AcoshOp {
  __device__ float operator()(float v) const { return acoshf(v); }
};
struct AtanhOp {
  __device__ float operator()(float v) const { return atanhf(v); }
};
struct FloorOp {
  __device__ float operator()(float v) const { return floorf(v); }
};
struct CeilOp {
  __device__ float operator()(float v) const { return ceilf(v); }
};
struct RoundOp {  // halves to even, as the CPU's nearbyint
  __device__ float operator()(float v) const { return rintf(v); }
};
struct SignOp {
  __device__ float operator()(float v) const { return v > 0 ? 1.0f : v < 0 ? -1.0f : v; }
};

template <class D>
struct CastOp {
  template <class S>
  __device__ D operator()(S v) const {
    return static_cast<D>(v);
  }
};

template <class Op>
void binary(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  dispatch_arith(ctx, y.dtype(), [&]<class T>() {
    binary_map(cc.stream, a.ptr<T>(), a.shape(), b.ptr<T>(), b.shape(), y.ptr<T>(), y.shape(), Op{});
  });
}

void mod(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  const ModOp op{ctx.node.attrs.get_int("fmod", 0) != 0};
  dispatch_arith(ctx, y.dtype(), [&]<class T>() {
    binary_map(cc.stream, a.ptr<T>(), a.shape(), b.ptr<T>(), b.shape(), y.ptr<T>(), y.shape(), op);
  });
}

// --precision bf16's residual Add: a + b (relu=1: then max(that, 0)) of two bfloat16 tensors,
// in float and rounded once. Element-wise, so whatever order both are stored in.
struct Bf16AddOp {
  bool relu;
  __device__ float operator()(float u, float v, float) const {
    float s = u + v;
    return relu && !(s > 0) ? 0.0f : s;
  }
};

void add_bf16(KernelContext& ctx) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  CBT_CHECK(a.dtype() == DType::BFloat16 && b.dtype() == DType::BFloat16 && y.dtype() == DType::BFloat16, "node ",
            ctx.node.describe(),
            ": the CUDA Add adds bfloat16 only to bfloat16 (the residual Add of --precision bf16), got ",
            dtype_name(a.dtype()), " + ", dtype_name(b.dtype()), " -> ", dtype_name(y.dtype()));
  // Both operands of a residual Add are activations of one layout: element i of each is the same element.
  CBT_CHECK(a.shape() == b.shape() && y.shape() == a.shape(), "node ", ctx.node.describe(),
            ": a bfloat16 Add takes operands of one shape (no broadcasting: they may be stored channels-last), got ",
            shape_str(a.shape()), " + ", shape_str(b.shape()));
  bf16_map(context_of(ctx.device_ctx).stream, a.data(), b.data(), nullptr, y.data(), y.numel(),
           Bf16AddOp{ctx.node.attrs.get_int("relu", 0) != 0});
}

void add(KernelContext& ctx) {
  if (ctx.in(0).dtype() == DType::BFloat16 || ctx.in(1).dtype() == DType::BFloat16) return add_bf16(ctx);
  if (ctx.node.attrs.get_int("relu", 0))
    binary<AddReluOp>(ctx);
  else
    binary<AddOp>(ctx);
}

// a: float; b: float or integer exponent; y: broadcast shape.
void pow_kernel(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  require_f32(ctx, a);
  dispatch_arith(ctx, b.dtype(), [&]<class E>() {
    binary_map(cc.stream, a.ptr<float>(), a.shape(), b.ptr<E>(), b.shape(), y.ptr<float>(), y.shape(), PowOp{});
  });
}

void neg(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  dispatch_arith(ctx, ctx.in(0).dtype(), [&]<class T>() {
    unary_map(cc.stream, ctx.in(0).ptr<T>(), ctx.out(0).ptr<T>(), ctx.in(0).numel(), NegOp{});
  });
}

template <class Op>
void float_unary(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  unary_map(cc.stream, ctx.in(0).ptr<float>(), ctx.out(0).ptr<float>(), ctx.in(0).numel(), Op{});
}

void copy_tensor(const CudaContext& cc, const Tensor& x, Tensor& y) {
  if (x.nbytes() && x.data() != y.data())
    CBT_CUDA_CHECK(cudaMemcpyAsync(y.data(), x.data(), x.nbytes(), cudaMemcpyDeviceToDevice, cc.stream));
}

void identity(KernelContext& ctx) { copy_tensor(context_of(ctx.device_ctx), ctx.in(0), ctx.out(0)); }

// Calls f.template operator()<T>() for every dtype Cast handles on the GPU.
template <class F>
void dispatch_cast(const KernelContext& ctx, DType t, F&& f) {
  switch (t) {
    case DType::Float32:
      return f.template operator()<float>();
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
      unsupported_dtype(ctx, t);
  }
}

// Converts to the output's type, so CastLike shares it.
void cast(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (x.dtype() == y.dtype()) return copy_tensor(cc, x, y);
  dispatch_cast(ctx, x.dtype(), [&]<class S>() {
    dispatch_cast(ctx, y.dtype(),
                  [&]<class D>() { unary_map(cc.stream, x.ptr<S>(), y.ptr<D>(), x.numel(), CastOp<D>{}); });
  });
}

// Clip bounds: attributes before opset 11, scalar inputs after (device tensors, read by the
// kernel so the stream never waits); absent means unbounded.
template <class T>
struct ClipBounds {
  const T* lo_p = nullptr;
  const T* hi_p = nullptr;
  T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  __device__ T low() const { return lo_p ? *lo_p : lo; }
  __device__ T high() const { return hi_p ? *hi_p : hi; }
};

template <class T>
ClipBounds<T> clip_bounds(const KernelContext& ctx) {
  ClipBounds<T> b;
  const Attributes& at = ctx.node.attrs;
  if (at.has("min")) b.lo = static_cast<T>(at.get_float("min", 0));
  if (at.has("max")) b.hi = static_cast<T>(at.get_float("max", 0));
  size_t first = ctx.node.op_type == "ClipGrad" ? 2 : 1;
  auto take = [&](size_t i, const T*& p, T& v) {
    if (!ctx.has_in(i)) return;
    if (ctx.in(i).device().is_cpu())
      v = ctx.in(i).ptr<T>()[0];
    else
      p = ctx.in(i).ptr<T>();
  };
  take(first, b.lo_p, b.lo);
  take(first + 1, b.hi_p, b.hi);
  return b;
}

template <class T>
struct ClipOp {
  ClipBounds<T> b;
  __device__ T operator()(T v) const {
    T lo = b.low(), hi = b.high();
    return v < lo ? lo : (v > hi ? hi : v);
  }
};

template <class T>
struct ClipGradOp {
  ClipBounds<T> b;
  __device__ T operator()(T dy, T x) const { return (x > b.low() && x < b.high()) ? dy : T(0); }
};

void clip(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  dispatch_arith(ctx, ctx.in(0).dtype(), [&]<class T>() {
    unary_map(cc.stream, ctx.in(0).ptr<T>(), ctx.out(0).ptr<T>(), ctx.in(0).numel(), ClipOp<T>{clip_bounds<T>(ctx)});
  });
}

// dY, X, dX: same shape.
void clip_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  binary_map(cc.stream, ctx.in(0).ptr<float>(), ctx.in(0).shape(), ctx.in(1).ptr<float>(), ctx.in(1).shape(),
             ctx.out(0).ptr<float>(), ctx.out(0).shape(), ClipGradOp<float>{clip_bounds<float>(ctx)});
}

void reduce_sum_to_kernel(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  Scratch ws(cc);
  const double scale = ctx.node.attrs.get_float("scale", 1.0f);
  dispatch_arith(ctx, ctx.in(0).dtype(), [&]<class T>() {
    sum_to(cc.stream, ws, ctx.in(0).ptr<T>(), ctx.in(0).shape(), ctx.out(0).ptr<T>(), ctx.out(0).shape(),
           static_cast<T>(scale));
  });
}

struct FirstOp {
  __device__ float operator()(float a, float) const { return a; }
};
struct DivideByOp {
  float n;
  __device__ float operator()(float a, float) const { return a / n; }
};

// Sum and Mean, as on the CPU: the first input broadcast to Y, each further one added in
// place; Mean then divides by the count.
template <bool Mean>
void variadic_sum(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  Tensor& y = ctx.out(0);
  for (const Tensor& t : ctx.inputs) require_f32(ctx, t);
  float* py = y.ptr<float>();
  const Shape& ys = y.shape();
  binary_map(cc.stream, ctx.in(0).ptr<float>(), ctx.in(0).shape(), ctx.in(0).ptr<float>(), ctx.in(0).shape(), py, ys,
             FirstOp{});
  for (size_t k = 1; k < ctx.inputs.size(); ++k)
    binary_map(cc.stream, static_cast<const float*>(py), ys, ctx.in(k).ptr<float>(), ctx.in(k).shape(), py, ys,
               AddOp{});
  if (Mean)
    binary_map(cc.stream, static_cast<const float*>(py), ys, static_cast<const float*>(py), ys, py, ys,
               DivideByOp{static_cast<float>(ctx.inputs.size())});
}

struct DivGradOp {
  __device__ float da(float dy, float, float b) const { return dy / b; }
  __device__ float db(float dy, float a, float b) const { return -dy * a / (b * b); }
};
struct PowGradOp {
  __device__ float da(float dy, float a, float b) const { return dy * b * powf(a, b - 1); }
  __device__ float db(float dy, float a, float b) const { return dy * powf(a, b) * logf(a); }
};
// A tie gives each operand half of dY, as on the CPU.
struct MaxGradOp {
  __device__ float da(float dy, float a, float b) const { return a > b ? dy : a == b ? 0.5f * dy : 0.0f; }
  __device__ float db(float dy, float a, float b) const { return b > a ? dy : a == b ? 0.5f * dy : 0.0f; }
};
struct MinGradOp {
  __device__ float da(float dy, float a, float b) const { return a < b ? dy : a == b ? 0.5f * dy : 0.0f; }
  __device__ float db(float dy, float a, float b) const { return b < a ? dy : a == b ? 0.5f * dy : 0.0f; }
};
struct PReluGradOp {
  __device__ float da(float dy, float x, float slope) const { return x < 0 ? slope * dy : dy; }
  __device__ float db(float dy, float x, float) const { return x < 0 ? x * dy : 0.0f; }
};

// dy: (broadcast shape), contiguous; a, b read at their broadcast offsets; da, db (either may
// be null): the gradients over the broadcast shape.
template <class E, class F>
__global__ void pair_grad_kernel(const float* dy, const float* a, const E* b, float* da, float* db, int64_t n,
                                 const __grid_constant__ Layout l, F f) {
  grid_stride(n, [&](auto i) {
    int64_t off[2];
    plan_offsets<2>(l, i, off);
    float av = a[off[0]], bv = as_f32(b[off[1]]);
    if (da) da[i] = f.da(dy[i], av, bv);
    if (db) db[i] = f.db(dy[i], av, bv);
  });
}

// (dY, A, B) -> (dA, optional dB). Each gradient is formed over dY's shape, straight into its
// output when that has as many elements, else into a temporary that is summed back.
template <class F>
void pair_grad(KernelContext& ctx, F f) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &a = ctx.in(1), &b = ctx.in(2);
  require_f32(ctx, dy);
  require_f32(ctx, a);
  const Shape& ys = dy.shape();
  int64_t n = dy.numel();
  Scratch ws(cc);
  float* full[2] = {nullptr, nullptr};
  for (size_t k = 0; k < 2; ++k) {
    if (!ctx.has_out(k)) continue;
    Tensor& o = ctx.out(k);
    require_f32(ctx, o);
    full[k] = o.numel() == n ? o.ptr<float>() : ws.take<float>(n, "a broadcast gradient");
  }
  if (n > 0 && (full[0] || full[1])) {
    dispatch_arith(ctx, b.dtype(), [&]<class E>() {
      pair_grad_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(dy.ptr<float>(), a.ptr<float>(), b.ptr<E>(), full[0],
                                                                  full[1], n, make_layout(ys, {&a.shape(), &b.shape()}),
                                                                  f);
      CBT_CUDA_CHECK_LAUNCH();
    });
  }
  for (size_t k = 0; k < 2; ++k)
    if (full[k] && ctx.out(k).numel() != n)
      sum_to(cc.stream, ws, full[k], ys, ctx.out(k).ptr<float>(), ctx.out(k).shape(), 1.0f);
}

void div_grad(KernelContext& ctx) { pair_grad(ctx, DivGradOp{}); }
void pow_grad(KernelContext& ctx) { pair_grad(ctx, PowGradOp{}); }
void max_grad(KernelContext& ctx) { pair_grad(ctx, MaxGradOp{}); }
void min_grad(KernelContext& ctx) { pair_grad(ctx, MinGradOp{}); }
void prelu_grad(KernelContext& ctx) { pair_grad(ctx, PReluGradOp{}); }

struct SqrtGradOp {
  bool zero_at_zero;  // a norm's (composite_ops.h): dX is 0 where Y is
  __device__ float operator()(float dy, float y) const { return zero_at_zero && y == 0.0f ? 0.0f : dy / (2.0f * y); }
};
struct ErfGradOp {
  float k;
  __device__ float operator()(float dy, float x) const { return dy * k * expf(-x * x); }
};
struct ExpGradOp {
  __device__ float operator()(float dy, float y) const { return dy * y; }
};
struct LogGradOp {
  __device__ float operator()(float dy, float x) const { return dy / x; }
};
struct AbsGradOp {
  __device__ float operator()(float dy, float x) const { return x > 0 ? dy : x < 0 ? -dy : 0.0f; }
};
struct ReciprocalGradOp {
  __device__ float operator()(float dy, float y) const { return -dy * y * y; }
};
struct SinGradOp {
  __device__ float operator()(float dy, float x) const { return dy * cosf(x); }
};
struct TanGradOp {
  __device__ float operator()(float dy, float s) const { return dy * (1.0f + s * s); }
};
struct AsinGradOp {
  __device__ float operator()(float dy, float s) const { return dy / sqrtf(1.0f - s * s); }
};
struct AcosGradOp {
  __device__ float operator()(float dy, float s) const { return -dy / sqrtf(1.0f - s * s); }
};
struct AtanGradOp {
  __device__ float operator()(float dy, float s) const { return dy / (1.0f + s * s); }
};
struct SinhGradOp {
  __device__ float operator()(float dy, float s) const { return dy * coshf(s); }
};
struct CoshGradOp {
  __device__ float operator()(float dy, float s) const { return dy * sinhf(s); }
};
struct AsinhGradOp {
  __device__ float operator()(float dy, float s) const { return dy / sqrtf(s * s + 1.0f); }
};
struct AcoshGradOp {
  __device__ float operator()(float dy, float s) const { return dy / sqrtf(s * s - 1.0f); }
};
struct AtanhGradOp {
  __device__ float operator()(float dy, float s) const { return dy / (1.0f - s * s); }
};
struct CosGradOp {
  __device__ float operator()(float dy, float x) const { return -dy * sinf(x); }
};

// dY and the saved tensor have one shape (the schema checks it).
template <class Op>
void unary_grad(KernelContext& ctx, Op op) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  binary_map(cc.stream, ctx.in(0).ptr<float>(), ctx.in(0).shape(), ctx.in(1).ptr<float>(), ctx.in(1).shape(),
             ctx.out(0).ptr<float>(), ctx.out(0).shape(), op);
}

void sqrt_grad(KernelContext& ctx) { unary_grad(ctx, SqrtGradOp{ctx.node.attrs.get_int(kZeroGradAtZero, 0) != 0}); }
void erf_grad(KernelContext& ctx) { unary_grad(ctx, ErfGradOp{static_cast<float>(2.0 / std::sqrt(M_PI))}); }
void exp_grad(KernelContext& ctx) { unary_grad(ctx, ExpGradOp{}); }
void log_grad(KernelContext& ctx) { unary_grad(ctx, LogGradOp{}); }
void abs_grad(KernelContext& ctx) { unary_grad(ctx, AbsGradOp{}); }
void reciprocal_grad(KernelContext& ctx) { unary_grad(ctx, ReciprocalGradOp{}); }
void sin_grad(KernelContext& ctx) { unary_grad(ctx, SinGradOp{}); }
void cos_grad(KernelContext& ctx) { unary_grad(ctx, CosGradOp{}); }
template <class Op>
void trig_grad(KernelContext& ctx) {
  unary_grad(ctx, Op{});
}

}  // namespace

CBT_REGISTER_KERNEL("", "Add", DeviceKind::CUDA, add);
CBT_REGISTER_KERNEL("", "Sub", DeviceKind::CUDA, binary<SubOp>);
CBT_REGISTER_KERNEL("", "Mul", DeviceKind::CUDA, binary<MulOp>);
CBT_REGISTER_KERNEL("", "Div", DeviceKind::CUDA, binary<DivOp>);
CBT_REGISTER_KERNEL("", "Mod", DeviceKind::CUDA, mod);
CBT_REGISTER_KERNEL("", "Pow", DeviceKind::CUDA, pow_kernel);
CBT_REGISTER_KERNEL("", "Sum", DeviceKind::CUDA, variadic_sum<false>);
CBT_REGISTER_KERNEL("", "Mean", DeviceKind::CUDA, variadic_sum<true>);
CBT_REGISTER_KERNEL("", "Max", DeviceKind::CUDA, binary<MaximumOp>);
CBT_REGISTER_KERNEL("", "Min", DeviceKind::CUDA, binary<MinimumOp>);
CBT_REGISTER_KERNEL("", "PRelu", DeviceKind::CUDA, binary<PReluOp>);
CBT_REGISTER_KERNEL("", "Neg", DeviceKind::CUDA, neg);
CBT_REGISTER_KERNEL("", "Sqrt", DeviceKind::CUDA, float_unary<SqrtOp>);
CBT_REGISTER_KERNEL("", "Erf", DeviceKind::CUDA, float_unary<ErfOp>);
CBT_REGISTER_KERNEL("", "Exp", DeviceKind::CUDA, float_unary<ExpOp>);
CBT_REGISTER_KERNEL("", "Log", DeviceKind::CUDA, float_unary<LogOp>);
CBT_REGISTER_KERNEL("", "Abs", DeviceKind::CUDA, float_unary<AbsOp>);
CBT_REGISTER_KERNEL("", "Reciprocal", DeviceKind::CUDA, float_unary<ReciprocalOp>);
CBT_REGISTER_KERNEL("", "Sin", DeviceKind::CUDA, float_unary<SinOp>);
CBT_REGISTER_KERNEL("", "Cos", DeviceKind::CUDA, float_unary<CosOp>);
CBT_REGISTER_KERNEL("", "Tan", DeviceKind::CUDA, float_unary<TanOp>);
CBT_REGISTER_KERNEL("", "Asin", DeviceKind::CUDA, float_unary<AsinOp>);
CBT_REGISTER_KERNEL("", "Acos", DeviceKind::CUDA, float_unary<AcosOp>);
CBT_REGISTER_KERNEL("", "Atan", DeviceKind::CUDA, float_unary<AtanOp>);
CBT_REGISTER_KERNEL("", "Sinh", DeviceKind::CUDA, float_unary<SinhOp>);
CBT_REGISTER_KERNEL("", "Cosh", DeviceKind::CUDA, float_unary<CoshOp>);
CBT_REGISTER_KERNEL("", "Asinh", DeviceKind::CUDA, float_unary<AsinhOp>);
CBT_REGISTER_KERNEL("", "Acosh", DeviceKind::CUDA, float_unary<AcoshOp>);
CBT_REGISTER_KERNEL("", "Atanh", DeviceKind::CUDA, float_unary<AtanhOp>);
CBT_REGISTER_KERNEL("", "Floor", DeviceKind::CUDA, float_unary<FloorOp>);
CBT_REGISTER_KERNEL("", "Ceil", DeviceKind::CUDA, float_unary<CeilOp>);
CBT_REGISTER_KERNEL("", "Round", DeviceKind::CUDA, float_unary<RoundOp>);
CBT_REGISTER_KERNEL("", "Sign", DeviceKind::CUDA, float_unary<SignOp>);
CBT_REGISTER_KERNEL("", "Identity", DeviceKind::CUDA, identity);
CBT_REGISTER_KERNEL("", "Cast", DeviceKind::CUDA, cast);
CBT_REGISTER_KERNEL("", "CastLike", DeviceKind::CUDA, cast);
CBT_REGISTER_KERNEL("", "Clip", DeviceKind::CUDA, clip);
CBT_REGISTER_KERNEL(kCbtDomain, "ClipGrad", DeviceKind::CUDA, clip_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceSumTo", DeviceKind::CUDA, reduce_sum_to_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "DivGrad", DeviceKind::CUDA, div_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "PowGrad", DeviceKind::CUDA, pow_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "MaxGrad", DeviceKind::CUDA, max_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "MinGrad", DeviceKind::CUDA, min_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "PReluGrad", DeviceKind::CUDA, prelu_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SqrtGrad", DeviceKind::CUDA, sqrt_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ErfGrad", DeviceKind::CUDA, erf_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ExpGrad", DeviceKind::CUDA, exp_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "LogGrad", DeviceKind::CUDA, log_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "AbsGrad", DeviceKind::CUDA, abs_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ReciprocalGrad", DeviceKind::CUDA, reciprocal_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "SinGrad", DeviceKind::CUDA, sin_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "CosGrad", DeviceKind::CUDA, cos_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "TanGrad", DeviceKind::CUDA, trig_grad<TanGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "AsinGrad", DeviceKind::CUDA, trig_grad<AsinGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "AcosGrad", DeviceKind::CUDA, trig_grad<AcosGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "AtanGrad", DeviceKind::CUDA, trig_grad<AtanGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "SinhGrad", DeviceKind::CUDA, trig_grad<SinhGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "CoshGrad", DeviceKind::CUDA, trig_grad<CoshGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "AsinhGrad", DeviceKind::CUDA, trig_grad<AsinhGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "AcoshGrad", DeviceKind::CUDA, trig_grad<AcoshGradOp>);
CBT_REGISTER_KERNEL(kCbtDomain, "AtanhGrad", DeviceKind::CUDA, trig_grad<AtanhGradOp>);

}  // namespace cbt::cuda::ew
