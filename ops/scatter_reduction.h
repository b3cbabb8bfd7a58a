// The reductions of ScatterElements and ScatterND (ONNX's `reduction`), shared by their CPU and
// CUDA kernels: how an update combines into the output, and the backward's rule for mul, max
// and min. Both devices combine the updates of one position in order in one thread (no
// atomics), so every reduction, mul included, gives the same bits on both.
//
// The backward of mul, max and min reads a tally of every position of data, (a, b):
//   max/min: a = the result, b = how many of data and the updates there equal it (ties share
//            the gradient evenly, as PyTorch's scatter_reduce with include_self);
//   mul:     a = the product of the non-zero updates there, b = how many are zero: the product
//            of the others is a / u for a non-zero u (within rounding of the direct product),
//            a for the only zero, and 0 otherwise; never a division by zero.
#pragma once
#include "graph/ops/scatter_reductions.h"

namespace cbt {

template <class T>
constexpr bool is_nan_value(T v) {
  return v != v;  // false for integers
}

// Equal, NaN to NaN included: a NaN result takes its gradient to the NaNs that made it.
template <class T>
constexpr bool same_value(T x, T y) {
  return x == y || (is_nan_value(x) && is_nan_value(y));
}

// Whether update u replaces the running extreme y (max or min); a NaN, once there, stays.
template <class T>
constexpr bool beats(ScatterReduction r, T u, T y) {
  if (is_nan_value(y)) return false;
  return is_nan_value(u) || (r == ScatterReduction::Max ? u > y : u < y);
}

// The output y after update u (y starts as data).
template <class T>
constexpr T scatter_combine(ScatterReduction r, T y, T u) {
  switch (r) {
    case ScatterReduction::None:
      return u;
    case ScatterReduction::Add:
      return y + u;
    case ScatterReduction::Mul:
      return y * u;
    default:
      return beats(r, u, y) ? u : y;
  }
}

// A position's tally before any update (data `x` there).
template <class T>
constexpr void tally_start(ScatterReduction r, T x, T& a, T& b) {
  if (r == ScatterReduction::Mul)
    a = T(1), b = T(0);
  else
    a = x, b = T(1);
}

// The tally after update u; `a` follows scatter_combine's result exactly for max and min.
template <class T>
constexpr void tally_add(ScatterReduction r, T u, T& a, T& b) {
  if (r == ScatterReduction::Mul) {
    if (u == T(0))
      b += T(1);
    else
      a *= u;
  } else if (same_value(u, a)) {
    b += T(1);
  } else if (beats(r, u, a)) {
    a = u, b = T(1);
  }
}

// dData at a position: dY times the updates' product (mul), or dY shared among the ties when
// data is the result (max, min). An untouched position gets dY.
template <class T>
constexpr T tally_d_data(ScatterReduction r, T dy, T x, T a, T b) {
  if (r == ScatterReduction::Mul) return b > T(0) ? T(0) : dy * a;
  return same_value(x, a) ? dy / b : T(0);
}

// dUpdate of update u at a position with data x: dY * x * (the product of the other updates
// there) (mul), or dY shared among the ties when u is the result (max, min).
template <class T>
constexpr T tally_d_update(ScatterReduction r, T dy, T x, T u, T a, T b) {
  if (r == ScatterReduction::Mul) {
    T others = T(0);
    if (u == T(0))
      others = b == T(1) ? a : T(0);  // the only zero: the others are the non-zero ones
    else if (b == T(0))
      others = a / u;  // u is one of a's factors, and not zero
    return dy * x * others;
  }
  return same_value(u, a) ? dy / b : T(0);
}

}  // namespace cbt
