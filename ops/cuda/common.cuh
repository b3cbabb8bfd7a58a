// Shared helpers of the CUDA kernels: launch geometry, grid-stride loops and the offsets of
// N-d index plans.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "ops/cuda/cuda_context.h"
#include "ops/kernel.h"

namespace cbt::cuda {

inline constexpr int kThreads = 256;

// Blocks for n elements with grid-stride loops (capped: more blocks than SMs x 32 only
// add scheduling cost).
inline int blocks_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(b, 132 * 32)));
}

#if defined(__CUDACC__)
// Grid-stride loop calling f(i) with a 32-bit index when n allows it (the stride is far below
// 2^31, so i + stride cannot wrap), else a 64-bit one: 32-bit division, which the offsets
// below do once a dim, is several times cheaper than 64-bit.
template <class F>
__device__ __forceinline__ void grid_stride(int64_t n, F&& f) {
  if (n <= INT32_MAX) {
    const uint32_t stride = blockDim.x * gridDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < static_cast<uint32_t>(n); i += stride) f(i);
  } else {
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<int64_t>(blockDim.x) * gridDim.x)
      f(i);
  }
}

// Offsets of the linear index i (row-major over p.dims[0, p.rank)) in each of the first K
// operands of an index plan: any struct with rank, dims[D] and strides[operands][D], the
// strides in elements (the shape ops' NdPlan, the element-wise Layout). I is uint32_t or
// int64_t (grid_stride's index); the loop is unrolled over D so the plan stays in the
// parameter bank.
template <int K, class Plan, class I>
__device__ __forceinline__ void plan_offsets(const Plan& p, I i, int64_t (&off)[K]) {
  constexpr int kDims = static_cast<int>(std::extent_v<decltype(Plan::dims)>);
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] = 0;
#pragma unroll
  for (int d = kDims - 1; d >= 0; --d) {
    if (d < p.rank) {
      const I dim = static_cast<I>(p.dims[d]);
      const I q = i / dim;
      const auto idx = static_cast<int64_t>(i - q * dim);
      i = q;
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += idx * p.strides[k][d];
    }
  }
}
#endif

}  // namespace cbt::cuda

#define CBT_GRID_STRIDE_LOOP(i, n)                                                       \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
