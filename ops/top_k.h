// TopK's rule, shared by the CPU and CUDA kernels so that both select alike: along one line of
// the axis (ops/axis_view.h) the k first elements of a total order, the largest (or smallest)
// value first, a tie going to the lower index, a NaN greater than every number (PyTorch's
// order). The selection makes k passes over the line, each taking the first element that comes
// after the previous pick: no memory, one thread a line.
#pragma once
#include <cstdint>

#include "ops/axis_view.h"

namespace cbt {

// Whether value va at index ia comes before vb at ib.
template <class T>
constexpr bool top_k_before(T va, int64_t ia, T vb, int64_t ib, bool largest) {
  const bool na = va != va, nb = vb != vb;  // NaN
  if (na || nb) return na && nb ? ia < ib : largest ? na : nb;
  if (va != vb) return largest ? va > vb : va < vb;
  return ia < ib;
}

// Line (o, i) of x: its k first elements and their indices along the axis into values and
// indices (the line (o, i) of a (outer, k, inner) layout).
template <class T>
constexpr void top_k_line(const T* x, T* values, int64_t* indices, const AxisView& a, int64_t k, int64_t o, int64_t i,
                          bool largest) {
  const T* p = x + o * a.len * a.inner + i;
  int64_t prev = -1;
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    for (int64_t s = 0; s < a.len; ++s) {
      const T v = p[s * a.inner];
      if (prev >= 0 && !top_k_before(p[prev * a.inner], prev, v, s, largest)) continue;  // taken already
      if (best < 0 || top_k_before(v, s, p[best * a.inner], best, largest)) best = s;
    }
    const int64_t at = (o * k + j) * a.inner + i;
    values[at] = p[best * a.inner];
    indices[at] = best;
    prev = best;
  }
}

// TopK's gradient along line (o, i): dX is 0 but where the values came from, which take dY.
template <class T>
constexpr void top_k_grad_line(const T* dy, const int64_t* indices, T* dx, const AxisView& a, int64_t k, int64_t o,
                               int64_t i) {
  T* q = dx + o * a.len * a.inner + i;
  for (int64_t s = 0; s < a.len; ++s) q[s * a.inner] = T(0);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t at = (o * k + j) * a.inner + i;
    q[indices[at] * a.inner] = dy[at];
  }
}

}  // namespace cbt
