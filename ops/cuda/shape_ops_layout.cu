// CUDA kernels of the view ops (copies), Transpose, Concat, Split, Expand, Tile, Roll and their backward
// ops. Data movement is dtype-agnostic (by element size), like the CPU kernels.
#include <numeric>
#include <span>

#include "ops/cuda/shape_ops_common.cuh"

namespace cbt {
namespace {
using namespace cuda::shape;

// Flatten, Reshape, Squeeze, Unsqueeze, ReshapeTo: same bytes, other shape. Their shape/axes
// inputs are not read: the output shape is already known.
void copy_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (x.nbytes() && y.data() != x.data())
    CBT_CUDA_CHECK(cudaMemcpyAsync(y.data(), x.data(), x.nbytes(), cudaMemcpyDeviceToDevice, cc.stream));
}

// Roll over its merged dims (graph/ops/shape_ops_params.h, roll_dims): output element i reads
// the input at each rolled coordinate plus its shift, wrapped. W is the word moved: several
// elements where the innermost dim is not rolled.
struct RollPlan {
  int rank = 0;
  int64_t dims[kMaxDims] = {}, shifts[kMaxDims] = {};
};

template <class W>
__global__ void roll_values(W* __restrict__ y, const W* __restrict__ x, const __grid_constant__ RollPlan p, int64_t n) {
  grid_stride(n, [&](auto i) {
    auto rest = i;
    int64_t from = 0, scale = 1;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d < p.rank) {
        const auto dim = static_cast<decltype(i)>(p.dims[d]);
        const auto q = rest / dim;
        int64_t c = static_cast<int64_t>(rest - q * dim) + p.shifts[d];
        if (c >= p.dims[d]) c -= p.dims[d];
        from += c * scale;
        scale *= p.dims[d];
        rest = q;
      }
    }
    y[i] = x[from];
  });
}

void roll_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (y.numel() == 0) return;
  const RollDims r = roll_dims(x.shape(), ctx.node.attrs.get_ints("axes"), ctx.node.attrs.get_ints("shifts"));
  CBT_MODEL_CHECK(r.dims.size() <= static_cast<size_t>(kMaxDims), ctx.node.describe(), " rolls over ", r.dims.size(),
                  " separate dims on the GPU (at most ", kMaxDims, ")");
  RollPlan p;
  p.rank = static_cast<int>(r.dims.size());
  for (int d = 0; d < p.rank; ++d) p.dims[d] = r.dims[d], p.shifts[d] = r.shifts[d];
  // An innermost dim that is not rolled moves as words of up to 16 bytes.
  size_t elem = dtype_size(x.dtype());
  if (p.rank > 0 && p.shifts[p.rank - 1] == 0) {
    const int64_t w = word_factor(elem, {p.dims[p.rank - 1]}, x.data(), y.data());
    p.dims[p.rank - 1] /= w;
    elem *= static_cast<size_t>(w);
  }
  const int64_t n = static_cast<int64_t>(x.nbytes() / elem);
  with_move_word(elem, [&]<class W>() {
    roll_values<W><<<cuda::blocks_for(n), cuda::kThreads, 0, cc.stream>>>(static_cast<W*>(y.data()),
                                                                          static_cast<const W*>(x.data()), p, n);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

// y: x with axes permuted, y.shape[k] = x.shape[perm[k]]
void transpose_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
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
  strided_copy(y.data(), strides_of(y.shape()), x.data(), src, y.shape(), dtype_size(x.dtype()), cc.stream);
}

// DepthToSpace and SpaceToDepth: y is x read through the permuted view (graph/shape_utils.h).
void depth_space_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const PermutedView v =
      depth_space_view(x.shape(), ctx.node.attrs.get_int("blocksize", 1), ctx.node.op_type == "DepthToSpace",
                       ctx.node.attrs.get_string("mode", "DCR") == "CRD");
  strided_copy(y.data(), strides_of(v.shape), x.data(), v.src_strides, v.shape, dtype_size(x.dtype()), cc.stream);
}

