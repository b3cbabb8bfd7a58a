// CPU kernels of the view ops (copies), Transpose, Concat, Split, Expand, Tile, Roll and their backward
// ops. Pure data movement is dtype-agnostic (int64 shape tensors are folded through them).
#include <numeric>

#include "graph/ops/shape_ops_params.h"
#include "ops/cpu/broadcast.h"
#include "ops/cpu/shape_ops_common.h"

namespace cbt {
namespace {
using namespace shape_ops;

// Flatten, Reshape, Squeeze, Unsqueeze, ReshapeTo: same bytes, other shape.
void copy_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  // A view planned as an alias of its input (graph/planner.h) shares its bytes: nothing to copy.
  if (x.nbytes() && ctx.out(0).data() != x.data()) std::memcpy(ctx.out(0).data(), x.data(), x.nbytes());
}

// y: x with axes permuted, y.shape[k] = x.shape[perm[k]]
void transpose_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  std::vector<int64_t> perm = ctx.node.attrs.get_ints("perm");
  if (!ctx.node.attrs.has("perm")) {
    perm.resize(x.rank());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  auto xs = strides_of(x.shape());
  std::vector<int64_t> src(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) src[k] = xs[perm[k]];
  strided_copy(y.data(), strides_of(y.shape()), x.data(), src, y.shape(), dtype_size(x.dtype()));
}

// DepthToSpace and SpaceToDepth: y is x read through the permuted view (graph/shape_utils.h).
void depth_space_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const PermutedView v =
      depth_space_view(x.shape(), ctx.node.attrs.get_int("blocksize", 1), ctx.node.op_type == "DepthToSpace",
                       ctx.node.attrs.get_string("mode", "DCR") == "CRD");
  strided_copy(y.data(), strides_of(v.shape), x.data(), v.src_strides, v.shape, dtype_size(x.dtype()));
}

// Roll: each row of the innermost dim that is not rolled is one copy; a rolled innermost dim
// moves element by element.
void roll_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const RollDims r = roll_dims(x.shape(), ctx.node.attrs.get_ints("axes"), ctx.node.attrs.get_ints("shifts"));
  const size_t elem = dtype_size(x.dtype());
  if (y.numel() == 0) return;
  const bool rows = !r.dims.empty() && r.shifts.back() == 0;
  const size_t walked = r.dims.size() - (rows ? 1 : 0);  // dims walked one index at a time
  const size_t run = (rows ? static_cast<size_t>(r.dims.back()) : 1) * elem;
  const auto* src = static_cast<const std::byte*>(x.data());
  auto* dst = static_cast<std::byte*>(y.data());
  std::vector<int64_t> idx(walked, 0);
  for (int64_t o = 0, n = y.numel() / static_cast<int64_t>(run / elem); o < n; ++o) {
    int64_t from = 0;
    for (size_t d = 0; d < walked; ++d) {
      int64_t c = idx[d] + r.shifts[d];
      if (c >= r.dims[d]) c -= r.dims[d];
      from = from * r.dims[d] + c;
    }
    std::memcpy(dst + static_cast<size_t>(o) * run, src + static_cast<size_t>(from) * run, run);
    for (size_t d = walked; d-- > 0;) {
      if (++idx[d] < r.dims[d]) break;
      idx[d] = 0;
    }
  }
}

// Copies between one tensor of shape (outer, sum(sizes), inner) and pieces of shape
// (outer, sizes[i], inner); `to_pieces` selects the direction. Undefined pieces are skipped
// when splitting and read as zeros when joining.
void move_pieces(Tensor& whole, std::span<Tensor> pieces, int64_t axis, const std::vector<int64_t>& sizes,
                 bool to_pieces) {
  const Shape& s = whole.shape();
  size_t elem = dtype_size(whole.dtype());
  int64_t outer = dims_product(s, 0, axis);
  int64_t row = dims_product(s, axis + 1, s.size()) * static_cast<int64_t>(elem);
  int64_t whole_row = s[axis] * row;
  auto* base = static_cast<std::byte*>(whole.data());
  bool missing = false;
  for (size_t i = 0; i < sizes.size(); ++i) missing = missing || i >= pieces.size() || !pieces[i].defined();
  if (!to_pieces && missing) zero_fill(whole);
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t bytes = sizes[i] * row;
    if (i < pieces.size() && pieces[i].defined() && bytes > 0) {
      auto* p = static_cast<std::byte*>(pieces[i].data());
      for (int64_t o = 0; o < outer; ++o) {
        std::byte* w = base + o * whole_row + offset;
        if (to_pieces)
          std::memcpy(p + o * bytes, w, bytes);
        else
          std::memcpy(w, p + o * bytes, bytes);
      }
    }
    offset += bytes;
  }
}

