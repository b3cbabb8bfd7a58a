// Broadcasting loops for CPU element-wise kernels: merged dims, contiguous fast paths, OpenMP.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "graph/shape_utils.h"
#include "graph/tensor.h"

namespace cbt::cpu {

// Below this many elements a loop stays on one thread: the fork costs more than it saves.
inline constexpr int64_t kParallelMin = 1 << 15;
// Rows longer than this are split so that a few long rows still use every core.
inline constexpr int64_t kChunk = 1 << 13;

// Output dims with the strides of two operands on them; adjacent dims are merged where both
// operands keep their pattern, so (N,C,H,W)+(C,1,1) becomes (N, C, H*W) with b strides (0,1,0).
struct BroadcastLayout {
  std::vector<int64_t> dims, sa, sb;
};

inline BroadcastLayout broadcast_layout(const Shape& a, const Shape& b, const Shape& out) {
  auto sa = broadcast_strides(a, out), sb = broadcast_strides(b, out);
  BroadcastLayout l;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    if (!l.dims.empty()) {
      size_t k = l.dims.size() - 1;
      if (l.sa[k] == sa[i] * out[i] && l.sb[k] == sb[i] * out[i]) {
        l.dims[k] *= out[i];
        l.sa[k] = sa[i];
        l.sb[k] = sb[i];
        continue;
      }
    }
    l.dims.push_back(out[i]);
    l.sa.push_back(sa[i]);
    l.sb.push_back(sb[i]);
  }
  if (l.dims.empty()) l = {{1}, {0}, {0}};
  return l;
}

// Calls row(y_offset, a_offset, b_offset, length, a_step, b_step) over pieces of the
// innermost dim, in parallel; y is contiguous over the layout's dims.
template <class RowFn>
void for_each_row(const BroadcastLayout& l, RowFn row) {
  size_t r = l.dims.size() - 1;
  int64_t inner = l.dims[r];
  int64_t rows = 1;
  for (size_t d = 0; d < r; ++d) rows *= l.dims[d];
  int64_t chunks = (inner + kChunk - 1) / kChunk;
  int64_t items = rows * chunks;
#pragma omp parallel for schedule(static) if (rows * inner >= kParallelMin && items > 1)
  for (int64_t it = 0; it < items; ++it) {
    int64_t q = it / chunks, c = it % chunks;
    int64_t rem = q, oa = 0, ob = 0;
    for (size_t d = r; d-- > 0;) {
      int64_t i = rem % l.dims[d];
      rem /= l.dims[d];
      oa += i * l.sa[d];
      ob += i * l.sb[d];
    }
    int64_t start = c * kChunk, len = std::min(kChunk, inner - start);
    row(q * inner + start, oa + start * l.sa[r], ob + start * l.sb[r], len, l.sa[r], l.sb[r]);
  }
}

// y = op(a, b) with numpy broadcasting; y has the broadcast shape.
template <class TA, class TB, class TY, class Op>
void binary_broadcast(const TA* a, const Shape& as, const TB* b, const Shape& bs, TY* y, const Shape& ys, Op op) {
  int64_t n = shape_numel(ys), na = shape_numel(as), nb = shape_numel(bs);
  if (na == n && nb == n && as == bs) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], b[i]);
    return;
  }
  if (nb == 1 && na == n) {
    const TB s = b[0];
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], s);
    return;
  }
  if (na == 1 && nb == n) {
    const TA s = a[0];
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) y[i] = op(s, b[i]);
    return;
  }
  for_each_row(broadcast_layout(as, bs, ys),
               [&](int64_t yo, int64_t ao, int64_t bo, int64_t len, int64_t da, int64_t db) {
                 TY* yr = y + yo;
                 const TA* ar = a + ao;
                 const TB* br = b + bo;
                 if (da == 1 && db == 1) {
                   for (int64_t i = 0; i < len; ++i) yr[i] = op(ar[i], br[i]);
                 } else if (da == 1 && db == 0) {
                   const TB s = br[0];
                   for (int64_t i = 0; i < len; ++i) yr[i] = op(ar[i], s);
                 } else if (da == 0 && db == 1) {
                   const TA s = ar[0];
                   for (int64_t i = 0; i < len; ++i) yr[i] = op(s, br[i]);
                 } else {
                   for (int64_t i = 0; i < len; ++i) yr[i] = op(ar[i * da], br[i * db]);
                 }
               });
}

