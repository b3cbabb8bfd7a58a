// Gemm's attributes and the broadcast of its C operand, shared by the CPU and CUDA Gemm
// kernels so that both read them the same way.
#pragma once
#include <cstdint>

#include "graph/ir.h"

namespace cbt {

// C broadcast to (M, N): element (i, j) sits at i * row_step + j * col_step.
struct BroadcastC {
  int64_t rows = 1, cols = 1, row_step = 0, col_step = 0;
  explicit BroadcastC(const Shape& c) {
    rows = c.size() == 2 ? c[0] : 1, cols = c.empty() ? 1 : c.back();
    row_step = rows == 1 ? 0 : cols;
    col_step = cols == 1 ? 0 : 1;
  }
};

// alpha, beta, transA and transB as ONNX defines their defaults.
struct GemmAttrs {
  float alpha, beta;
  bool ta, tb;
  explicit GemmAttrs(const Node& n)
      : alpha(n.attrs.get_float("alpha", 1.0f)),
        beta(n.attrs.get_float("beta", 1.0f)),
        ta(n.attrs.get_int("transA", 0) != 0),
        tb(n.attrs.get_int("transB", 0) != 0) {}
};

}  // namespace cbt
