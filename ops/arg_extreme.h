// ArgMax/ArgMin's rule, shared by the CPU and CUDA kernels so that both pick the same index
// along the axis (ops/axis_view.h): the first extreme wins a tie (the last with
// select_last_index), and a NaN wins over every number, as numpy's.
#pragma once
#include <cstdint>

#include "ops/axis_view.h"

namespace cbt {

// Whether v, at a later index than the best so far, takes its place.
template <bool Max, class T>
constexpr bool takes_over(T v, T best, bool select_last) {
  if (best != best) return select_last && v != v;  // a NaN, once there, stays (or the last NaN)
  if (v != v) return true;
  return Max ? (v > best || (select_last && v == best)) : (v < best || (select_last && v == best));
}

// The index along the axis of the extreme of x[o * len * inner + k * inner + i], k = 0..len-1.
template <bool Max, class T>
constexpr int64_t arg_extreme_at(const T* x, const AxisView& a, int64_t o, int64_t i, bool select_last) {
  const T* p = x + o * a.len * a.inner + i;
  T best = p[0];
  int64_t at = 0;
  for (int64_t k = 1; k < a.len; ++k)
    if (takes_over<Max>(p[k * a.inner], best, select_last)) best = p[k * a.inner], at = k;
  return at;
}

}  // namespace cbt
