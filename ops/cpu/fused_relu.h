// The Relu that graph/fusion.h folds into a Gemm or Conv (relu=1), computed as the Relu and
// ReluGrad kernels compute it, so that a fused step gives the unfused step's values bit for bit.
#pragma once
#include <cstdint>

#include "ops/kernel.h"

namespace cbt::cpu {

// y = max(y, 0) in place.
template <class T>
void relu_in_place(T* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const T v = y[i];
    y[i] = v > 0 ? v : T(0);
  }
}

// The gradient a fused node's backward works with: dY itself without relu=1, else dY where the
// fused output (input `y_input`) is > 0, written into the node's output `masked_output`.
template <class T>
const T* fused_relu_grad(KernelContext& ctx, size_t y_input, size_t masked_output) {
  const T* dy = ctx.in(0).ptr<T>();
  if (!ctx.node.attrs.get_int("relu", 0)) return dy;
  const T* __restrict y = ctx.in(y_input).ptr<T>();
  const T* __restrict g = dy;
  T* __restrict m = ctx.out(masked_output).ptr<T>();
  const int64_t n = ctx.in(0).numel();
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const T gv = g[i], yv = y[i];  // both loaded: a select the compiler vectorises
    m[i] = yv > 0 ? gv : T(0);
  }
  return m;
}

}  // namespace cbt::cpu
