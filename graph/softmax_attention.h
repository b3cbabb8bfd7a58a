// SoftmaxAttention (cbtrain's domain): O = softmax(X Y) V for each matrix of a batch, along
// the last axis: the core of scaled dot-product attention as exporters write it (MatMul,
// Softmax, MatMul; the scale and the transpose of K stay the model's own nodes). fuse_attention
// (graph/fusion.h) makes it where one matrix's operands and intermediates fit a GPU block's
// shared memory; its gradient SoftmaxAttentionGrad recomputes the probabilities.
#pragma once
#include <optional>

#include "graph/tensor.h"

namespace cbt {

// X (batch..., S, D), Y (batch..., D, T), V (batch..., T, E) -> O (batch..., S, E).
struct AttentionDims {
  int64_t batch = 1, S = 0, D = 0, T = 0, E = 0;
  // The floats one matrix's kernels keep at hand: X, Y, V, dO, the probabilities and their
  // gradient (the backward pass, the larger).
  int64_t working_floats() const { return S * D + D * T + T * E + S * E + 2 * S * T; }
};

// At most 46 KiB of a block's 48 KiB of static shared memory.
inline constexpr int64_t kAttentionMaxFloats = 11776;

// The dims of X, Y, V: the same rank (at least 2) and leading dims, the inner dims agreeing,
// none zero; nullopt otherwise.
std::optional<AttentionDims> attention_dims(const Shape& x, const Shape& y, const Shape& v);

}  // namespace cbt
