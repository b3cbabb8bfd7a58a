// GatherND, ScatterND and their backward ops on CUDA with ops/scatter_nd.h's rule, as on the CPU
// (ops/cpu/gather_scatter_nd.cpp): gathers one thread an element; reductions (add, mul, max,
// min) and ScatterND's tally one thread an element of a slice, the tuples in order (no atomics:
// the CPU's bits, mul's rounding included); ScatterND's writes one thread an element of a
// tuple's slice (where two tuples name one slice, which write stays is unspecified, as ONNX
// says); the backward of mul, max and min one thread an element.
#include "ops/cuda/broadcast.cuh"
#include "ops/scatter_nd.h"

namespace cbt::cuda::ew {
namespace {

template <class T>
__global__ void gather_kernel(NdIndexView v, const int64_t* indices, const T* data, T* y) {
  CBT_GRID_STRIDE_LOOP(e, v.tuples * v.slice) { y[e] = nd_gather_element(v, indices, data, e); }
}

template <class T>
__global__ void reduce_kernel(NdIndexView v, const int64_t* indices, const T* src, T* into, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(s, v.slice) { nd_scatter_element(v, indices, src, into, s, r); }
}

// Each element of each tuple's slice: `into` takes src there, or 0 (src null).
template <class T>
__global__ void write_kernel(NdIndexView v, const int64_t* indices, const T* src, T* into) {
  CBT_GRID_STRIDE_LOOP(e, v.tuples * v.slice) {
    const int64_t off = nd_offset(v, indices, e / v.slice);
    if (off >= 0) into[off + e % v.slice] = src ? src[e] : T(0);
  }
}

void copy(const CudaContext& cc, const Tensor& from, Tensor& to) {
  CBT_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), from.nbytes(), cudaMemcpyDeviceToDevice, cc.stream));
}

// data, indices -> Y (batch_dims)
void gather_nd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &data = ctx.in(0), &indices = ctx.in(1);
  const NdIndexView v(data.shape(), indices.shape(), ctx.node.attrs.get_int("batch_dims", 0));
  if (v.tuples * v.slice == 0) return;
  dispatch_arith(ctx, data.dtype(), [&]<class T>() {
    gather_kernel<T><<<blocks_for(v.tuples * v.slice), kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(),
                                                                                 data.ptr<T>(), ctx.out(0).ptr<T>());
    CBT_CUDA_CHECK_LAUNCH();
  });
}

// dY, indices, data -> dData: zeros, dY added where the slices came from.
void gather_nd_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  Tensor& dx = ctx.out(0);
  const NdIndexView v(dx.shape(), indices.shape(), ctx.node.attrs.get_int("batch_dims", 0));
  CBT_CUDA_CHECK(cudaMemsetAsync(dx.data(), 0, dx.nbytes(), cc.stream));
  if (v.tuples * v.slice == 0) return;
  dispatch_arith(ctx, dy.dtype(), [&]<class T>() {
    reduce_kernel<T><<<blocks_for(v.slice), kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), dy.ptr<T>(),
                                                                      dx.ptr<T>(), ScatterReduction::Add);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

// data, indices, updates -> Y (reduction)
void scatter_nd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const NdIndexView v(data.shape(), indices.shape(), 0);
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  copy(cc, data, ctx.out(0));
  if (v.tuples * v.slice == 0) return;
  dispatch_arith(ctx, data.dtype(), [&]<class T>() {
    if (r != ScatterReduction::None)
      reduce_kernel<T><<<blocks_for(v.slice), kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), updates.ptr<T>(),
                                                                        ctx.out(0).ptr<T>(), r);
    else
      write_kernel<T><<<blocks_for(v.tuples * v.slice), kThreads, 0, cc.stream>>>(
          v, indices.ptr<int64_t>(), updates.ptr<T>(), ctx.out(0).ptr<T>());
    CBT_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
__global__ void tally_start_kernel(int64_t n, const T* data, T* a, T* b, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(p, n) { tally_start(r, data[p], a[p], b[p]); }
}

