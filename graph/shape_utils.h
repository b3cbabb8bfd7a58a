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

// Tile as a broadcast: the tiled shape `y` (each dim of `x` times its repeat) read as
// (r0, x0, r1, x1, ...) in row-major order is `x` read as (1, x0, 1, x1, ...) broadcast to it.
struct TileView {
  Shape tiled;  // (r0, x0, r1, x1, ...)
  Shape input;  // (1, x0, 1, x1, ...)
};
TileView tile_view(const Shape& x, const Shape& y);

// DepthToSpace and SpaceToDepth as a permuted view: Y read as `shape` (6-D, row-major) is X
// read with `src_strides`. X is (N, C, H, W) and b the block size; `to_space` is
// DepthToSpace, else SpaceToDepth; `crd` takes the channels before the block offsets
// (DepthToSpace's CRD mode, and the SpaceToDepth that undoes it), else after (DCR).
struct PermutedView {
  Shape shape;
  std::vector<int64_t> src_strides;
};
PermutedView depth_space_view(const Shape& x, int64_t b, bool to_space, bool crd);

// MatMul operands as batches of matrices: A (abatch, M, K) @ B (bbatch, K, N), numpy's rules
// (a 1-D A is one row, a 1-D B one column; the batch dims broadcast). The CPU and CUDA
// kernels of MatMul and its gradients share it.
struct MatDims {
  Shape abatch, bbatch, batch;
  int64_t M = 1, K = 1, N = 1;
  int64_t count() const { return dims_product(batch, 0, batch.size()); }
  // A covers every output batch contiguously and B is one matrix: one big gemm suffices.
  bool foldable() const {
    return dims_product(bbatch, 0, bbatch.size()) == 1 && dims_product(abatch, 0, abatch.size()) == count();
  }
};
MatDims mat_dims(Shape a, Shape b);

}  // namespace cbt
