// Helpers shared by the dense-family CUDA kernels (conv, matmul, pool, norm): the
// outputs_needed mask, a bump allocator over the context's workspace, block reductions.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "ops/cuda/common.cuh"

namespace cbt::cuda {

// Whether backward output k is allocated and asked for (the gradient rules' mask).
inline bool output_needed(const KernelContext& ctx, size_t k) {
  auto mask = ctx.node.attrs.get_ints("outputs_needed", {1, 1, 1});
  return ctx.has_out(k) && (k >= mask.size() || mask[k] != 0);
}

// Carves 256-byte aligned temporaries out of cc.workspace for the duration of one call.
class Scratch {
 public:
  explicit Scratch(const CudaContext& cc)
      : base_(static_cast<std::byte*>(cc.workspace)), size_(cc.workspace_bytes) {}
  static size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }
  template <class T>
  T* take(int64_t count, const char* what) {
    size_t bytes = aligned(static_cast<size_t>(count) * sizeof(T));
    CBT_MODEL_CHECK(used_ + bytes <= size_, "CUDA workspace too small for ", what, ": needs ",
                    used_ + bytes, " bytes, has ", size_, " (raise the workspace size)");
    T* p = reinterpret_cast<T*>(base_ + used_);
    used_ += bytes;
    return p;
  }
  size_t left() const { return size_ - used_; }
  std::byte* next() const { return base_ + used_; }

 private:
  std::byte* base_;
  size_t size_;
  size_t used_ = 0;
};

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

// partial[c * chunks + b] = sum of f(flat index of (n, c, s)) over chunk b of channel c, in
// double; summed in a fixed order, so the result is deterministic.
template <class F>
__global__ void channel_partials_kernel(ChannelSplit d, F f, double2* partial) {
  __shared__ double shared[32];
  int64_t c = blockIdx.x / d.chunks, b = blockIdx.x % d.chunks, count = d.N * d.S;
  int64_t lo = count * b / d.chunks, hi = count * (b + 1) / d.chunks;
  double a0 = 0, a1 = 0;
  for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) {
    int64_t n = j / d.S, s = j - n * d.S;
    double2 v = f((n * d.C + c) * d.S + s, c);
    a0 += v.x, a1 += v.y;
  }
  a0 = block_sum(a0, shared);
  a1 = block_sum(a1, shared);
  if (threadIdx.x == 0) partial[blockIdx.x] = make_double2(a0, a1);
}

// Launches channel_partials_kernel on the context's stream.
template <class F>
void channel_partials(const CudaContext& cc, const ChannelSplit& d, F f, double2* partial) {
  channel_partials_kernel<<<static_cast<unsigned>(d.blocks()), kThreads, 0, cc.stream>>>(d, f,
                                                                                     partial);
  CBT_CUDA_CHECK_LAUNCH();
}

// Sum of the chunks of channel c, in chunk order.
__device__ __forceinline__ double2 channel_total(const double2* partial, int64_t chunks,
                                                 int64_t c) {
  double2 t = make_double2(0, 0);
  for (int64_t b = 0; b < chunks; ++b) t.x += partial[c * chunks + b].x, t.y += partial[c * chunks + b].y;
  return t;
}

}  // namespace cbt::cuda
