// Shape arithmetic shared by schemas and kernels: axes, broadcasting, strides.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/tensor.h"

namespace cbt {

// Normalises a possibly negative axis against `rank`; throws ModelError when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank);

// Numpy-style broadcast of two shapes; throws ModelError when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& s);

// Strides for reading a tensor of shape `in` broadcast to `out` (0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Product of dims [begin, end).
int64_t dims_product(const Shape& s, size_t begin, size_t end);

}  // namespace cbt
