// Batch gather from a device-resident data set (see ops/cuda/data.h).
#include "ops/cuda/common.cuh"
#include "ops/cuda/data.h"

namespace cbt::cuda {

namespace {

// One grid-stride pass over the batch's elements; the first `count` threads also copy the
// labels.
__global__ void gather_kernel(const float* __restrict__ images, const int64_t* __restrict__ labels,
                              int64_t per, const int64_t* __restrict__ indices, int64_t count,
                              float* __restrict__ x, int64_t* __restrict__ y) {
  const int64_t total = count * per;
  CBT_GRID_STRIDE_LOOP(i, total) {
    const int64_t b = i / per, e = i - b * per;
    x[i] = images[indices[b] * per + e];
  }
  CBT_GRID_STRIDE_LOOP(b, count) y[b] = labels[indices[b]];
}

}  // namespace

void gather_batch(const float* images, const int64_t* labels, int64_t per,
                  const int64_t* indices, int64_t count, float* x, int64_t* y,
                  cudaStream_t stream) {
  if (count <= 0) return;
  gather_kernel<<<blocks_for(count * per), kThreads, 0, stream>>>(images, labels, per, indices,
                                                                  count, x, y);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace cbt::cuda
