// A tensor viewed as (outer, len, inner) around one axis, shared by the CPU and CUDA kernels
// that work along an axis (ArgMax/ArgMin, CumSum): element (o, k, i) lies at
// (o * len + k) * inner + i.
#pragma once
#include <cstdint>

#include "graph/shape_utils.h"
#include "graph/tensor.h"

namespace cbt {

struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
  AxisView(const Shape& x, int64_t axis) {
    const auto rank = static_cast<int64_t>(x.size());
    if (axis < 0) axis += rank;
    outer = dims_product(x, 0, axis);
    len = x[axis];
    inner = dims_product(x, axis + 1, rank);
  }
};

}  // namespace cbt
