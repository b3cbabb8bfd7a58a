// The number dtypes as C++ types, for kernels on either device that take any of them (the
// comparisons): f.template operator()<T>() with int8 signed and uint8 unsigned.
#pragma once
#include <cstdint>
#include <string>

#include "graph/errors.h"
#include "graph/tensor.h"

namespace cbt {

template <class F>
void dispatch_number(DType t, F&& f) {
  switch (t) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::Int32:
      return f.template operator()<int32_t>();
    case DType::Int8:
      return f.template operator()<int8_t>();
    case DType::UInt8:
      return f.template operator()<uint8_t>();
    default:
      throw ModelError(std::string("comparison of unsupported type ") + dtype_name(t));
  }
}

}  // namespace cbt
