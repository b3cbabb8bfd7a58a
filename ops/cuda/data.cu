// Batch gather from a device-resident data set (see ops/cuda/data.h).
#include "ops/cuda/data.h"

#include "ops/cuda/common.cuh"

namespace cbt::cuda {

namespace {

// One grid-stride pass over the batch's elements; the first `count` threads also copy the
// labels.
__global__ void gather_kernel(const float* __restrict__ images, const int64_t* __restrict__ labels, int64_t per,
                              const int64_t* __restrict__ indices, int64_t count, float* __restrict__ x,
                              int64_t* __restrict__ y) {
  const int64_t total = count * per;
  CBT_GRID_STRIDE_LOOP(i, total) {
    const int64_t b = i / per, e = i - b * per;
    x[i] = images[indices[b] * per + e];
  }
  CBT_GRID_STRIDE_LOOP(b, count) y[b] = labels[indices[b]];
}

// One thread per output element: decode (c, y, x) in the sample's layout, read the shifted
// (and mirrored) source element or write 0 outside the image.
__global__ void gather_augment_kernel(const float* __restrict__ images, const int64_t* __restrict__ labels,
                                      ImageGeometry g, const int64_t* __restrict__ indices,
                                      const int32_t* __restrict__ choices, int64_t count, float* __restrict__ x,
                                      int64_t* __restrict__ y) {
  const int64_t C = g.channels, H = g.height, W = g.width, per = C * H * W;
  const int64_t sc = g.channels_last ? 1 : H * W, sy = g.channels_last ? W * C : W, sx = g.channels_last ? C : 1;
  const int64_t total = count * per;
  CBT_GRID_STRIDE_LOOP(i, total) {
    const int64_t b = i / per, e = i - b * per;
    int64_t c, yy, xx;
    if (g.channels_last) {
      c = e % C;
      xx = (e / C) % W;
      yy = e / (C * W);
    } else {
      xx = e % W;
      yy = (e / W) % H;
      c = e / (H * W);
    }
    const int32_t* ch = choices + 3 * b;
    const int64_t ys = yy + ch[0], xs = (ch[2] ? W - 1 - xx : xx) + ch[1];
    const bool inside = ys >= 0 && ys < H && xs >= 0 && xs < W;
    x[i] = inside ? images[indices[b] * per + c * sc + ys * sy + xs * sx] : 0.0f;
  }
  CBT_GRID_STRIDE_LOOP(b, count) y[b] = labels[indices[b]];
}

}  // namespace

void gather_augment_batch(const float* images, const int64_t* labels, ImageGeometry g, const int64_t* indices,
                          const int32_t* choices, int64_t count, float* x, int64_t* y, cudaStream_t stream) {
  if (count <= 0) return;
  const int64_t per = g.channels * g.height * g.width;
  gather_augment_kernel<<<blocks_for(count * per), kThreads, 0, stream>>>(images, labels, g, indices, choices, count, x,
                                                                          y);
  CBT_CUDA_CHECK_LAUNCH();
}

void gather_batch(const float* images, const int64_t* labels, int64_t per, const int64_t* indices, int64_t count,
                  float* x, int64_t* y, cudaStream_t stream) {
  if (count <= 0) return;
  gather_kernel<<<blocks_for(count * per), kThreads, 0, stream>>>(images, labels, per, indices, count, x, y);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace cbt::cuda
