// Batch gather on the GPU: samples picked by an index array from a device-resident data set.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cbt::cuda {

// x[b, :] = images[indices[b], :] and y[b] = labels[indices[b]] for b < count, on `stream`.
// images: (N, per) float32; labels: (N) int64; indices: (count) int64 on the device, each in
// [0, N) (checked by the caller when it uploads them); x: (count, per); y: (count).
void gather_batch(const float* images, const int64_t* labels, int64_t per,
                  const int64_t* indices, int64_t count, float* x, int64_t* y,
                  cudaStream_t stream);

}  // namespace cbt::cuda
