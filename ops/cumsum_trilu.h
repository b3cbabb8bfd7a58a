// CumSum's and Trilu's rules, shared by the CPU and CUDA kernels so that both compute alike:
// CumSum runs along one line of the axis in T, in the order of the direction; Trilu keeps an
// element of the last two axes by its row and column.
#pragma once
#include <cstdint>

#include "ops/axis_view.h"

namespace cbt {

// y along line (o, i) of the axis: the running sum of x, from the end with `reverse`, without
// the element itself with `exclusive`.
template <class T>
constexpr void cumsum_line(const T* x, T* y, const AxisView& a, int64_t o, int64_t i, bool exclusive, bool reverse) {
  T acc = T(0);
  for (int64_t s = 0; s < a.len; ++s) {
    const int64_t k = reverse ? a.len - 1 - s : s;
    const int64_t at = (o * a.len + k) * a.inner + i;
    const T v = x[at];
    if (exclusive) {
      y[at] = acc;
      acc += v;
    } else {
      acc += v;
      y[at] = acc;
    }
  }
}

// Whether Trilu keeps the element in row r, column c: on or above diagonal k (upper), or on or
// below it.
constexpr bool trilu_keeps(int64_t r, int64_t c, int64_t k, bool upper) { return upper ? c - r >= k : c - r <= k; }

}  // namespace cbt
