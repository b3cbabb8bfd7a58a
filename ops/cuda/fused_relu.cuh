// The Relu that graph/fusion.h folds into a Gemm or Conv (relu=1), computed as the Relu and
// ReluGrad kernels compute it (activation.cu), so that a fused node gives the unfused pair's
// values.
#pragma once
#include "ops/cuda/dense_util.cuh"

namespace cbt::cuda {

// Whether the node carries a fused Relu.
inline bool fused_relu(const KernelContext& ctx) { return ctx.node.attrs.get_int("relu", 0) != 0; }

__device__ __forceinline__ float relu_of(float v) { return v > 0 ? v : 0.0f; }
__device__ __forceinline__ float relu_grad_of(float dy, float y) { return y > 0 ? dy : 0.0f; }

// y = max(y, 0) over n elements, on the context's stream.
void relu_in_place(const CudaContext& cc, float* y, int64_t n);
// The gradient the products of a fused node's backward use: dY (input 0) itself without
// relu=1, else dY where the fused output (input `y_input`) > 0, written to output
// `masked_output` (when `mask` is false the caller's own kernel writes it there).
const float* fused_relu_grad(KernelContext& ctx, size_t y_input, size_t masked_output, bool mask = true);

}  // namespace cbt::cuda
