// Shared pieces of the CUDA shape-op kernels: N-d index plans passed to kernels by value,
// dtype-agnostic strided copies and fills, broadcast sums, and host copies of the constant
// parameter inputs (Slice starts, Pad pads, Split sizes) read once per node and cached.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "graph/ops/shape_ops_params.h"
#include "graph/shape_utils.h"
#include "ops/cuda/common.cuh"

namespace cbt::cuda::shape {

inline constexpr int kMaxDims = 8;
inline constexpr int kMaxOperands = 3;

// The shape ops' kernels loop with these (ops/cuda/common.cuh); named here for the files that
// take this namespace in.
using cuda::grid_stride;
using cuda::plan_offsets;

// Index space of an N-d loop (row-major over dims) with the strides, in elements, of up to
// three operands. Built on the host with size-1 dims dropped and neighbours that are
// contiguous in every operand merged, so real tensors rarely come near kMaxDims.
struct NdPlan {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
};

// `strides` holds one stride vector (same length as `shape`) per operand, at most three.
NdPlan make_plan(const Shape& shape, const std::vector<std::vector<int64_t>>& strides);
int64_t plan_numel(const NdPlan& p);

// Calls f.template operator()<W>() with W the unsigned word of `elem` bytes.
template <class F>
void with_word(size_t elem, F&& f) {
  switch (elem) {
    case 1:
      f.template operator()<uint8_t>();
      return;
    case 2:
      f.template operator()<uint16_t>();
      return;
    case 4:
      f.template operator()<uint32_t>();
      return;
    case 8:
      f.template operator()<uint64_t>();
      return;
    default:
      CBT_CHECK(false, "unsupported element size ", elem);
  }
}

// with_word for kernels that only move words, which may also be 16 bytes (uint4: a widened run).
template <class F>
void with_move_word(size_t elem, F&& f) {
  if (elem == sizeof(uint4))
    f.template operator()<uint4>();
  else
    with_word(elem, f);
}

// The most elements of `elem` bytes that move as one word of at most 16 bytes where a run is
// contiguous in both operands: a power of two dividing every one of `counts` (the run's length,
// and the operands' other strides) with both addresses aligned to the word. 1 when none is.
inline int64_t word_factor(size_t elem, const std::vector<int64_t>& counts, const void* a, const void* b) {
  const auto ua = reinterpret_cast<uintptr_t>(a), ub = reinterpret_cast<uintptr_t>(b);
  for (int64_t w = static_cast<int64_t>(16 / elem); w > 1; w /= 2) {
    const auto bytes = static_cast<uintptr_t>(elem) * static_cast<uintptr_t>(w);
    bool ok = ua % bytes == 0 && ub % bytes == 0;
    for (int64_t c : counts) ok = ok && c % w == 0;
    if (ok) return w;
  }
  return 1;
}

// dst[i . dst_strides] = src[i . src_strides] over `shape` (elements of `elem` bytes; pointers
// at the first element; strides in elements, any sign, 0 for broadcasting).
void strided_copy(void* dst, const std::vector<int64_t>& dst_strides, const void* src,
                  const std::vector<int64_t>& src_strides, const Shape& shape, size_t elem, cudaStream_t stream);

// n elements of `elem` bytes set to the low `elem` bytes of `bits`.
void fill_elements(void* dst, int64_t n, size_t elem, uint64_t bits, cudaStream_t stream);

// Writes host bytes to device memory through kernel parameters: no pinned staging buffer
// and nothing that breaks stream capture (Shape and Constant outputs are small).
void write_host_bytes(void* dst, const void* src, size_t bytes, cudaStream_t stream);

// Which dY elements a broadcast sum takes: all, or those where the condition is true/false.
enum class Route : int { All = 0, WhereTrue = 1, WhereFalse = 2 };

// out (out_shape, which broadcasts to dy_shape) = dY summed over the broadcast axes, taking
// the elements `route` selects by `cond` (bool, broadcast to dy_shape; null for All).
// Deterministic: each output is summed by one thread or one block in a fixed order.
void broadcast_sum(DType dtype, void* out, const Shape& out_shape, const void* dy, const Shape& dy_shape,
                   const void* cond, const Shape& cond_shape, Route route, cudaStream_t stream);

// Host copies of the inputs at positions `which` (the others stay undefined). They wait for
// the stream, so they fail under graph capture; node_params caches what is derived from them.
std::vector<Tensor> host_copies(const KernelContext& ctx, std::initializer_list<size_t> which);

// Parameters of a node derived from its constant inputs `which` (host values, null where
// absent) by make(const InputValues&), computed at the first call and cached in ctx.state:
// constants never change and a node's shapes are fixed.
template <class Params, class Make>
std::shared_ptr<const Params> node_params(const KernelContext& ctx, std::initializer_list<size_t> which, Make&& make) {
  if (ctx.state && *ctx.state) return std::static_pointer_cast<const Params>(*ctx.state);
  std::vector<Tensor> host = host_copies(ctx, which);
  InputValues values;
  for (const Tensor& t : host) values.push_back(t.defined() ? &t : nullptr);
  auto p = std::make_shared<Params>(make(values));
  if (ctx.state) *ctx.state = p;
  return p;
}

}  // namespace cbt::cuda::shape
