// The dims of SoftmaxAttention's operands (graph/softmax_attention.h).
#include "graph/softmax_attention.h"

#include <algorithm>

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

}  // namespace cbt
