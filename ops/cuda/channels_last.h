// The channels-last conversions' element-wise widening (channels_last.cu) for other CUDA code:
// the engine search compares bfloat16 results as floats.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace cbt::cuda {

// out: `count` floats = in: `count` bfloat16 values (as their 16 bits), on `stream`.
void widen_bf16(const void* in, void* out, size_t count, cudaStream_t stream);

}  // namespace cbt::cuda
