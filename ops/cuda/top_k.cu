// TopK and TopKGrad CUDA kernels: one thread a line along the axis, with ops/top_k.h's rule, as
// on the CPU (ops/cpu/top_k.cpp).
#include "ops/top_k.h"

#include "ops/cuda/broadcast.cuh"

namespace cbt::cuda::ew {
namespace {

template <class T>
__global__ void top_k_kernel(const T* x, T* values, int64_t* indices, AxisView a, int64_t k, bool largest) {
  CBT_GRID_STRIDE_LOOP(line, a.outer * a.inner) {
    top_k_line(x, values, indices, a, k, line / a.inner, line % a.inner, largest);
  }
}

// X, K -> Values, Indices (axis, largest; always sorted); either output may be unwanted.
void top_k(KernelContext& ctx) {
  if (!ctx.has_out(0) && !ctx.has_out(1)) return;
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  const int64_t axis = ctx.node.attrs.get_int("axis", -1);
  const AxisView a(x.shape(), axis);
  const int64_t k = (ctx.has_out(0) ? ctx.out(0) : ctx.out(1)).dim(static_cast<int>(axis));
  const bool largest = ctx.node.attrs.get_int("largest", 1) != 0;
  const int64_t n = a.outer * k * a.inner;
  Scratch s(cc);
  int64_t* indices = ctx.has_out(1) ? ctx.out(1).ptr<int64_t>() : s.take<int64_t>(n, "TopK indices");
  dispatch_arith(ctx, x.dtype(), [&]<class T>() {
    T* values = ctx.has_out(0) ? ctx.out(0).ptr<T>() : s.take<T>(n, "TopK values");
    top_k_kernel<T>
        <<<blocks_for(a.outer * a.inner), kThreads, 0, cc.stream>>>(x.ptr<T>(), values, indices, a, k, largest);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
__global__ void top_k_grad_kernel(const T* dy, const int64_t* indices, T* dx, AxisView a, int64_t k) {
  CBT_GRID_STRIDE_LOOP(line, a.outer * a.inner) {
    top_k_grad_line(dy, indices, dx, a, k, line / a.inner, line % a.inner);
  }
}

// dValues, Indices, X -> dX (axis)
void top_k_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& dy = ctx.in(0);
  const AxisView a(ctx.in(2).shape(), ctx.node.attrs.get_int("axis", -1));
  const int64_t k = dy.numel() / (a.outer * a.inner);
  dispatch_arith(ctx, dy.dtype(), [&]<class T>() {
    top_k_grad_kernel<T><<<blocks_for(a.outer * a.inner), kThreads, 0, cc.stream>>>(
        dy.ptr<T>(), ctx.in(1).ptr<int64_t>(), ctx.out(0).ptr<T>(), a, k);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "TopK", DeviceKind::CUDA, top_k);
CBT_REGISTER_KERNEL(kCbtDomain, "TopKGrad", DeviceKind::CUDA, top_k_grad);

}  // namespace cbt::cuda::ew
