// Dtype-agnostic data movement for the shape-op CPU kernels: elements are moved as opaque
// 1/2/4/8-byte words, so one kernel serves float, double, int64 (shape tensors), bool...
#pragma once
#include <cstddef>
#include <cstring>
#include <vector>

#include "graph/shape_utils.h"
#include "graph/tensor.h"
#include "ops/kernel.h"

namespace cbt::shape_ops {

// Calls f.template operator()<E>() with E = the element size in bytes.
template <class F>
void with_elem_size(size_t elem, F&& f) {
  switch (elem) {
    case 1:
      f.template operator()<1>();
      return;
    case 2:
      f.template operator()<2>();
      return;
    case 4:
      f.template operator()<4>();
      return;
    case 8:
      f.template operator()<8>();
      return;
    default:
      CBT_CHECK(false, "unsupported element size ", elem);
  }
}

// Calls f(offset_a, offset_b) for every index of `shape` in row-major order, with offsets
// (in elements) following strides `sa` and `sb` (any sign, 0 for broadcasting).
template <class F>
void for_each_strided(const Shape& shape, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb, F&& f) {
  const size_t r = shape.size();
  if (shape_numel(shape) == 0) return;
  if (r == 0) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  const int64_t inner = shape[r - 1], ia = sa[r - 1], ib = sb[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t a = 0, b = 0;
  while (true) {
    for (int64_t k = 0; k < inner; ++k) f(a + k * ia, b + k * ib);
    // Advance the outer index like an odometer.
    size_t d = r - 1;
    while (d-- > 0) {
      a += sa[d];
      b += sb[d];
      if (++idx[d] < shape[d]) break;
      a -= sa[d] * shape[d];
      b -= sb[d] * shape[d];
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

// dst[i * dst_strides] = src[i * src_strides] over `shape`; pointers at the first element.
inline void strided_copy(void* dst, const std::vector<int64_t>& dst_strides, const void* src,
                         const std::vector<int64_t>& src_strides, const Shape& shape, size_t elem) {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  with_elem_size(elem, [&]<size_t E>() {
    for_each_strided(shape, dst_strides, src_strides, [&](int64_t od, int64_t os) {
      std::memcpy(d + od * static_cast<int64_t>(E), s + os * static_cast<int64_t>(E), E);
    });
  });
}

// Writes zeros: kernels' outputs live in reused arena memory, never assumed zeroed.
inline void zero_fill(Tensor& t) {
  if (t.nbytes()) std::memset(t.data(), 0, t.nbytes());
}

}  // namespace cbt::shape_ops
