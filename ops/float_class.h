// IsNaN's and IsInf's rule, shared by the CPU and CUDA kernels.
#pragma once
#include <limits>

namespace cbt {

template <class T>
constexpr bool is_nan_value(T v) {
  return v != v;
}

// Infinite and of a sign asked for (IsInf's detect_negative, detect_positive).
template <class T>
constexpr bool is_inf_value(T v, bool negative, bool positive) {
  return (positive && v > std::numeric_limits<T>::max()) || (negative && v < std::numeric_limits<T>::lowest());
}

}  // namespace cbt
