// Batch gather on the GPU: samples picked by an index array from a device-resident data set.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cbt::cuda {

// x[b, :] = images[indices[b], :] and y[b] = labels[indices[b]] for b < count, on `stream`.
// images: (N, per) float32; labels: (N) int64; indices: (count) int64 on the device, each in
// [0, N) (checked by the caller when it uploads them); x: (count, per); y: (count).
void gather_batch(const float* images, const int64_t* labels, int64_t per, const int64_t* indices, int64_t count,
                  float* x, int64_t* y, cudaStream_t stream);

// One image sample: channels x height x width, channels first (NCHW) or last (NHWC).
struct ImageGeometry {
  int64_t channels, height, width;
  bool channels_last;
};

// gather_batch with augmentation: sample b is images[indices[b]] shifted by (dy, dx) with
// zeros outside, then mirrored left-right when flip, where (dy, dx, flip) =
// choices[3b .. 3b+2] (device memory). The CPU specification is runtime/augment.h's
// augment_sample.
void gather_augment_batch(const float* images, const int64_t* labels, ImageGeometry g, const int64_t* indices,
                          const int32_t* choices, int64_t count, float* x, int64_t* y, cudaStream_t stream);

}  // namespace cbt::cuda
