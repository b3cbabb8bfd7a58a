// CUDA kernels of Shape, Constant, ConstantOfShape, Range, Equal, Where and WhereGrad.
#include <algorithm>
#include <cstring>

#include "ops/cuda/shape_ops_common.cuh"

namespace cbt {
namespace {
using namespace cuda::shape;
using cuda::blocks_for;
using cuda::kThreads;

// y: (end - start,) int64 dims of x, written from the host shape
void shape_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Shape& s = ctx.in(0).shape();
  int64_t r = static_cast<int64_t>(s.size());
  auto clamp_end = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t start = clamp_end(ctx.node.attrs.get_int("start", 0));
  Tensor& y = ctx.out(0);
  write_host_bytes(y.data(), s.data() + start, y.nbytes(), cc.stream);
}

void constant_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Attributes& a = ctx.node.attrs;
  Tensor& y = ctx.out(0);
  if (const Tensor* v = a.get_tensor("value")) {
    write_host_bytes(y.data(), v->data(), v->nbytes(), cc.stream);
  } else if (a.has("value_float")) {
    const float v = a.get_float("value_float", 0);
    write_host_bytes(y.data(), &v, sizeof v, cc.stream);
  } else if (a.has("value_floats")) {
    auto v = a.get_floats("value_floats");
    write_host_bytes(y.data(), v.data(), v.size() * sizeof(float), cc.stream);
  } else if (a.has("value_int")) {
    const int64_t v = a.get_int("value_int", 0);
    write_host_bytes(y.data(), &v, sizeof v, cc.stream);
  } else {
    auto v = a.get_ints("value_ints");
    write_host_bytes(y.data(), v.data(), v.size() * sizeof(int64_t), cc.stream);
  }
}

void constant_of_shape_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  Tensor& y = ctx.out(0);
  const Tensor* v = ctx.node.attrs.get_tensor("value");
  if (!v) {  // default: float32 zeros
    if (y.nbytes()) CBT_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, y.nbytes(), cc.stream));
    return;
  }
  const size_t elem = dtype_size(y.dtype());
  uint64_t bits = 0;
  std::memcpy(&bits, v->data(), elem);
  fill_elements(y.data(), y.numel(), elem, bits, cc.stream);
}

// start + i * delta rounded like the CPU: no fused multiply-add for floats
template <class T>
__device__ __forceinline__ T range_value(T start, T delta, int64_t i) {
  return static_cast<T>(start + static_cast<T>(i) * delta);
}
template <>
__device__ __forceinline__ float range_value(float start, float delta, int64_t i) {
  return __fadd_rn(start, __fmul_rn(static_cast<float>(i), delta));
}
template <>
__device__ __forceinline__ double range_value(double start, double delta, int64_t i) {
  return __dadd_rn(start, __dmul_rn(static_cast<double>(i), delta));
}

// start, delta: one-element device tensors (the Range inputs), read by every thread
template <class T>
__global__ void range_values(T* __restrict__ y, const T* start, const T* delta, int64_t n) {
  const T s = *start, d = *delta;
  CBT_GRID_STRIDE_LOOP(i, n) y[i] = range_value(s, d, i);
}

void range_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  Tensor& y = ctx.out(0);
  const int64_t n = y.numel();
  if (n == 0) return;
  auto fill = [&]<class T>() {
    range_values<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(
        static_cast<T*>(y.data()), static_cast<const T*>(ctx.in(0).data()), static_cast<const T*>(ctx.in(2).data()), n);
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
  CBT_CUDA_CHECK_LAUNCH();
}

// Calls f.template operator()<T>() with T a type that compares like the CPU kernel does
// (int8 and bool compare bitwise, like uint8).
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
    case DType::UInt8:
    case DType::Bool:
      f.template operator()<uint8_t>();
      return;
    default:
      throw ModelError(std::string("Equal on unsupported dtype ") + dtype_name(t));
  }
}

// y = (a == b) with broadcasting (plan operands: a, b); bool stored as one byte
template <class T>
__global__ void equal_values(uint8_t* __restrict__ y, const T* __restrict__ a, const T* __restrict__ b,
                             const __grid_constant__ NdPlan p, int64_t n) {
  grid_stride(n, [&](auto i) {
    int64_t off[2];
    plan_offsets<2>(p, i, off);
    y[i] = a[off[0]] == b[off[1]] ? 1 : 0;
  });
}

void equal_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  const int64_t n = y.numel();
  if (n == 0) return;
  const Shape& s = y.shape();
  const NdPlan p = make_plan(s, {broadcast_strides(a.shape(), s), broadcast_strides(b.shape(), s)});
  dispatch_value(a.dtype(), [&]<class T>() {
    equal_values<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(
        static_cast<uint8_t*>(y.data()), static_cast<const T*>(a.data()), static_cast<const T*>(b.data()), p, n);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

// y = cond ? x : z with broadcasting of all three (plan operands: cond, x, z)
template <class W>
__global__ void where_values(W* __restrict__ y, const uint8_t* __restrict__ cond, const W* __restrict__ x,
                             const W* __restrict__ z, const __grid_constant__ NdPlan p, int64_t n) {
  grid_stride(n, [&](auto i) {
    int64_t off[3];
    plan_offsets<3>(p, i, off);
    y[i] = cond[off[0]] ? x[off[1]] : z[off[2]];
  });
}

void where_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor &c = ctx.in(0), &x = ctx.in(1), &z = ctx.in(2);
  Tensor& y = ctx.out(0);
  const int64_t n = y.numel();
  if (n == 0) return;
  const Shape& s = y.shape();
  const NdPlan p =
      make_plan(s, {broadcast_strides(c.shape(), s), broadcast_strides(x.shape(), s), broadcast_strides(z.shape(), s)});
  with_word(dtype_size(y.dtype()), [&]<class W>() {
    where_values<W><<<blocks_for(n), kThreads, 0, cc.stream>>>(
        static_cast<W*>(y.data()), static_cast<const uint8_t*>(c.data()), static_cast<const W*>(x.data()),
        static_cast<const W*>(z.data()), p, n);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

// cond: broadcast to dY; dX, dZ: the shapes of X and Y, summed over their broadcast axes
void where_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor &c = ctx.in(0), &dY = ctx.in(1);
  auto route = [&](size_t k, Route r) {
    if (!ctx.has_out(k)) return;
    Tensor& d = ctx.out(k);
    broadcast_sum(dY.dtype(), d.data(), d.shape(), dY.data(), dY.shape(), c.data(), c.shape(), r, cc.stream);
  };
  route(0, Route::WhereTrue);
  route(1, Route::WhereFalse);
}

}  // namespace

CBT_REGISTER_KERNEL("", "Shape", DeviceKind::CUDA, shape_kernel);
CBT_REGISTER_KERNEL("", "Constant", DeviceKind::CUDA, constant_kernel);
CBT_REGISTER_KERNEL("", "ConstantOfShape", DeviceKind::CUDA, constant_of_shape_kernel);
CBT_REGISTER_KERNEL("", "Range", DeviceKind::CUDA, range_kernel);
CBT_REGISTER_KERNEL("", "Equal", DeviceKind::CUDA, equal_kernel);
CBT_REGISTER_KERNEL("", "Where", DeviceKind::CUDA, where_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "WhereGrad", DeviceKind::CUDA, where_grad_kernel);

}  // namespace cbt
