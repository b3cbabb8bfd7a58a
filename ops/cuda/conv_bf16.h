// What a convolution stored as bfloat16 channels-last (--precision bf16, graph/channels_last.h)
// changes in the CUDA path: which nodes are, the checks of their tensors, the descriptors and
// math types of either storage. Everything else
// (plans, choices, engines, runs) is shared with the float32 convolutions (conv.cu).
#pragma once
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>

#include "ops/cuda/conv_geom.h"
#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/cudnn_util.h"
#include "ops/kernel.h"

namespace cbt::cuda {

// BFloat16Nhwc for a Conv or ConvGrad that carries channels_last=1, else (and always for a
// ConvTranspose) Float32Nchw.
ConvStorage conv_storage(const Node& node, bool transpose);

// The checks of a Conv (`grad` false) or ConvGrad node's tensors before it runs: X float32 for
// a float32 node, as before; for a channels-last one, every 4-D tensor bfloat16 (X, W, Y; dY,
// X, W and the dX, dW asked for), no bias, no bias gradient, no fused Relu.
void check_conv_tensors(const KernelContext& ctx, bool grad);

// The legacy API's image, grid and filter descriptors of `g` in its storage (the image of its
// padded extent where it pads explicitly, which a channels-last convolution refuses).
void set_conv_descriptors(const TensorDesc& image, const TensorDesc& grid, const FilterDesc& filter, const ConvGeom& g);

// The math type a plan's descriptor starts with, and its legacy fallback algorithm's: FMA for
// float32 (TF32 tensor cores with `tf32`); for bfloat16 tensor cores allowed.
cudnnMathType_t conv_default_math(const ConvGeom& g, bool tf32);
// Whether a legacy candidate of that math type may run: float32 as conv_default_math says;
// bfloat16 any but the one that converts float32 inputs to half precision.
bool conv_math_allowed(cudnnMathType_t math, const ConvGeom& g, bool tf32);

// The engine search's view of `g` (its padded extent where it pads explicitly).
EngineConv engine_conv(const ConvGeom& g);

}  // namespace cbt::cuda
