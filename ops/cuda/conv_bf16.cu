// The bfloat16 channels-last side of the CUDA convolutions (conv_bf16.h).
#include "ops/cuda/conv_bf16.h"

#include <algorithm>
#include <limits>

#include "graph/channels_last.h"
#include "ops/cuda/common.cuh"
#include "ops/cuda/dense_util.cuh"

namespace cbt::cuda {
namespace {

// Packed bfloat16 tensor of logical dimensions (n, c, h, w) stored (n, h, w, c); a filter
// (k, c, h, w) stored (k, h, w, c).
void set_nhwc_bf16(const TensorDesc& d, int64_t n, int64_t c, int64_t h, int64_t w) {
  CBT_MODEL_CHECK(n * c * h * w <= std::numeric_limits<int>::max(), "tensor of ", n * c * h * w,
                  " elements is too large for cuDNN");
  CBT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, cudnn_dim(n), cudnn_dim(c),
                                             cudnn_dim(h), cudnn_dim(w)));
}
void set_filter_nhwc_bf16(const FilterDesc& d, int64_t k, int64_t c, int64_t h, int64_t w) {
  CBT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, cudnn_dim(k), cudnn_dim(c),
                                             cudnn_dim(h), cudnn_dim(w)));
}

}  // namespace

ConvStorage conv_storage(const Node& node, bool transpose) {
  return !transpose && node.attrs.get_int(kChannelsLastAttr, 0) != 0 ? ConvStorage::BFloat16Nhwc
                                                                     : ConvStorage::Float32Nchw;
}

void check_conv_tensors(const KernelContext& ctx, bool grad) {
  const Node& node = ctx.node;
  if (conv_storage(node, false) == ConvStorage::Float32Nchw)
    return check_float32(ctx.in(grad ? 1 : 0), node, "runs convolutions in float32");
  // The graph pass (graph/channels_last.cpp) marks only nodes of this form: anything else is its bug.
  auto bf16 = [&](const Tensor& t, const char* what) {
    CBT_CHECK(t.dtype() == DType::BFloat16 && t.shape().size() == 4, "channels-last node ", node.describe(), ": ", what,
              " is ", dtype_name(t.dtype()), " ", shape_str(t.shape()), ", not 4-D bfloat16");
  };
  CBT_CHECK(node.attrs.get_int("relu", 0) == 0, "channels-last node ", node.describe(), " has a fused Relu");
  if (!grad) {
    bf16(ctx.in(0), "X");
    bf16(ctx.in(1), "W");
    bf16(ctx.out(0), "Y");
    CBT_CHECK(!ctx.has_in(2), "channels-last node ", node.describe(), " has a bias");
    return;
  }
  bf16(ctx.in(0), "dY");
  bf16(ctx.in(1), "X");
  bf16(ctx.in(2), "W");
  if (output_needed(ctx, 0)) bf16(ctx.out(0), "dX");
  if (output_needed(ctx, 1)) bf16(ctx.out(1), "dW");
  CBT_CHECK(!output_needed(ctx, 2), "channels-last node ", node.describe(), " asks for a bias gradient");
}

void set_conv_descriptors(const TensorDesc& image, const TensorDesc& grid, const FilterDesc& filter,
                          const ConvGeom& g) {
  const int64_t h = g.explicit_pad ? g.HP : g.H, w = g.explicit_pad ? g.WP : g.W;
  if (g.storage == ConvStorage::Float32Nchw) {
    set_nchw(image, g.N, g.Ci, h, w);
    set_nchw(grid, g.N, g.Cg, g.OH, g.OW);
    set_filter(filter, g.Cg, g.Ci / g.G, g.KH, g.KW);
    return;
  }
  // Explicit padding copies a float32 NCHW image (conv.cu's pad_image_kernel).
  CBT_MODEL_CHECK(!g.explicit_pad, "a bfloat16 channels-last convolution of image (", g.N, ", ", g.Ci, ", ", g.H, ", ",
                  g.W, ") needs padding that cuDNN cannot express (not symmetric); train it with --precision fp32");
  set_nhwc_bf16(image, g.N, g.Ci, h, w);
  set_nhwc_bf16(grid, g.N, g.Cg, g.OH, g.OW);
  set_filter_nhwc_bf16(filter, g.Cg, g.Ci / g.G, g.KH, g.KW);
}

cudnnMathType_t conv_default_math(const ConvGeom& g, bool tf32) {
  return g.storage == ConvStorage::BFloat16Nhwc || tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

bool conv_math_allowed(cudnnMathType_t math, const ConvGeom& g, bool tf32) {
  if (g.storage == ConvStorage::BFloat16Nhwc) return math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  return tf32 || math == CUDNN_FMA_MATH;
}

EngineConv engine_conv(const ConvGeom& g) {
  EngineConv c;
  const int64_t image[4] = {g.N, g.Ci, g.explicit_pad ? g.HP : g.H, g.explicit_pad ? g.WP : g.W};
  const int64_t filter[4] = {g.Cg, g.Ci / g.G, g.KH, g.KW}, grid[4] = {g.N, g.Cg, g.OH, g.OW};
  std::copy(image, image + 4, c.image);
  std::copy(filter, filter + 4, c.filter);
  std::copy(grid, grid + 4, c.grid);
  c.pad[0] = g.explicit_pad ? 0 : g.PH, c.pad[1] = g.explicit_pad ? 0 : g.PW;
  c.stride[0] = g.SH, c.stride[1] = g.SW, c.dilation[0] = g.DH, c.dilation[1] = g.DW;
  c.storage = g.storage;
  return c;
}

}  // namespace cbt::cuda
