// The geometry of one convolution as the CUDA kernels see it (ops/cuda/conv.cu builds it from a
// node, own_conv_choice.cu from a choice's key).
#pragma once
#include <cstddef>
#include <cstdint>

// The sizes are read on the host and in CUDA kernels alike.
#if defined(__CUDACC__)
#define CBT_CONV_HD __host__ __device__
#else
#define CBT_CONV_HD
#endif

namespace cbt::cuda {

// How a convolution's tensors are stored: float32 (N, C, H, W), or for --precision bf16
// (graph/channels_last.h) bfloat16 channels-last: images (N, H, W, C), filters (M, KH, KW, C/G).
enum class ConvStorage : uint8_t { Float32Nchw, BFloat16Nhwc };

inline size_t conv_element_bytes(ConvStorage s) { return s == ConvStorage::BFloat16Nhwc ? 2 : 4; }

// One convolution in cuDNN's terms, 2-D (a 1-D one has H = KH = OH = 1): the "image"
// (N, Ci, H, W) convolved by the filter (Cg, Ci/G, KH, KW) gives the "grid" (N, Cg, OH, OW).
// Conv: image = X, grid = Y. ConvTranspose: image = Y, grid = X (its weight layout
// (C, M/G, k) is exactly that filter). PH/PW are the leading pads, as in the CPU kernel.
struct ConvGeom {
  int64_t N = 1, Ci = 1, Cg = 1, G = 1, H = 1, W = 1, KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PH = 0, PW = 0,
          OH = 1, OW = 1;
  // cuDNN pads symmetrically; when the leading pads do not give the grid size, the image is
  // padded into the workspace as (N, Ci, HP, WP) and convolved without padding.
  bool explicit_pad = false;
  int64_t HP = 1, WP = 1;
  ConvStorage storage = ConvStorage::Float32Nchw;  // cbtrain's own kernels take Float32Nchw only
  CBT_CONV_HD int64_t image_numel() const { return N * Ci * H * W; }
  CBT_CONV_HD int64_t padded_numel() const { return N * Ci * HP * WP; }
};

}  // namespace cbt::cuda
