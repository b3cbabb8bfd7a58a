// ScatterND's and GatherND's rule, shared by the CPU and CUDA kernels: indices of shape
// (..., k) name k-tuples into data's first dims (after GatherND's batch_dims); each tuple
// addresses a slice of data (the dims after those k) of `slice` elements. A tuple with an index
// out of range addresses nothing: its scatter is skipped, its gather reads zeros (a GPU
// kernel cannot stop the program to refuse it). Reductions combine the tuples in order
// (ops/scatter_reduction.h).
#pragma once
#include <cstdint>

#include "graph/tensor.h"
#include "ops/scatter_reduction.h"

namespace cbt {

inline constexpr int kNdMaxRank = 8;

struct NdIndexView {
  int k = 0;                      // indices' last dim
  int64_t tuples = 1;             // the product of indices' other dims
  int64_t tuples_per_batch = 1;   // of one batch (GatherND's batch_dims; all of them otherwise)
  int64_t slice = 1;              // the elements a tuple addresses
  int64_t batch_stride = 0;       // data's elements of one batch
  int64_t dims[kNdMaxRank] = {};  // data's dims that the tuple indexes
  int64_t strides[kNdMaxRank] = {};
  NdIndexView(const Shape& data, const Shape& indices, int64_t batch_dims) {
    const auto b = static_cast<size_t>(batch_dims), r = data.size();
    k = static_cast<int>(indices.back());
    int64_t batches = 1;
    for (size_t d = 0; d < b; ++d) batches *= data[d];
    for (size_t d = 0; d + 1 < indices.size(); ++d) tuples *= indices[d];
    tuples_per_batch = batches > 0 ? tuples / batches : 0;
    for (size_t d = b + static_cast<size_t>(k); d < r; ++d) slice *= data[d];
    int64_t stride = slice;
    for (int j = k - 1; j >= 0; --j) {
      dims[j] = data[b + static_cast<size_t>(j)], strides[j] = stride;
      stride *= dims[j];
    }
    batch_stride = stride;
  }
};

// Where tuple m's slice starts in data, or -1 (an index out of range).
template <class I>
constexpr int64_t nd_offset(const NdIndexView& v, const I* indices, int64_t m) {
  int64_t off = v.tuples_per_batch > 0 ? m / v.tuples_per_batch * v.batch_stride : 0;
  for (int j = 0; j < v.k; ++j) {
    auto t = static_cast<int64_t>(indices[m * v.k + j]);
    if (t < 0) t += v.dims[j];
    if (t < 0 || t >= v.dims[j]) return -1;
    off += t * v.strides[j];
  }
  return off;
}

// Element s of every tuple's slice, the tuples in order: `into` takes src (or combines it,
// reduction r) where the tuples point. ScatterND's forward (src: the updates) and GatherND's
// backward (into: zeros, src: dY, add).
template <class T, class I>
constexpr void nd_scatter_element(const NdIndexView& v, const I* indices, const T* src, T* into, int64_t s,
                                  ScatterReduction r) {
  for (int64_t m = 0; m < v.tuples; ++m) {
    const int64_t off = nd_offset(v, indices, m);
    if (off >= 0) into[off + s] = scatter_combine(r, into[off + s], src[m * v.slice + s]);
  }
}

// Element s of every tuple's slice, the tuples in order: the tally of mul, max and min (a and
// b: data's elements, started by tally_start) takes the updates as the forward combines them.
template <class T, class I>
constexpr void nd_tally_element(const NdIndexView& v, const I* indices, const T* updates, T* a, T* b, int64_t s,
                                ScatterReduction r) {
  for (int64_t m = 0; m < v.tuples; ++m) {
    const int64_t off = nd_offset(v, indices, m);
    if (off >= 0) tally_add(r, updates[m * v.slice + s], a[off + s], b[off + s]);
  }
}

// Element e of the updates' backward for mul, max and min: dUpdates from the tally where
// tuple e / slice points (0 where it points nowhere).
template <class T, class I>
constexpr T nd_tally_d_update(const NdIndexView& v, const I* indices, const T* dy, const T* data, const T* updates,
                              const T* a, const T* b, int64_t e, ScatterReduction r) {
  const int64_t off = nd_offset(v, indices, e / v.slice);
  if (off < 0) return T(0);
  const int64_t p = off + e % v.slice;
  return tally_d_update(r, dy[p], data[p], updates[e], a[p], b[p]);
}

// Element e of a gathered (tuples, slice) tensor: data where tuple e / slice points, or 0.
template <class T, class I>
constexpr T nd_gather_element(const NdIndexView& v, const I* indices, const T* data, int64_t e) {
  const int64_t off = nd_offset(v, indices, e / v.slice);
  return off >= 0 ? data[off + e % v.slice] : T(0);
}

}  // namespace cbt
