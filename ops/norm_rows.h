// LayerNormalization's view of its input, shared by the CPU and CUDA kernels so that both read
// the axis the same way: (rows, inner) around the normalisation axis.
#pragma once
#include <algorithm>
#include <cstdint>

#include "graph/shape_utils.h"
#include "graph/tensor.h"

namespace cbt {

struct NormRows {
  int64_t rows = 1, inner = 1;
  NormRows(const Tensor& x, int64_t axis) {
    if (axis < 0) axis += static_cast<int64_t>(x.rank());
    inner = dims_product(x.shape(), axis, x.rank());
    rows = x.numel() / std::max<int64_t>(inner, 1);
  }
};

}  // namespace cbt