template <class T>
__global__ void tally_kernel(NdIndexView v, const int64_t* indices, const T* updates, T* a, T* b, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(s, v.slice) { nd_tally_element(v, indices, updates, a, b, s, r); }
}

// data, indices, updates -> tally (2, data's elements): a, then b (reduction mul, max or min).
void scatter_nd_tally(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const NdIndexView v(data.shape(), indices.shape(), 0);
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  const int64_t n = data.numel();
  if (n == 0) return;
  dispatch_arith(ctx, data.dtype(), [&]<class T>() {
    T *a = ctx.out(0).ptr<T>(), *b = a + n;
    tally_start_kernel<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(n, data.ptr<T>(), a, b, r);
    CBT_CUDA_CHECK_LAUNCH();
    if (v.tuples * v.slice == 0) return;
    tally_kernel<T>
        <<<blocks_for(v.slice), kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), updates.ptr<T>(), a, b, r);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
__global__ void tally_d_data_kernel(int64_t n, const T* dy, const T* data, const T* a, const T* b, T* d_data,
                                    ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(p, n) { d_data[p] = tally_d_data(r, dy[p], data[p], a[p], b[p]); }
}

template <class T>
__global__ void tally_d_updates_kernel(NdIndexView v, const int64_t* indices, const T* dy, const T* data,
                                       const T* updates, const T* a, const T* b, T* d_updates, ScatterReduction r) {
  CBT_GRID_STRIDE_LOOP(e, v.tuples * v.slice) {
    d_updates[e] = nd_tally_d_update(v, indices, dy, data, updates, a, b, e, r);
  }
}

// dY, indices[, data, updates, tally] -> dData, dUpdates (reduction). None: dY, 0 where it
// overwrote, and dY at the tuples; add: dY twice; mul, max and min: from the tally.
void scatter_nd_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const NdIndexView v(dy.shape(), indices.shape(), 0);
  const ScatterReduction r = scatter_reduction_of(ctx.node);
  const int64_t n = dy.numel();
  if (ctx.has_out(0) && !needs_tally(r)) copy(cc, dy, ctx.out(0));
  dispatch_arith(ctx, dy.dtype(), [&]<class T>() {
    const T *x = nullptr, *u = nullptr, *a = nullptr;
    if (needs_tally(r)) x = ctx.in(2).ptr<T>(), u = ctx.in(3).ptr<T>(), a = ctx.in(4).ptr<T>();
    if (ctx.has_out(0) && needs_tally(r) && n > 0) {
      tally_d_data_kernel<T>
          <<<blocks_for(n), kThreads, 0, cc.stream>>>(n, dy.ptr<T>(), x, a, a + n, ctx.out(0).ptr<T>(), r);
      CBT_CUDA_CHECK_LAUNCH();
    }
    if (v.tuples * v.slice == 0) return;
    const unsigned blocks = blocks_for(v.tuples * v.slice);
    if (ctx.has_out(0) && r == ScatterReduction::None)
      write_kernel<T><<<blocks, kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), nullptr, ctx.out(0).ptr<T>());
    if (ctx.has_out(1) && needs_tally(r))
      tally_d_updates_kernel<T><<<blocks, kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), dy.ptr<T>(), x, u, a,
                                                                    a + n, ctx.out(1).ptr<T>(), r);
    else if (ctx.has_out(1))
      gather_kernel<T><<<blocks, kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), dy.ptr<T>(), ctx.out(1).ptr<T>());
    CBT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "GatherND", DeviceKind::CUDA, gather_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "GatherNDGrad", DeviceKind::CUDA, gather_nd_grad);
CBT_REGISTER_KERNEL("", "ScatterND", DeviceKind::CUDA, scatter_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterNDTally", DeviceKind::CUDA, scatter_nd_tally);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterNDGrad", DeviceKind::CUDA, scatter_nd_grad);

}  // namespace cbt::cuda::ew
