// The dims of SoftmaxAttention's operands (graph/softmax_attention.h).
#include "graph/softmax_attention.h"

#include <algorithm>

#include "graph/shape_utils.h"

namespace cbt {

std::optional<AttentionDims> attention_dims(const Shape& x, const Shape& y, const Shape& v) {
  const size_t r = x.size();
  if (r < 2 || y.size() != r || v.size() != r) return std::nullopt;
  if (!std::equal(x.begin(), x.end() - 2, y.begin()) || !std::equal(x.begin(), x.end() - 2, v.begin()))
    return std::nullopt;
  AttentionDims d;
  for (size_t k = 0; k + 2 < r; ++k) d.batch *= x[k];
  d.S = x[r - 2], d.D = x[r - 1], d.T = y[r - 1], d.E = v[r - 1];
  if (y[r - 2] != d.D || v[r - 2] != d.T) return std::nullopt;
  if (d.batch <= 0 || d.S <= 0 || d.D <= 0 || d.T <= 0 || d.E <= 0) return std::nullopt;
  return d;
}

Shape attention_scores_shape(const Shape& x, const Shape& y) {
  Shape s = x;
  s.back() = y.back();
  return s;
}

std::optional<ScoreBias> score_bias_layout(const Shape& b, const Shape& scores) {
  const size_t r = scores.size();
  if (b.size() > r || r < 2 || r - 2 > static_cast<size_t>(ScoreBias::kMaxBatchDims)) return std::nullopt;
  for (size_t k = 0; k < b.size(); ++k) {
    const int64_t want = scores[r - b.size() + k];
    if (b[k] != want && b[k] != 1) return std::nullopt;
  }
  const std::vector<int64_t> st = broadcast_strides(b, scores);
  ScoreBias l;
  l.batch_dims = static_cast<int>(r - 2);
  for (size_t k = 0; k + 2 < r; ++k) l.dims[k] = scores[k], l.strides[k] = st[k];
  l.s_stride = st[r - 2], l.t_stride = st[r - 1];
  return l;
}

}  // namespace cbt
