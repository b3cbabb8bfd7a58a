// CPU kernels of Slice, Pad, Gather and their backward ops (SliceGrad, PadGrad, GatherGrad).
// Forward kernels move opaque elements of any dtype; backward kernels accumulate floats.
#include "graph/ops/shape_ops_params.h"
#include "ops/cpu/shape_ops_common.h"

namespace cbt {
namespace {
using namespace shape_ops;

InputValues host_values(const KernelContext& ctx) {
  InputValues v;
  for (const Tensor& t : ctx.inputs) v.push_back(t.defined() ? &t : nullptr);
  return v;
}

// Offset (elements) of the slice's first element and the strides of a step in each axis.
std::pair<int64_t, std::vector<int64_t>> slice_layout(const Shape& in, const SliceRange& r) {
  auto st = strides_of(in);
  int64_t offset = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    offset += r.start[d] * st[d];
    st[d] *= r.step[d];
  }
  return {offset, st};
}

// y: x[start : : step] in every axis
void slice_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  SliceRange r = node_slice_range(ctx.node, x.shape(), host_values(ctx));
  auto [offset, src] = slice_layout(x.shape(), r);
  size_t elem = dtype_size(x.dtype());
  strided_copy(y.data(), strides_of(y.shape()),
               static_cast<const std::byte*>(x.data()) + offset * static_cast<int64_t>(elem), src, y.shape(), elem);
}

// dX: zeros with dY written at the sliced positions (they are distinct, so no sums)
void slice_grad_kernel(KernelContext& ctx) {
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  SliceRange r = node_slice_range(ctx.node, dX.shape(), host_values(ctx));
  auto [offset, dst] = slice_layout(dX.shape(), r);
  size_t elem = dtype_size(dX.dtype());
  zero_fill(dX);
  strided_copy(static_cast<std::byte*>(dX.data()) + offset * static_cast<int64_t>(elem), dst, dY.data(),
               strides_of(dY.shape()), dY.shape(), elem);
}

// Calls f(out_offset, in_offset) for every element of the padded shape; in_offset is -1
// where the output holds the constant.
template <class F>
void for_each_padded(const Shape& in, const Shape& out, const std::vector<int64_t>& pads, PadMode mode, F&& f) {
  auto maps = pad_index_maps(in, pads, mode);
  auto st = strides_of(in);
  for (size_t d = 0; d < maps.size(); ++d)
    for (int64_t& m : maps[d]) m = m < 0 ? -1 : m * st[d];
  int64_t n = shape_numel(out);
  if (n == 0) return;
  if (out.empty()) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  size_t r = out.size();
  int64_t inner = out[r - 1];
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < n; o += inner) {
    int64_t base = 0;
    for (size_t d = 0; d + 1 < r && base >= 0; ++d) base = maps[d][idx[d]] < 0 ? -1 : base + maps[d][idx[d]];
    for (int64_t k = 0; k < inner; ++k) f(o + k, base < 0 || maps[r - 1][k] < 0 ? int64_t{-1} : base + maps[r - 1][k]);
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
}

// The padding value as `elem` raw bytes of the data's dtype.
std::vector<std::byte> pad_value(const KernelContext& ctx, DType dtype) {
  size_t elem = dtype_size(dtype);
  std::vector<std::byte> v(elem, std::byte{0});
  if (ctx.has_in(2)) {
    std::memcpy(v.data(), ctx.in(2).data(), elem);
  } else if (ctx.node.attrs.has("value")) {  // opset < 11
    double f = ctx.node.attrs.get_float("value", 0.0f);
    Tensor t(dtype, {});
    switch (dtype) {
      case DType::Float32:
        *t.ptr<float>() = static_cast<float>(f);
        break;
      case DType::Float64:
        *t.ptr<double>() = f;
        break;
      case DType::Int64:
        *t.ptr<int64_t>() = static_cast<int64_t>(f);
        break;
      case DType::Int32:
        *t.ptr<int32_t>() = static_cast<int32_t>(f);
        break;
      default:
        CBT_MODEL_CHECK(f == 0, "Pad value attribute on ", dtype_name(dtype), " data");
    }
    std::memcpy(v.data(), t.data(), elem);
  }
  return v;
}