void concat_kernel(KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), y.rank());
  std::vector<int64_t> sizes;
  for (const Tensor& t : ctx.inputs) sizes.push_back(t.shape()[axis]);
  move_pieces(y, ctx.inputs, axis, sizes, false);
}

void split_kernel(KernelContext& ctx) {
  Tensor x = ctx.in(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), x.rank());
  InputValues values;
  for (const Tensor& t : ctx.inputs) values.push_back(t.defined() ? &t : nullptr);
  move_pieces(x, ctx.outputs, axis, node_split_sizes(ctx.node, x.shape(), values), true);
}

void concat_grad_kernel(KernelContext& ctx) {
  Tensor dY = ctx.in(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), dY.rank());
  move_pieces(dY, ctx.outputs, axis, ctx.node.attrs.get_ints("split"), true);
}

void split_grad_kernel(KernelContext& ctx) {
  Tensor& dX = ctx.out(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), dX.rank());
  move_pieces(dX, ctx.inputs, axis, ctx.node.attrs.get_ints("split"), false);
}

// y: x broadcast to y's shape
void expand_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  strided_copy(y.data(), strides_of(y.shape()), x.data(), broadcast_strides(x.shape(), y.shape()), y.shape(),
               dtype_size(x.dtype()));
}

// dX: dY summed over the axes the forward broadcast
void expand_grad_kernel(KernelContext& ctx) {
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  dispatch_float(dY.dtype(),
                 [&]<class T>() { cpu::reduce_sum_to(dY.ptr<T>(), dY.shape(), dX.ptr<T>(), dX.shape(), T(1)); });
}

// y: x repeated along each axis, copied as a broadcast (graph/shape_utils.h, tile_view).
void tile_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const TileView v = tile_view(x.shape(), y.shape());
  strided_copy(y.data(), strides_of(v.tiled), x.data(), broadcast_strides(v.input, v.tiled), v.tiled,
               dtype_size(x.dtype()));
}

// dX: dY's copies summed, the inverse of the broadcast over the tiled view
void tile_grad_kernel(KernelContext& ctx) {
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  const TileView v = tile_view(dX.shape(), dY.shape());
  dispatch_float(dY.dtype(), [&]<class T>() { cpu::reduce_sum_to(dY.ptr<T>(), v.tiled, dX.ptr<T>(), v.input, T(1)); });
}

}  // namespace

CBT_REGISTER_KERNEL("", "Tile", DeviceKind::CPU, tile_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "TileGrad", DeviceKind::CPU, tile_grad_kernel);
CBT_REGISTER_KERNEL("", "Flatten", DeviceKind::CPU, copy_kernel);
CBT_REGISTER_KERNEL("", "Reshape", DeviceKind::CPU, copy_kernel);
CBT_REGISTER_KERNEL("", "Squeeze", DeviceKind::CPU, copy_kernel);
CBT_REGISTER_KERNEL("", "Unsqueeze", DeviceKind::CPU, copy_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "ReshapeTo", DeviceKind::CPU, copy_kernel);
CBT_REGISTER_KERNEL("", "Transpose", DeviceKind::CPU, transpose_kernel);
CBT_REGISTER_KERNEL("", "DepthToSpace", DeviceKind::CPU, depth_space_kernel);
CBT_REGISTER_KERNEL("", "SpaceToDepth", DeviceKind::CPU, depth_space_kernel);
CBT_REGISTER_KERNEL("", "Concat", DeviceKind::CPU, concat_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "Roll", DeviceKind::CPU, roll_kernel);
CBT_REGISTER_KERNEL("", "Split", DeviceKind::CPU, split_kernel);
CBT_REGISTER_KERNEL("", "Expand", DeviceKind::CPU, expand_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "ConcatGrad", DeviceKind::CPU, concat_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "SplitGrad", DeviceKind::CPU, split_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "ExpandGrad", DeviceKind::CPU, expand_grad_kernel);

}  // namespace cbt
