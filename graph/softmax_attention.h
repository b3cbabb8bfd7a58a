// SoftmaxAttention (cbtrain's domain): O = softmax(X Y + B) V for each matrix of a batch, along
// the last axis, B optional (a mask or a position bias added to the scores, broadcast to them):
// the core of scaled dot-product attention as exporters write it (MatMul, Add, Softmax, MatMul;
// the scale and the transpose of K stay the model's own nodes). fuse_attention (graph/fusion.h)
// makes it where one matrix's operands and intermediates fit a GPU block's shared memory; its
// gradient SoftmaxAttentionGrad recomputes the probabilities, and writes the scores' gradient
// where B's is wanted (summed to B's shape by the graph).
#pragma once
#include <optional>

#include "graph/tensor.h"

// The bias's offsets are computed on the host and in CUDA kernels alike.
#if defined(__CUDACC__)
#define CBT_ATTENTION_HD __host__ __device__
#else
#define CBT_ATTENTION_HD
#endif

namespace cbt {

// X (batch..., S, D), Y (batch..., D, T), V (batch..., T, E) -> O (batch..., S, E).
struct AttentionDims {
  int64_t batch = 1, S = 0, D = 0, T = 0, E = 0;
  // The floats one matrix's kernels keep at hand: X, Y, V, dO, the probabilities and their
  // gradient (the backward pass, the larger).
  CBT_ATTENTION_HD int64_t working_floats() const { return S * D + D * T + T * E + S * E + 2 * S * T; }
};

// At most 46 KiB of a block's 48 KiB of static shared memory.
inline constexpr int64_t kAttentionMaxFloats = 11776;

// The dims of X, Y, V: the same rank (at least 2) and leading dims, the inner dims agreeing,
// none zero; nullopt otherwise.
std::optional<AttentionDims> attention_dims(const Shape& x, const Shape& y, const Shape& v);

// The scores' shape (batch..., S, T) of X and Y.
Shape attention_scores_shape(const Shape& x, const Shape& y);

// Where B is read for score (b, s, t) of the flattened batch: b's coordinates over the batch
// dims times their strides (0 where B is broadcast), plus s and t times theirs.
struct ScoreBias {
  static constexpr int kMaxBatchDims = 6;
  int batch_dims = 0;
  int64_t dims[kMaxBatchDims] = {}, strides[kMaxBatchDims] = {};
  int64_t s_stride = 0, t_stride = 0;
  CBT_ATTENTION_HD int64_t offset(int64_t b, int64_t s, int64_t t) const {
    return batch_offset(b) + s * s_stride + t * t_stride;
  }
  // Where matrix b's scores start in B: a kernel computes it once a matrix.
  CBT_ATTENTION_HD int64_t batch_offset(int64_t b) const {
    int64_t off = 0;
    for (int d = batch_dims - 1; d >= 0; --d) {
      off += (b % dims[d]) * strides[d];
      b /= dims[d];
    }
    return off;
  }
};

// B's layout against `scores` when B broadcasts to them unchanged (rank at most the scores',
// at most kMaxBatchDims batch dims); nullopt otherwise.
std::optional<ScoreBias> score_bias_layout(const Shape& b, const Shape& scores);

}  // namespace cbt
