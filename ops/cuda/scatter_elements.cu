// ScatterElements (and Scatter) and ScatterElementsGrad CUDA kernels: a copy, then one thread
// a line with ops/scatter_elements.h's rule, as on the CPU (ops/cpu/scatter_elements.cpp).
#include "ops/scatter_elements.h"

#include "ops/cuda/broadcast.cuh"

namespace cbt::cuda::ew {
namespace {

template <class T, class I>
__global__ void scatter_kernel(ScatterView v, const I* indices, const T* updates, T* y, bool add) {
  CBT_GRID_STRIDE_LOOP(l, v.lines) { scatter_line(v, l, indices, updates, y, add); }
}

// data, indices, updates -> Y (axis, reduction)
void scatter_elements(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const ScatterView v(data.shape(), updates.shape(), ctx.node.attrs.get_int("axis", 0));
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  CBT_CUDA_CHECK(cudaMemcpyAsync(ctx.out(0).data(), data.data(), data.nbytes(), cudaMemcpyDeviceToDevice, cc.stream));
  if (v.lines == 0 || updates.numel() == 0) return;
  dispatch_arith(ctx, data.dtype(), [&]<class T>() {
    dispatch_index(indices, [&]<class I>() {
      scatter_kernel<T, I><<<blocks_for(v.lines), kThreads, 0, cc.stream>>>(v, indices.ptr<I>(), updates.ptr<T>(),
                                                                            ctx.out(0).ptr<T>(), add);
      CBT_CUDA_CHECK_LAUNCH();
    });
  });
}

template <class T, class I>
__global__ void scatter_grad_kernel(ScatterView v, const I* indices, const T* dy, T* d_data, T* d_updates, bool add) {
  CBT_GRID_STRIDE_LOOP(l, v.lines) { scatter_grad_line(v, l, indices, dy, d_data, d_updates, add); }
}

// dY, indices -> dData, dUpdates (axis, reduction); either may be unwanted.
void scatter_elements_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const ScatterView v(dy.shape(), indices.shape(), ctx.node.attrs.get_int("axis", 0));
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  if (ctx.has_out(0))
    CBT_CUDA_CHECK(cudaMemcpyAsync(ctx.out(0).data(), dy.data(), dy.nbytes(), cudaMemcpyDeviceToDevice, cc.stream));
  if (v.lines == 0 || indices.numel() == 0) return;
  dispatch_arith(ctx, dy.dtype(), [&]<class T>() {
    dispatch_index(indices, [&]<class I>() {
      scatter_grad_kernel<T, I><<<blocks_for(v.lines), kThreads, 0, cc.stream>>>(
          v, indices.ptr<I>(), dy.ptr<T>(), ctx.has_out(0) ? ctx.out(0).ptr<T>() : nullptr,
          ctx.has_out(1) ? ctx.out(1).ptr<T>() : nullptr, add);
      CBT_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "ScatterElements", DeviceKind::CUDA, scatter_elements);
CBT_REGISTER_KERNEL("", "Scatter", DeviceKind::CUDA, scatter_elements);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterElementsGrad", DeviceKind::CUDA, scatter_elements_grad);

}  // namespace cbt::cuda::ew
