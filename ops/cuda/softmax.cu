// CUDA kernels of Softmax/LogSoftmax along one axis and their backward ops; ops/cpu/softmax.cpp
// is the specification. Row sums are fixed-order group reductions (deterministic).
#include <cmath>

#include "ops/cuda/broadcast.cuh"

namespace cbt::cuda::ew {
namespace {

// A tensor seen as (outer, len, inner) around the softmax axis.
struct AxisView {
  int64_t outer, len, inner;
};

AxisView axis_view(const KernelContext& ctx, const Shape& s) {
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", -1), static_cast<int64_t>(s.size()));
  return {dims_product(s, 0, axis), s[axis], dims_product(s, axis + 1, s.size())};
}

// Contiguous rows (inner == 1), one group of G threads per row. x, y: (rows, len).
template <int G>
__global__ void softmax_rows_kernel(const float* x, float* y, int64_t rows, int64_t len, bool log) {
  __shared__ float smem[kThreads / 32];
  constexpr int per_block = kThreads / G;
  int lane = threadIdx.x % G;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / G; r < rows;
       r += static_cast<int64_t>(gridDim.x) * per_block) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    float m = -INFINITY;
    for (int64_t k = lane; k < len; k += G) m = MaxOp{}(m, xr[k]);
    m = group_reduce<G>(m, MaxOp{}, smem);
    float sum = 0;
    for (int64_t k = lane; k < len; k += G) sum += expf(xr[k] - m);
    sum = group_reduce<G>(sum, SumOp{}, smem);
    if (log) {
      float lse = m + logf(sum);
      for (int64_t k = lane; k < len; k += G) yr[k] = xr[k] - lse;
    } else {
      float inv = 1.0f / sum;
      for (int64_t k = lane; k < len; k += G) yr[k] = expf(xr[k] - m) * inv;
    }
  }
}

// Strided lines (inner > 1), one thread per (outer, inner) line; adjacent threads read
// adjacent elements. x, y: (outer, len, inner).
__global__ void softmax_lines_kernel(const float* x, float* y, AxisView v, bool log) {
  CBT_GRID_STRIDE_LOOP(q, v.outer * v.inner) {
    int64_t o = (q / v.inner) * v.len * v.inner + q % v.inner, st = v.inner;
    const float* xr = x + o;
    float* yr = y + o;
    float m = xr[0];
    for (int64_t k = 1; k < v.len; ++k) m = MaxOp{}(m, xr[k * st]);
    float sum = 0;
    for (int64_t k = 0; k < v.len; ++k) sum += expf(xr[k * st] - m);
    if (log) {
      float lse = m + logf(sum);
      for (int64_t k = 0; k < v.len; ++k) yr[k * st] = xr[k * st] - lse;
    } else {
      float inv = 1.0f / sum;
      for (int64_t k = 0; k < v.len; ++k) yr[k * st] = expf(xr[k * st] - m) * inv;
    }
  }
}

// dY, Y, dX: (rows, len). Softmax: dX = Y (dY - sum(dY Y)); LogSoftmax: dX = dY - exp(Y) sum(dY).
template <int G>
__global__ void softmax_grad_rows_kernel(const float* dy, const float* y, float* dx, int64_t rows, int64_t len,
                                         bool log) {
  __shared__ float smem[kThreads / 32];
  constexpr int per_block = kThreads / G;
  int lane = threadIdx.x % G;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / G; r < rows;
       r += static_cast<int64_t>(gridDim.x) * per_block) {
    const float *dyr = dy + r * len, *yr = y + r * len;
    float* dxr = dx + r * len;
    float s = 0;
    for (int64_t k = lane; k < len; k += G) s += log ? dyr[k] : dyr[k] * yr[k];
    s = group_reduce<G>(s, SumOp{}, smem);
    for (int64_t k = lane; k < len; k += G) dxr[k] = log ? dyr[k] - expf(yr[k]) * s : yr[k] * (dyr[k] - s);
  }
}

__global__ void softmax_grad_lines_kernel(const float* dy, const float* y, float* dx, AxisView v, bool log) {
  CBT_GRID_STRIDE_LOOP(q, v.outer * v.inner) {
    int64_t o = (q / v.inner) * v.len * v.inner + q % v.inner, st = v.inner;
    float s = 0;
    for (int64_t k = 0; k < v.len; ++k) s += log ? dy[o + k * st] : dy[o + k * st] * y[o + k * st];
    for (int64_t k = 0; k < v.len; ++k) {
      int64_t i = o + k * st;
      dx[i] = log ? dy[i] - expf(y[i]) * s : y[i] * (dy[i] - s);
    }
  }
}

// Rows of 512 or more get a block each, shorter ones a warp.
bool block_per_row(int64_t len) { return len >= 512; }

int row_blocks(int64_t rows, int group) {
  int64_t per_block = kThreads / group;
  return blocks_for((rows + per_block - 1) / per_block, 1);
}

template <bool Log>
void softmax_kernel(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  AxisView v = axis_view(ctx, ctx.in(0).shape());
  const float* x = ctx.in(0).ptr<float>();
  float* y = ctx.out(0).ptr<float>();
  int64_t rows = v.outer * v.inner;
  if (rows == 0 || v.len == 0) return;
  if (v.inner > 1) {
    softmax_lines_kernel<<<blocks_for(rows), kThreads, 0, cc.stream>>>(x, y, v, Log);
  } else if (block_per_row(v.len)) {
    softmax_rows_kernel<kThreads><<<row_blocks(rows, kThreads), kThreads, 0, cc.stream>>>(x, y, rows, v.len, Log);
  } else {
    softmax_rows_kernel<32><<<row_blocks(rows, 32), kThreads, 0, cc.stream>>>(x, y, rows, v.len, Log);
  }
  CBT_CUDA_CHECK_LAUNCH();
}

template <bool Log>
void softmax_grad_kernel(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  require_f32(ctx, ctx.in(0));
  AxisView v = axis_view(ctx, ctx.in(0).shape());
  const float *dy = ctx.in(0).ptr<float>(), *y = ctx.in(1).ptr<float>();
  float* dx = ctx.out(0).ptr<float>();
  int64_t rows = v.outer * v.inner;
  if (rows == 0 || v.len == 0) return;
  if (v.inner > 1) {
    softmax_grad_lines_kernel<<<blocks_for(rows), kThreads, 0, cc.stream>>>(dy, y, dx, v, Log);
  } else if (block_per_row(v.len)) {
    softmax_grad_rows_kernel<kThreads>
        <<<row_blocks(rows, kThreads), kThreads, 0, cc.stream>>>(dy, y, dx, rows, v.len, Log);
  } else {
    softmax_grad_rows_kernel<32><<<row_blocks(rows, 32), kThreads, 0, cc.stream>>>(dy, y, dx, rows, v.len, Log);
  }
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "Softmax", DeviceKind::CUDA, softmax_kernel<false>);
CBT_REGISTER_KERNEL("", "LogSoftmax", DeviceKind::CUDA, softmax_kernel<true>);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxGrad", DeviceKind::CUDA, softmax_grad_kernel<false>);
CBT_REGISTER_KERNEL(kCbtDomain, "LogSoftmaxGrad", DeviceKind::CUDA, softmax_grad_kernel<true>);

}  // namespace cbt::cuda::ew
