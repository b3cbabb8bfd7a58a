// CUDA kernels of Greater, Less, GreaterOrEqual, LessOrEqual, Not, And, Or, Xor, IsNaN and IsInf,
// as the CPU's (ops/cpu/compare.cpp, ops/float_class.h); bool is one byte, 0 or 1.
#include <cstdint>

#include "ops/cuda/shape_ops_common.cuh"
#include "ops/float_class.h"
#include "ops/number_dispatch.h"

namespace cbt {
namespace {
using namespace cuda::shape;
using cuda::blocks_for;
using cuda::kThreads;

struct GreaterOp {
  template <class T>
  __device__ bool operator()(T u, T v) const {
    return u > v;
  }
};
struct LessOp {
  template <class T>
  __device__ bool operator()(T u, T v) const {
    return u < v;
  }
};
struct GreaterOrEqualOp {
  template <class T>
  __device__ bool operator()(T u, T v) const {
    return u >= v;
  }
};
struct LessOrEqualOp {
  template <class T>
  __device__ bool operator()(T u, T v) const {
    return u <= v;
  }
};
struct AndOp {
  __device__ bool operator()(uint8_t u, uint8_t v) const { return u && v; }
};
struct OrOp {
  __device__ bool operator()(uint8_t u, uint8_t v) const { return u || v; }
};
struct XorOp {
  __device__ bool operator()(uint8_t u, uint8_t v) const { return (u != 0) != (v != 0); }
};

// y = cmp(a, b) with broadcasting (plan operands: a, b)
template <class T, class Cmp>
__global__ void compare_values(uint8_t* __restrict__ y, const T* __restrict__ a, const T* __restrict__ b,
                               const __grid_constant__ NdPlan p, int64_t n, Cmp cmp) {
  grid_stride(n, [&](auto i) {
    int64_t off[2];
    plan_offsets<2>(p, i, off);
    y[i] = cmp(a[off[0]], b[off[1]]) ? 1 : 0;
  });
}

template <class T, class Cmp>
void compare_as(KernelContext& ctx, Cmp cmp) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  Tensor& y = ctx.out(0);
  const int64_t n = y.numel();
  if (n == 0) return;
  const Shape& s = y.shape();
  const NdPlan p = make_plan(s, {broadcast_strides(a.shape(), s), broadcast_strides(b.shape(), s)});
  compare_values<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(
      static_cast<uint8_t*>(y.data()), static_cast<const T*>(a.data()), static_cast<const T*>(b.data()), p, n, cmp);
  CBT_CUDA_CHECK_LAUNCH();
}

template <class Cmp>
void comparison(KernelContext& ctx) {
  dispatch_number(ctx.in(0).dtype(), [&]<class T>() { compare_as<T>(ctx, Cmp{}); });
}

template <class Op>
void logical(KernelContext& ctx) {
  compare_as<uint8_t>(ctx, Op{});
}

__global__ void not_values(uint8_t* __restrict__ y, const uint8_t* __restrict__ x, int64_t n) {
  grid_stride(n, [&](auto i) { y[i] = x[i] ? 0 : 1; });
}

void not_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const int64_t n = ctx.out(0).numel();
  if (n == 0) return;
  not_values<<<blocks_for(n), kThreads, 0, cc.stream>>>(static_cast<uint8_t*>(ctx.out(0).data()),
                                                        static_cast<const uint8_t*>(ctx.in(0).data()), n);
  CBT_CUDA_CHECK_LAUNCH();
}

template <bool Nan, class T>
__global__ void float_class_values(uint8_t* __restrict__ y, const T* __restrict__ x, int64_t n, bool negative,
                                   bool positive) {
  grid_stride(n, [&](auto i) { y[i] = (Nan ? is_nan_value(x[i]) : is_inf_value(x[i], negative, positive)) ? 1 : 0; });
}

// IsNaN (Nan) or IsInf: X (float) -> bool.
template <bool Nan>
void float_class(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const int64_t n = ctx.out(0).numel();
  if (n == 0) return;
  const bool negative = ctx.node.attrs.get_int("detect_negative", 1) != 0;
  const bool positive = ctx.node.attrs.get_int("detect_positive", 1) != 0;
  auto* y = static_cast<uint8_t*>(ctx.out(0).data());
  if (ctx.in(0).dtype() == DType::Float64)
    float_class_values<Nan>
        <<<blocks_for(n), kThreads, 0, cc.stream>>>(y, ctx.in(0).ptr<double>(), n, negative, positive);
  else
    float_class_values<Nan>
        <<<blocks_for(n), kThreads, 0, cc.stream>>>(y, ctx.in(0).ptr<float>(), n, negative, positive);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "Greater", DeviceKind::CUDA, comparison<GreaterOp>);
CBT_REGISTER_KERNEL("", "Less", DeviceKind::CUDA, comparison<LessOp>);
CBT_REGISTER_KERNEL("", "GreaterOrEqual", DeviceKind::CUDA, comparison<GreaterOrEqualOp>);
CBT_REGISTER_KERNEL("", "LessOrEqual", DeviceKind::CUDA, comparison<LessOrEqualOp>);
CBT_REGISTER_KERNEL("", "Not", DeviceKind::CUDA, not_kernel);
CBT_REGISTER_KERNEL("", "And", DeviceKind::CUDA, logical<AndOp>);
CBT_REGISTER_KERNEL("", "Or", DeviceKind::CUDA, logical<OrOp>);
CBT_REGISTER_KERNEL("", "Xor", DeviceKind::CUDA, logical<XorOp>);
CBT_REGISTER_KERNEL("", "IsNaN", DeviceKind::CUDA, float_class<true>);
CBT_REGISTER_KERNEL("", "IsInf", DeviceKind::CUDA, float_class<false>);

}  // namespace cbt
