// Shared helpers of the CUDA kernels: launch geometry and grid-stride loops.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

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

}  // namespace cbt::cuda

#define CBT_GRID_STRIDE_LOOP(i, n)                                                       \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
