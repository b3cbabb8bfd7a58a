// Helpers shared by the dense-family CUDA kernels (conv, matmul, pool, norm): the
// outputs_needed mask, a bump allocator over the context's workspace, block reductions.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ops/cuda/common.cuh"

namespace cbt::cuda {

inline const float* fptr(const Tensor& t) { return static_cast<const float*>(t.data()); }
inline float* fptr_out(const Tensor& t) { return static_cast<float*>(t.data()); }

// A model error naming the node unless `t` is float32: "the CUDA backend <does>, got <dtype>",
// e.g. does = "pools float32 tensors".
inline void check_float32(const Tensor& t, const Node& node, const char* does) {
  CBT_MODEL_CHECK(t.dtype() == DType::Float32, "node ", node.describe(), ": the CUDA backend ", does, ", got ",
                  dtype_name(t.dtype()));
}

// Whether backward output k is allocated and asked for (the gradient rules' mask).
inline bool output_needed(const KernelContext& ctx, size_t k) {
  auto mask = ctx.node.attrs.get_ints("outputs_needed", {1, 1, 1});
  return ctx.has_out(k) && (k >= mask.size() || mask[k] != 0);
}

__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in
// thread 0. The fixed tree order keeps reductions deterministic. `shared` holds 32 doubles.
__device__ __forceinline__ double block_sum(double v, double* shared) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // `shared` may still be read by a previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? shared[threadIdx.x] : 0.0;
  if (warp == 0) v = warp_sum(v);
  return v;
}

// block_sum, with the result returned to every thread.
__device__ __forceinline__ double block_sum_all(double v, double* shared) {
  v = block_sum(v, shared);
  __syncthreads();
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  return shared[0];
}

// A tensor viewed as (N, C, S) for per-channel reductions over N and S: each channel's
// N*S elements are split into `chunks` contiguous ranges, one block each.
struct ChannelSplit {
  int64_t N = 1, C = 1, S = 1, chunks = 1;
  ChannelSplit(int64_t n, int64_t c, int64_t s) : N(n), C(c), S(s) {
    // About four blocks per SM over all channels, but no block with under ~1024 elements.
    int64_t per_channel = n * s, want = std::max<int64_t>(1, 528 / std::max<int64_t>(c, 1));
    chunks = std::clamp<int64_t>((per_channel + 1023) / 1024, 1, want);
  }
  int64_t blocks() const { return C * chunks; }
};

// Whether flat indices of a tensor of `n` elements fit 32-bit arithmetic (cheaper divisions).
__host__ __device__ inline bool fits_32(int64_t n) { return n < (int64_t{1} << 31); }

// Sum of f(flat index of (n, c, s), c) over chunk b of channel c, in double, valid in thread
// 0; the fixed order of the sum keeps it deterministic. `shared` holds 32 doubles.
template <class F>
__device__ double2 chunk_sum(const ChannelSplit& d, const F& f, int64_t c, int64_t b, double* shared) {
  int64_t count = d.N * d.S, lo = count * b / d.chunks, hi = count * (b + 1) / d.chunks;
  double a0 = 0, a1 = 0;
  if (fits_32(count * d.C)) {
    const uint32_t S = static_cast<uint32_t>(d.S), C = static_cast<uint32_t>(d.C);
    for (uint32_t j = static_cast<uint32_t>(lo) + threadIdx.x; j < static_cast<uint32_t>(hi); j += blockDim.x) {
      uint32_t n = j / S, s = j - n * S;
      double2 v = f(static_cast<int64_t>((n * C + static_cast<uint32_t>(c)) * S + s), c);
      a0 += v.x, a1 += v.y;
    }
  } else {
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) {
      int64_t n = j / d.S, s = j - n * d.S;
      double2 v = f((n * d.C + c) * d.S + s, c);
      a0 += v.x, a1 += v.y;
    }
  }
  a0 = block_sum(a0, shared);
  a1 = block_sum(a1, shared);
  return make_double2(a0, a1);
}

// Sum of the chunks of channel c, in chunk order (read through L2: other blocks wrote them).
__device__ __forceinline__ double2 channel_total(const double2* partial, int64_t chunks, int64_t c) {
  double2 t = make_double2(0, 0);
  for (int64_t b = 0; b < chunks; ++b) {
    double2 v = __ldcg(partial + c * chunks + b);
    t.x += v.x, t.y += v.y;
  }
  return t;
}

// The chunk sums (chunk_sum) and the per-channel finish in one launch: the last block of
// channel c to finish (arrivals[c] counts them; zero before, zero again after) adds the
// chunks' sums in chunk order and calls fin(c, total). Which block finishes last varies, the
// order of the sum does not: deterministic.
template <class F, class Fin>
__global__ void channel_reduce_kernel(ChannelSplit d, F f, double2* partial, unsigned* arrivals, Fin fin) {
  __shared__ double shared[32];
  __shared__ bool last;
  int64_t c = blockIdx.x / d.chunks;
  double2 sum = chunk_sum(d, f, c, blockIdx.x % d.chunks, shared);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = sum;
    __threadfence();  // the partial is visible before the arrival is counted
    last = atomicAdd(arrivals + c, 1u) == static_cast<unsigned>(d.chunks - 1);
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();
  double2 t = channel_total(partial, d.chunks, c);
  arrivals[c] = 0;  // ready for the next launch (CUDA-graph replays included)
  fin(c, t);
}

// Zeroed arrival counters for channel_reduce of up to `channels` channels, kept in `owner`
// across runs: allocated and zeroed once, outside a CUDA-graph capture (every launch leaves
// them zero again). While capturing without them, or without an owner: zeroed scratch (a
// memset on the stream).
inline unsigned* arrival_counters(std::shared_ptr<void>* owner, const CudaContext& cc, Scratch& scratch,
                                  int64_t channels) {
  if (owner && *owner) return static_cast<unsigned*>(owner->get());
  const size_t bytes = static_cast<size_t>(channels) * sizeof(unsigned);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  CBT_CUDA_CHECK(cudaStreamIsCapturing(cc.stream, &capturing));
  unsigned* a = nullptr;
  if (!owner || capturing != cudaStreamCaptureStatusNone) {
    a = scratch.take<unsigned>(channels, "arrival counters");
  } else {
    CBT_CUDA_CHECK(cudaMalloc(&a, bytes));
    const int device = cc.device;
    *owner = std::shared_ptr<void>(a, [device](void* p) {
      int current = 0;
      (void)cudaGetDevice(&current);
      (void)cudaSetDevice(device);
      (void)cudaFree(p);
      (void)cudaSetDevice(current);
    });
  }
  CBT_CUDA_CHECK(cudaMemsetAsync(a, 0, bytes, cc.stream));
  return a;
}

// The same, kept in the node's state.
inline unsigned* arrival_counters(KernelContext& ctx, const CudaContext& cc, Scratch& scratch, int64_t channels) {
  return arrival_counters(ctx.state, cc, scratch, channels);
}

// Launches channel_reduce_kernel on the context's stream.
template <class F, class Fin>
void channel_reduce(const CudaContext& cc, const ChannelSplit& d, F f, double2* partial, unsigned* arrivals, Fin fin) {
  channel_reduce_kernel<<<static_cast<unsigned>(d.blocks()), kThreads, 0, cc.stream>>>(d, f, partial, arrivals, fin);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace cbt::cuda
