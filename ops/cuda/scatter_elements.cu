// ScatterElements (and Scatter), ScatterElementsTally and ScatterElementsGrad CUDA kernels: a
// copy, then one thread a line with ops/scatter_elements.h's rule, as on the CPU
// (ops/cpu/scatter_elements.cpp). A line's updates combine in order in its thread, so repeated
// indices need no atomics and every reduction (mul's rounding included) matches the CPU's bits;
// the backward of mul, max and min is one thread an element of its tally.
#include "ops/scatter_elements.h"

#include "ops/cuda/broadcast.cuh"

namespace cbt::cuda::ew {
namespace {

template <class T, class I>
__global__ void scatter_kernel(ScatterView v, const I* indices, const T* updates, T* y, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(l, v.lines) { scatter_line(v, l, indices, updates, y, r); }
}

// data, indices, updates -> Y (axis, reduction)
void scatter_elements(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const ScatterView v(data.shape(), updates.shape(), ctx.node.attrs.get_int("axis", 0));
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  CBT_CUDA_CHECK(cudaMemcpyAsync(ctx.out(0).data(), data.data(), data.nbytes(), cudaMemcpyDeviceToDevice, cc.stream));
  if (v.lines == 0 || updates.numel() == 0) return;
  dispatch_arith(ctx, data.dtype(), [&]<class T>() {
    dispatch_index(indices, [&]<class I>() {
      scatter_kernel<T, I><<<blocks_for(v.lines), kThreads, 0, cc.stream>>>(v, indices.ptr<I>(), updates.ptr<T>(),
                                                                            ctx.out(0).ptr<T>(), r);
      CBT_CUDA_CHECK_LAUNCH();
    });
  });
}

template <class T>
__global__ void tally_start_kernel(int64_t n, const T* data, T* a, T* b, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(p, n) { tally_start(r, data[p], a[p], b[p]); }
}

template <class T, class I>
__global__ void tally_kernel(ScatterView v, const I* indices, const T* updates, T* a, T* b, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(l, v.lines) { scatter_tally_line(v, l, indices, updates, a, b, r); }
}

// data, indices, updates -> tally (2, data's elements): a, then b (axis, reduction mul, max or
// min).
void scatter_elements_tally(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const ScatterView v(data.shape(), updates.shape(), ctx.node.attrs.get_int("axis", 0));
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  const int64_t n = data.numel();
  if (n == 0) return;
  dispatch_arith(ctx, data.dtype(), [&]<class T>() {
    T *a = ctx.out(0).ptr<T>(), *b = a + n;
    tally_start_kernel<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(n, data.ptr<T>(), a, b, r);
    CBT_CUDA_CHECK_LAUNCH();
    if (v.lines == 0 || updates.numel() == 0) return;
    dispatch_index(indices, [&]<class I>() {
      tally_kernel<T, I>
          <<<blocks_for(v.lines), kThreads, 0, cc.stream>>>(v, indices.ptr<I>(), updates.ptr<T>(), a, b, r);
      CBT_CUDA_CHECK_LAUNCH();
    });
  });
}

template <class T, class I>
__global__ void scatter_grad_kernel(ScatterView v, const I* indices, const T* dy, T* d_data, T* d_updates,
                                    ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(l, v.lines) { scatter_grad_line(v, l, indices, dy, d_data, d_updates, r); }
}

template <class T>
__global__ void tally_d_data_kernel(int64_t n, const T* dy, const T* data, const T* a, const T* b, T* d_data,
                                    ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(p, n) { d_data[p] = tally_d_data(r, dy[p], data[p], a[p], b[p]); }
}

template <class T, class I>
__global__ void tally_d_updates_kernel(ScatterView v, int64_t count, const I* indices, const T* dy, const T* data,
                                       const T* updates, const T* a, const T* b, T* d_updates, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(at, count) {
    const int64_t t = scatter_update_target(v, indices, at);
    d_updates[at] = t >= 0 ? tally_d_update(r, dy[t], data[t], updates[at], a[t], b[t]) : T(0);
  }
}

// dY, indices[, data, updates, tally] -> dData, dUpdates (axis, reduction); either may be
// unwanted. None and add read dY at the targets; mul, max and min also the tally.
void scatter_elements_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const ScatterView v(dy.shape(), indices.shape(), ctx.node.attrs.get_int("axis", 0));
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  if (!needs_tally(r) && ctx.has_out(0))
    CBT_CUDA_CHECK(cudaMemcpyAsync(ctx.out(0).data(), dy.data(), dy.nbytes(), cudaMemcpyDeviceToDevice, cc.stream));
  dispatch_arith(ctx, dy.dtype(), [&]<class T>() {
    T* d_data = ctx.has_out(0) ? ctx.out(0).ptr<T>() : nullptr;
    T* d_updates = ctx.has_out(1) ? ctx.out(1).ptr<T>() : nullptr;
    const int64_t n = dy.numel(), count = indices.numel();
    if (needs_tally(r) && d_data && n > 0) {
      const T* a = ctx.in(4).ptr<T>();
      tally_d_data_kernel<T>
          <<<blocks_for(n), kThreads, 0, cc.stream>>>(n, dy.ptr<T>(), ctx.in(2).ptr<T>(), a, a + n, d_data, r);
      CBT_CUDA_CHECK_LAUNCH();
    }
    if (v.lines == 0 || count == 0) return;
    dispatch_index(indices, [&]<class I>() {
      if (!needs_tally(r)) {
        scatter_grad_kernel<T, I>
            <<<blocks_for(v.lines), kThreads, 0, cc.stream>>>(v, indices.ptr<I>(), dy.ptr<T>(), d_data, d_updates, r);
      } else if (d_updates) {
        const T* a = ctx.in(4).ptr<T>();
        tally_d_updates_kernel<T, I><<<blocks_for(count), kThreads, 0, cc.stream>>>(
            v, count, indices.ptr<I>(), dy.ptr<T>(), ctx.in(2).ptr<T>(), ctx.in(3).ptr<T>(), a, a + n, d_updates, r);
      }
      CBT_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "ScatterElements", DeviceKind::CUDA, scatter_elements);
CBT_REGISTER_KERNEL("", "Scatter", DeviceKind::CUDA, scatter_elements);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterElementsTally", DeviceKind::CUDA, scatter_elements_tally);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterElementsGrad", DeviceKind::CUDA, scatter_elements_grad);

}  // namespace cbt::cuda::ew