// y = op(x) over contiguous memory, in parallel above the threshold.
template <class TX, class TY, class Op>
void unary_map(const TX* x, TY* y, int64_t n, Op op) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) y[i] = op(x[i]);
}

// y = scale * x broadcast from shape xs to shape ys (xs broadcastable to ys).
template <class T>
void broadcast_to(const T* x, const Shape& xs, T* y, const Shape& ys, T scale) {
  binary_broadcast(x, xs, x, xs, y, ys, [scale](T v, T) { return v * scale; });
}

// y = scale * sum of x over the dims where ys (right-aligned, rank <= rank of xs) is 1 and
// xs is not; the inverse of broadcasting ys to xs.
template <class T>
void reduce_sum_to(const T* x, const Shape& xs, T* y, const Shape& ys, T scale) {
  if (shape_numel(xs) == 0) {  // empty sums
    std::fill(y, y + shape_numel(ys), T(0));
    return;
  }
  BroadcastLayout l = broadcast_layout(xs, ys, xs);
  // Dims kept (y stride != 0) and summed, each in x's row-major order.
  std::vector<int64_t> kn, ks, rn, rs;
  for (size_t d = 0; d < l.dims.size(); ++d) {
    bool kept = l.sb[d] != 0 || l.dims[d] == 1;
    (kept ? kn : rn).push_back(l.dims[d]);
    (kept ? ks : rs).push_back(l.sa[d]);
  }
  auto offset = [](const std::vector<int64_t>& n, const std::vector<int64_t>& s, size_t count, int64_t idx) {
    int64_t off = 0;
    for (size_t d = count; d-- > 0;) {
      off += (idx % n[d]) * s[d];
      idx /= n[d];
    }
    return off;
  };
  int64_t ny = 1, nr = 1;
  for (int64_t v : kn) ny *= v;
  for (int64_t v : rn) nr *= v;
  int64_t total = ny * nr;
  bool last_reduced = l.sb.back() == 0 && l.dims.back() != 1;
  if (last_reduced) {
    // Each y element sums contiguous rows of x of length rn.back().
    int64_t len = rn.back(), outer = nr / len;
#pragma omp parallel for schedule(static) if (total >= kParallelMin && ny > 1)
    for (int64_t o = 0; o < ny; ++o) {
      int64_t base = offset(kn, ks, kn.size(), o);
      T acc = 0;
      for (int64_t j = 0; j < outer; ++j) {
        const T* xr = x + base + offset(rn, rs, rn.size() - 1, j);
        T part = 0;
#pragma omp simd reduction(+ : part)
        for (int64_t i = 0; i < len; ++i) part += xr[i];
        acc += part;
      }
      y[o] = acc * scale;
    }
    return;
  }
  // The last dim is kept: y rows of length kn.back() accumulate x rows, split into chunks.
  int64_t len = kn.back(), rows = ny / len, chunks = (len + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (total >= kParallelMin && rows * chunks > 1)
  for (int64_t it = 0; it < rows * chunks; ++it) {
    int64_t q = it / chunks, start = (it % chunks) * kChunk;
    int64_t m = std::min(kChunk, len - start);
    int64_t base = offset(kn, ks, kn.size() - 1, q) + start;
    T* yr = y + q * len + start;
    std::fill(yr, yr + m, T(0));
    for (int64_t j = 0; j < nr; ++j) {
      const T* xr = x + base + offset(rn, rs, rn.size(), j);
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) yr[i] += xr[i];
    }
    for (int64_t i = 0; i < m; ++i) yr[i] *= scale;
  }
}

// Calls f.template operator()<T>() for the arithmetic dtypes element-wise ops accept.
template <class F>
decltype(auto) dispatch_arith(DType t, F&& f) {
  switch (t) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::Int32:
      return f.template operator()<int32_t>();
    default:
      throw InternalError(std::string("unsupported dtype ") + dtype_name(t));
  }
}

}  // namespace cbt::cpu
