// GatherND, ScatterND and their backward ops on CUDA with ops/scatter_nd.h's rule, as on the CPU
// (ops/cpu/gather_scatter_nd.cpp): gathers one thread an element; additions one thread an
// element of a slice, the tuples in order (deterministic); ScatterND's writes one thread an
// element of a tuple's slice (where two tuples name one slice, which write stays is unspecified,
// as ONNX says).
#include "ops/cuda/broadcast.cuh"
#include "ops/scatter_nd.h"

namespace cbt::cuda::ew {
namespace {

template <class T>
__global__ void gather_kernel(NdIndexView v, const int64_t* indices, const T* data, T* y) {
  CBT_GRID_STRIDE_LOOP(e, v.tuples * v.slice) { y[e] = nd_gather_element(v, indices, data, e); }
}

template <class T>
__global__ void add_kernel(NdIndexView v, const int64_t* indices, const T* src, T* into) {
  CBT_GRID_STRIDE_LOOP(s, v.slice) { nd_scatter_element(v, indices, src, into, s, true); }
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
    add_kernel<T><<<blocks_for(v.slice), kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), dy.ptr<T>(), dx.ptr<T>());
    CBT_CUDA_CHECK_LAUNCH();
  });
}

// data, indices, updates -> Y (reduction)
void scatter_nd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &data = ctx.in(0), &indices = ctx.in(1), &updates = ctx.in(2);
  const NdIndexView v(data.shape(), indices.shape(), 0);
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  copy(cc, data, ctx.out(0));
  if (v.tuples * v.slice == 0) return;
  dispatch_arith(ctx, data.dtype(), [&]<class T>() {
    if (add)
      add_kernel<T><<<blocks_for(v.slice), kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), updates.ptr<T>(),
                                                                     ctx.out(0).ptr<T>());
    else
      write_kernel<T><<<blocks_for(v.tuples * v.slice), kThreads, 0, cc.stream>>>(
          v, indices.ptr<int64_t>(), updates.ptr<T>(), ctx.out(0).ptr<T>());
    CBT_CUDA_CHECK_LAUNCH();
  });
}

// dY, indices -> dData (dY, 0 where "none" overwrote), dUpdates (dY at the tuples).
void scatter_nd_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &indices = ctx.in(1);
  const NdIndexView v(dy.shape(), indices.shape(), 0);
  const bool add = ctx.node.attrs.get_string("reduction", "none") == "add";
  if (ctx.has_out(0)) copy(cc, dy, ctx.out(0));
  if (v.tuples * v.slice == 0) return;
  dispatch_arith(ctx, dy.dtype(), [&]<class T>() {
    const unsigned blocks = blocks_for(v.tuples * v.slice);
    if (ctx.has_out(0) && !add)
      write_kernel<T><<<blocks, kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), nullptr, ctx.out(0).ptr<T>());
    if (ctx.has_out(1))
      gather_kernel<T><<<blocks, kThreads, 0, cc.stream>>>(v, indices.ptr<int64_t>(), dy.ptr<T>(), ctx.out(1).ptr<T>());
    CBT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "GatherND", DeviceKind::CUDA, gather_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "GatherNDGrad", DeviceKind::CUDA, gather_nd_grad);
CBT_REGISTER_KERNEL("", "ScatterND", DeviceKind::CUDA, scatter_nd);
CBT_REGISTER_KERNEL(kCbtDomain, "ScatterNDGrad", DeviceKind::CUDA, scatter_nd_grad);

}  // namespace cbt::cuda::ew
