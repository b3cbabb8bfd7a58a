// CumSum (one thread a line along the axis) and Trilu (one thread an element) CUDA kernels,
// with ops/cumsum_trilu.h's rules, as on the CPU (ops/cpu/cumsum_trilu.cpp).
#include "ops/cumsum_trilu.h"

#include <vector>

#include "ops/cuda/broadcast.cuh"
#include "ops/cuda/host_input.h"

namespace cbt::cuda::ew {
namespace {

// A constant int64 or int32 scalar input (the schemas require it constant) on the host.
int64_t scalar_input(KernelContext& ctx, size_t i) {
  if (ctx.in(i).dtype() == DType::Int32) return host_input<int32_t>(ctx, i).at(0);
  return host_input<int64_t>(ctx, i).at(0);
}

template <class T>
__global__ void cumsum_kernel(const T* x, T* y, AxisView a, bool exclusive, bool reverse) {
  CBT_GRID_STRIDE_LOOP(line, a.outer * a.inner) {
    cumsum_line(x, y, a, line / a.inner, line % a.inner, exclusive, reverse);
  }
}

void cumsum(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  if (x.numel() == 0) return;
  const AxisView a(x.shape(), scalar_input(ctx, 1));
  const bool exclusive = ctx.node.attrs.get_int("exclusive", 0) != 0;
  const bool reverse = ctx.node.attrs.get_int("reverse", 0) != 0;
  dispatch_arith(ctx, x.dtype(), [&]<class T>() {
    cumsum_kernel<T><<<blocks_for(a.outer * a.inner), kThreads, 0, cc.stream>>>(x.ptr<T>(), ctx.out(0).ptr<T>(), a,
                                                                                exclusive, reverse);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
__global__ void trilu_kernel(const T* x, T* y, int64_t n, int64_t rows, int64_t cols, int64_t k, bool upper) {
  CBT_GRID_STRIDE_LOOP(e, n) { y[e] = trilu_keeps(e / cols % rows, e % cols, k, upper) ? x[e] : T(0); }
}

void trilu(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t k = ctx.has_in(1) ? scalar_input(ctx, 1) : 0;
  const bool upper = ctx.node.attrs.get_int("upper", 1) != 0;
  const int64_t cols = x.dim(x.rank() - 1), rows = x.dim(x.rank() - 2);
  dispatch_arith(ctx, x.dtype(), [&]<class T>() {
    trilu_kernel<T>
        <<<blocks_for(n), kThreads, 0, cc.stream>>>(x.ptr<T>(), ctx.out(0).ptr<T>(), n, rows, cols, k, upper);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "CumSum", DeviceKind::CUDA, cumsum);
CBT_REGISTER_KERNEL("", "Trilu", DeviceKind::CUDA, trilu);

}  // namespace cbt::cuda::ew
