// ArgMax/ArgMin's view of X and their rule, shared by the CPU and CUDA kernels so that both
// pick the same index: X viewed as (outer, len, inner) around the axis; the first extreme
// wins a tie (the last with select_last_index), and a NaN wins over every number, as numpy's.
#pragma once
#include <cstdint>

#include "graph/shape_utils.h"
#include "graph/tensor.h"

namespace cbt {

struct ArgAxis {
  int64_t outer = 1, len = 1, inner = 1;
  ArgAxis(const Shape& x, int64_t axis) {
    const auto rank = static_cast<int64_t>(x.size());
    if (axis < 0) axis += rank;
    outer = dims_product(x, 0, axis);
    len = x[axis];
    inner = dims_product(x, axis + 1, rank);
  }
};

// Whether v, at a later index than the best so far, takes its place.
template <bool Max, class T>
constexpr bool takes_over(T v, T best, bool select_last) {
  if (best != best) return select_last && v != v;  // a NaN, once there, stays (or the last NaN)
  if (v != v) return true;
  return Max ? (v > best || (select_last && v == best)) : (v < best || (select_last && v == best));
}

// The index along the axis of the extreme of x[o * len * inner + k * inner + i], k = 0..len-1.
template <bool Max, class T>
constexpr int64_t arg_extreme_at(const T* x, const ArgAxis& a, int64_t o, int64_t i, bool select_last) {
  const T* p = x + o * a.len * a.inner + i;
  T best = p[0];
  int64_t at = 0;
  for (int64_t k = 1; k < a.len; ++k)
    if (takes_over<Max>(p[k * a.inner], best, select_last)) best = p[k * a.inner], at = k;
  return at;
}

}  // namespace cbt
