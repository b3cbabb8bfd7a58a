// ScatterElements' rule, shared by the CPU and CUDA kernels so that both write alike: the
// updates (and indices) of shape U go into data of shape D (same rank, U <= D but along the
// axis) at the index read along the axis. Work goes by line, a line being one position of U's
// other axes: lines write disjoint elements, and along a line the updates go in order (with
// reduction "none" a repeated index keeps the last update, as on the CPU; the others combine
// as ops/scatter_reduction.h says). An index out of [-D[axis], D[axis]) is skipped (a GPU
// kernel cannot stop the program to refuse it).
#pragma once
#include <cstdint>

#include "graph/tensor.h"
#include "ops/scatter_reduction.h"

namespace cbt {

inline constexpr int kScatterMaxRank = 8;

struct ScatterView {
  int rank = 0, axis = 0;
  int64_t u_dims[kScatterMaxRank] = {}, u_strides[kScatterMaxRank] = {}, d_strides[kScatterMaxRank] = {};
  int64_t d_axis = 1;  // D[axis]
  int64_t lines = 1;   // the product of U's dims but the axis
  ScatterView(const Shape& data, const Shape& updates, int64_t ax) {
    rank = static_cast<int>(data.size());
    axis = static_cast<int>(ax < 0 ? ax + rank : ax);
    int64_t us = 1, ds = 1;
    for (int r = rank - 1; r >= 0; --r) {
      u_dims[r] = updates[r], u_strides[r] = us, d_strides[r] = ds;
      us *= updates[r], ds *= data[r];
      if (r != axis) lines *= updates[r];
    }
    d_axis = data[axis];
  }
};

// Where line l starts in U (its element at axis index 0) and in D (at axis index 0).
constexpr void scatter_line_bases(const ScatterView& v, int64_t l, int64_t& u, int64_t& d) {
  u = 0, d = 0;
  for (int r = v.rank - 1; r >= 0; --r) {
    if (r == v.axis) continue;
    const int64_t c = l % v.u_dims[r];
    l /= v.u_dims[r];
    u += c * v.u_strides[r], d += c * v.d_strides[r];
  }
}

// The element of D that update `at` (line base d) goes to, or -1 (an index out of range).
template <class I>
constexpr int64_t scatter_target(const ScatterView& v, const I* indices, int64_t at, int64_t d) {
  auto t = static_cast<int64_t>(indices[at]);
  if (t < 0) t += v.d_axis;
  return t < 0 || t >= v.d_axis ? -1 : d + t * v.d_strides[v.axis];
}

// The element of D that update `at` (a flat index into U) goes to, or -1.
template <class I>
constexpr int64_t scatter_update_target(const ScatterView& v, const I* indices, int64_t at) {
  int64_t d = 0, rest = at;
  for (int r = v.rank - 1; r >= 0; --r) {
    const int64_t c = rest % v.u_dims[r];
    rest /= v.u_dims[r];
    if (r != v.axis) d += c * v.d_strides[r];
  }
  return scatter_target(v, indices, at, d);
}

// Line l of the forward: y (a copy of data) takes the updates, or combines them (reduction r).
template <class T, class I>
constexpr void scatter_line(const ScatterView& v, int64_t l, const I* indices, const T* updates, T* y,
                            ScatterReduction r) {
  int64_t u = 0, d = 0;
  scatter_line_bases(v, l, u, d);
  for (int64_t s = 0; s < v.u_dims[v.axis]; ++s) {
    const int64_t at = u + s * v.u_strides[v.axis], t = scatter_target(v, indices, at, d);
    if (t >= 0) y[t] = scatter_combine(r, y[t], updates[at]);
  }
}

// Line l of the tally of mul, max and min (a and b: D's elements, started by tally_start):
// the updates added in order, as the forward combines them.
template <class T, class I>
constexpr void scatter_tally_line(const ScatterView& v, int64_t l, const I* indices, const T* updates, T* a, T* b,
                                  ScatterReduction r) {
  int64_t u = 0, d = 0;
  scatter_line_bases(v, l, u, d);
  for (int64_t s = 0; s < v.u_dims[v.axis]; ++s) {
    const int64_t at = u + s * v.u_strides[v.axis], t = scatter_target(v, indices, at, d);
    if (t >= 0) tally_add(r, updates[at], a[t], b[t]);
  }
}

// Line l of the backward of none and add: dUpdates gathers dY at the targets (0 where skipped);
// with reduction "none" the overwritten elements of dData (a copy of dY) become 0. Either may
// be null.
template <class T, class I>
constexpr void scatter_grad_line(const ScatterView& v, int64_t l, const I* indices, const T* dy, T* d_data,
                                 T* d_updates, ScatterReduction r) {
  int64_t u = 0, d = 0;
  scatter_line_bases(v, l, u, d);
  for (int64_t s = 0; s < v.u_dims[v.axis]; ++s) {
    const int64_t at = u + s * v.u_strides[v.axis], t = scatter_target(v, indices, at, d);
    if (d_updates) d_updates[at] = t >= 0 ? dy[t] : T(0);
    if (d_data && r == ScatterReduction::None && t >= 0) d_data[t] = T(0);
  }
}

// Calls f.template operator()<I>() for the index type of `t` (int64 or int32; host code).
template <class F>
void dispatch_index(const Tensor& t, F&& f) {
  if (t.dtype() == DType::Int32)
    f.template operator()<int32_t>();
  else
    f.template operator()<int64_t>();
}

}  // namespace cbt