void pad_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  auto pads = node_pads(ctx.node, x.shape(), host_values(ctx));
  PadMode mode = parse_pad_mode(ctx.node.attrs.get_string("mode", "constant"));
  auto value = pad_value(ctx, x.dtype());
  with_elem_size(value.size(), [&]<size_t E>() {
    auto* dst = static_cast<std::byte*>(y.data());
    const auto* src = static_cast<const std::byte*>(x.data());
    const int64_t e = static_cast<int64_t>(E);
    for_each_padded(x.shape(), y.shape(), pads, mode,
                    [&](int64_t o, int64_t i) { std::memcpy(dst + o * e, i < 0 ? value.data() : src + i * e, E); });
  });
}

// dX: every dY element added to the input position it was read from
void pad_grad_kernel(KernelContext& ctx) {
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  auto pads = node_pads(ctx.node, dX.shape(), host_values(ctx));
  PadMode mode = parse_pad_mode(ctx.node.attrs.get_string("mode", "constant"));
  dispatch_float(dY.dtype(), [&]<class T>() {
    zero_fill(dX);
    T* dx = dX.ptr<T>();
    const T* dy = dY.ptr<T>();
    for_each_padded(dX.shape(), dY.shape(), pads, mode, [&](int64_t o, int64_t i) {
      if (i >= 0) dx[i] += dy[o];
    });
  });
}

// Indices normalised to [0, dim); an out-of-range index is an error in the model's data.
std::vector<int64_t> gather_indices(const Tensor& indices, int64_t dim) {
  auto idx = indices.to_i64_vector();
  for (int64_t& k : idx) {
    CBT_MODEL_CHECK(k >= -dim && k < dim, "Gather index ", k, " out of range for an axis of ", dim);
    if (k < 0) k += dim;
  }
  return idx;
}

// data: (outer, dim, inner), indices: (n,) -> y: (outer, n, inner)
void gather_kernel(KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  Tensor& y = ctx.out(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), data.rank());
  int64_t dim = data.shape()[axis];
  auto idx = gather_indices(ctx.in(1), dim);
  int64_t outer = dims_product(data.shape(), 0, axis);
  int64_t row = dims_product(data.shape(), axis + 1, data.rank()) * static_cast<int64_t>(dtype_size(data.dtype()));
  const auto* src = static_cast<const std::byte*>(data.data());
  auto* dst = static_cast<std::byte*>(y.data());
  int64_t n = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) std::memcpy(dst + (o * n + j) * row, src + (o * dim + idx[j]) * row, row);
}

// dY: (outer, n, inner) -> dX: (outer, dim, inner), repeated indices accumulate
void gather_grad_kernel(KernelContext& ctx) {
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), dX.rank());
  int64_t dim = dX.shape()[axis];
  auto idx = gather_indices(ctx.in(1), dim);
  int64_t outer = dims_product(dX.shape(), 0, axis);
  int64_t inner = dims_product(dX.shape(), axis + 1, dX.rank());
  int64_t n = static_cast<int64_t>(idx.size());
  dispatch_float(dY.dtype(), [&]<class T>() {
    zero_fill(dX);
    T* dx = dX.ptr<T>();
    const T* dy = dY.ptr<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j) {
        T* to = dx + (o * dim + idx[j]) * inner;
        const T* from = dy + (o * n + j) * inner;
        for (int64_t k = 0; k < inner; ++k) to[k] += from[k];
      }
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "Slice", DeviceKind::CPU, slice_kernel);
CBT_REGISTER_KERNEL("", "Pad", DeviceKind::CPU, pad_kernel);
CBT_REGISTER_KERNEL("", "Gather", DeviceKind::CPU, gather_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "SliceGrad", DeviceKind::CPU, slice_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "PadGrad", DeviceKind::CPU, pad_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "GatherGrad", DeviceKind::CPU, gather_grad_kernel);

}  // namespace cbt