// Copies between one tensor of shape (outer, sum(sizes), inner) and pieces of shape
// (outer, sizes[i], inner); `to_pieces` selects the direction. Undefined pieces are skipped
// when splitting and read as zeros when joining.
void move_pieces(Tensor& whole, std::span<Tensor> pieces, int64_t axis, const std::vector<int64_t>& sizes,
                 bool to_pieces, cudaStream_t stream) {
  const Shape& s = whole.shape();
  const size_t elem = dtype_size(whole.dtype());
  const int64_t outer = dims_product(s, 0, axis);
  const int64_t inner = dims_product(s, axis + 1, s.size());
  const int64_t whole_row = s[axis] * inner;
  auto* base = static_cast<std::byte*>(whole.data());
  bool missing = false;
  for (size_t i = 0; i < sizes.size(); ++i) missing = missing || i >= pieces.size() || !pieces[i].defined();
  if (!to_pieces && missing && whole.nbytes()) CBT_CUDA_CHECK(cudaMemsetAsync(whole.data(), 0, whole.nbytes(), stream));
  int64_t offset = 0;  // elements into a row of `whole`
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t cols = sizes[i] * inner;
    if (i < pieces.size() && pieces[i].defined()) {
      // A piece is a (outer, cols) block of `whole` with row stride whole_row.
      void* w = base + offset * static_cast<int64_t>(elem);
      void* p = pieces[i].data();
      const Shape block{outer, cols};
      const std::vector<int64_t> ws{whole_row, 1}, ps{cols, 1};
      if (to_pieces)
        strided_copy(p, ps, w, ws, block, elem, stream);
      else
        strided_copy(w, ws, p, ps, block, elem, stream);
    }
    offset += cols;
  }
}

void concat_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  Tensor& y = ctx.out(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), y.rank());
  std::vector<int64_t> sizes;
  for (const Tensor& t : ctx.inputs) sizes.push_back(t.shape()[axis]);
  move_pieces(y, ctx.inputs, axis, sizes, false, cc.stream);
}

struct SplitParams {
  std::vector<int64_t> sizes;
};

// Split sizes come from the split input (read once, cached), the attribute or num_outputs,
// through the helper the schema uses.
void split_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  Tensor x = ctx.in(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), x.rank());
  auto params = node_params<SplitParams>(
      ctx, {1}, [&](const InputValues& v) { return SplitParams{node_split_sizes(ctx.node, x.shape(), v)}; });
  move_pieces(x, ctx.outputs, axis, params->sizes, true, cc.stream);
}

void concat_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  Tensor dY = ctx.in(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), dY.rank());
  move_pieces(dY, ctx.outputs, axis, ctx.node.attrs.get_ints("split"), true, cc.stream);
}

void split_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  Tensor& dX = ctx.out(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), dX.rank());
  move_pieces(dX, ctx.inputs, axis, ctx.node.attrs.get_ints("split"), false, cc.stream);
}

// y: x broadcast to y's shape (the shape input is not read)
void expand_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  strided_copy(y.data(), strides_of(y.shape()), x.data(), broadcast_strides(x.shape(), y.shape()), y.shape(),
               dtype_size(x.dtype()), cc.stream);
}

// dX: dY summed over the axes the forward broadcast
void expand_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  broadcast_sum(dY.dtype(), dX.data(), dX.shape(), dY.data(), dY.shape(), nullptr, {}, Route::All, cc.stream);
}

// y: x repeated along each axis, copied as a broadcast (graph/shape_utils.h, tile_view).
void tile_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const TileView v = tile_view(x.shape(), y.shape());
  strided_copy(y.data(), strides_of(v.tiled), x.data(), broadcast_strides(v.input, v.tiled), v.tiled,
               dtype_size(x.dtype()), cc.stream);
}

// dX: dY's copies summed, as ExpandGrad over the tiled view
void tile_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  const TileView v = tile_view(dX.shape(), dY.shape());
  broadcast_sum(dY.dtype(), dX.data(), v.input, dY.data(), v.tiled, nullptr, {}, Route::All, cc.stream);
}

}  // namespace

CBT_REGISTER_KERNEL("", "Tile", DeviceKind::CUDA, tile_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "TileGrad", DeviceKind::CUDA, tile_grad_kernel);
CBT_REGISTER_KERNEL("", "Flatten", DeviceKind::CUDA, copy_kernel);
CBT_REGISTER_KERNEL("", "Reshape", DeviceKind::CUDA, copy_kernel);
CBT_REGISTER_KERNEL("", "Squeeze", DeviceKind::CUDA, copy_kernel);
CBT_REGISTER_KERNEL("", "Unsqueeze", DeviceKind::CUDA, copy_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "ReshapeTo", DeviceKind::CUDA, copy_kernel);
CBT_REGISTER_KERNEL("", "Transpose", DeviceKind::CUDA, transpose_kernel);
CBT_REGISTER_KERNEL("", "DepthToSpace", DeviceKind::CUDA, depth_space_kernel);
CBT_REGISTER_KERNEL("", "SpaceToDepth", DeviceKind::CUDA, depth_space_kernel);
CBT_REGISTER_KERNEL("", "Concat", DeviceKind::CUDA, concat_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "Roll", DeviceKind::CUDA, roll_kernel);
CBT_REGISTER_KERNEL("", "Split", DeviceKind::CUDA, split_kernel);
CBT_REGISTER_KERNEL("", "Expand", DeviceKind::CUDA, expand_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "ConcatGrad", DeviceKind::CUDA, concat_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "SplitGrad", DeviceKind::CUDA, split_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "ExpandGrad", DeviceKind::CUDA, expand_grad_kernel);

}  // namespace cbt
