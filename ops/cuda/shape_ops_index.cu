// CUDA kernels of Slice, Pad, Gather and their backward ops. Slice ranges and Pad amounts
// come from the constant parameter inputs, read on the host once per node (node_params) and
// normalised by the helpers the schemas use; Gather indices are read on the device.
#include <cstring>

#include "ops/cuda/shape_ops_common.cuh"

namespace cbt {
namespace {
using namespace cuda::shape;
using cuda::blocks_for;
using cuda::kThreads;

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

// starts, ends, axes, steps: inputs 1..4 (attributes before opset 10)
std::shared_ptr<const SliceRange> slice_params(const KernelContext& ctx, const Shape& in) {
  return node_params<SliceRange>(ctx, {1, 2, 3, 4},
                                 [&](const InputValues& v) { return node_slice_range(ctx.node, in, v); });
}

// y: x[start : : step] in every axis
void slice_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  auto r = slice_params(ctx, x.shape());
  auto [offset, src] = slice_layout(x.shape(), *r);
  const size_t elem = dtype_size(x.dtype());
  strided_copy(y.data(), strides_of(y.shape()),
               static_cast<const std::byte*>(x.data()) + offset * static_cast<int64_t>(elem), src, y.shape(), elem,
               cc.stream);
}

// dX: zeros with dY written at the sliced positions (they are distinct, so no sums)
void slice_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  auto r = slice_params(ctx, dX.shape());
  auto [offset, dst] = slice_layout(dX.shape(), *r);
  const size_t elem = dtype_size(dX.dtype());
  if (dX.nbytes()) CBT_CUDA_CHECK(cudaMemsetAsync(dX.data(), 0, dX.nbytes(), cc.stream));
  strided_copy(static_cast<std::byte*>(dX.data()) + offset * static_cast<int64_t>(elem), dst, dY.data(),
               strides_of(dY.shape()), dY.shape(), elem, cc.stream);
}

// Pad geometry by value: output position o reads input o - before (per axis), mapped back
// into the input by the mode where it falls outside; rank as given (no merging).
struct PadPlan {
  int rank = 0;
  int mode = 0;  // PadMode
  int64_t out[kMaxDims] = {}, in[kMaxDims] = {}, in_strides[kMaxDims] = {}, before[kMaxDims] = {};
};

// Input offset that output element o (linear, row-major) reads; -1 for the constant.
__device__ __forceinline__ int64_t pad_source(const PadPlan& p, int64_t o) {
  int64_t src = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < p.rank) {
      const int64_t q = o / p.out[d];
      int64_t i = o - q * p.out[d] - p.before[d];
      o = q;
      const int64_t n = p.in[d];
      if (i < 0 || i >= n) {
        switch (static_cast<PadMode>(p.mode)) {
          case PadMode::Constant:
            return -1;
          case PadMode::Edge:
            i = i < 0 ? 0 : n - 1;
            break;
          case PadMode::Reflect:
            i = i < 0 ? -i : 2 * (n - 1) - i;
            break;
          case PadMode::Wrap:
            i = ((i % n) + n) % n;
            break;
        }
      }
      src += i * p.in_strides[d];
    }
  }
  return src;
}

// y: x padded; the constant is *value when the constant_value input is given, else `bits`
template <class W>
__global__ void pad_values(W* __restrict__ y, const W* __restrict__ x, const W* value, W bits,
                           const __grid_constant__ PadPlan p, int64_t n) {
  const W c = value ? *value : bits;
  CBT_GRID_STRIDE_LOOP(o, n) {
    const int64_t s = pad_source(p, o);
    y[o] = s < 0 ? c : x[s];
  }
}

// dX: every dY element added to the input position it was read from (several for
// reflect/edge/wrap, hence atomics; constant mode never collides)
template <class T>
__global__ void pad_grad_values(T* __restrict__ dX, const T* __restrict__ dY, const __grid_constant__ PadPlan p,
                                int64_t n) {
  CBT_GRID_STRIDE_LOOP(o, n) {
    const int64_t s = pad_source(p, o);
    if (s >= 0) atomicAdd(dX + s, dY[o]);
  }
}

struct PadParams {
  std::vector<int64_t> pads;
  PadMode mode;
};

// pads: input 1 (attribute before opset 11), axes: input 3; validated like the schema.
std::shared_ptr<const PadParams> pad_params(const KernelContext& ctx, const Shape& in) {
  return node_params<PadParams>(ctx, {1, 3}, [&](const InputValues& v) {
    PadParams p{node_pads(ctx.node, in, v), parse_pad_mode(ctx.node.attrs.get_string("mode", "constant"))};
    pad_index_maps(in, p.pads, p.mode);  // throws where the mode cannot produce the padding
    return p;
  });
}

PadPlan pad_plan(const Shape& in, const Shape& out, const PadParams& params) {
  CBT_MODEL_CHECK(in.size() <= static_cast<size_t>(kMaxDims), "Pad of rank ", in.size(), " on the GPU (at most ",
                  kMaxDims, ")");
  PadPlan p;
  p.rank = static_cast<int>(in.size());
  p.mode = static_cast<int>(params.mode);
  auto st = strides_of(in);
  for (int d = 0; d < p.rank; ++d) {
    p.out[d] = out[d];
    p.in[d] = in[d];
    p.in_strides[d] = st[d];
    p.before[d] = params.pads[d];
  }
  return p;
}

// The opset < 11 `value` attribute as the raw bits of one element of `dtype` (as the CPU).
uint64_t pad_value_bits(const Node& node, DType dtype) {
  const double f = node.attrs.get_float("value", 0.0f);
  uint64_t bits = 0;
  switch (dtype) {
    case DType::Float32: {
      const float v = static_cast<float>(f);
      std::memcpy(&bits, &v, sizeof v);
      break;
    }
    case DType::Float64:
      std::memcpy(&bits, &f, sizeof f);
      break;
    case DType::Int64: {
      const auto v = static_cast<int64_t>(f);
      std::memcpy(&bits, &v, sizeof v);
      break;
    }
    case DType::Int32: {
      const auto v = static_cast<int32_t>(f);
      std::memcpy(&bits, &v, sizeof v);
      break;
    }
    default:
      CBT_MODEL_CHECK(f == 0, "Pad value attribute on ", dtype_name(dtype), " data");
  }
  return bits;
}

void pad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t n = y.numel();
  if (n == 0) return;
  const PadPlan p = pad_plan(x.shape(), y.shape(), *pad_params(ctx, x.shape()));
  // The constant_value input (a one-element device tensor) is read by the kernel itself.
  const void* value = ctx.has_in(2) ? ctx.in(2).data() : nullptr;
  const uint64_t bits = value ? 0 : pad_value_bits(ctx.node, x.dtype());
  with_word(dtype_size(x.dtype()), [&]<class W>() {
    W w;
    std::memcpy(&w, &bits, sizeof w);
    pad_values<W><<<blocks_for(n), kThreads, 0, cc.stream>>>(static_cast<W*>(y.data()), static_cast<const W*>(x.data()),
                                                             static_cast<const W*>(value), w, p, n);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

void pad_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& dY = ctx.in(0);
  Tensor& dX = ctx.out(0);
  const auto params = pad_params(ctx, dX.shape());
  CBT_MODEL_CHECK(!cc.deterministic || params->mode == PadMode::Constant, "the gradient of Pad ", "node '",
                  ctx.node.name, "' in edge, reflect or wrap mode sums with atomics on ",
                  "the GPU and is not reproducible; train without --deterministic or on the CPU");
  const PadPlan p = pad_plan(dX.shape(), dY.shape(), *params);
  if (dX.nbytes()) CBT_CUDA_CHECK(cudaMemsetAsync(dX.data(), 0, dX.nbytes(), cc.stream));
  const int64_t n = dY.numel();
  if (n == 0 || dX.numel() == 0) return;
  dispatch_float(dY.dtype(), [&]<class T>() {
    pad_grad_values<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(dX.ptr<T>(), dY.ptr<T>(), p, n);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

// Index j of an int32 or int64 index tensor, normalised to [0, dim); -1 when out of range.
// The CPU throws on such an index; the GPU cannot, so the forward writes zeros there and
// the backward drops its gradient (constant indices were already checked by inference).
__device__ __forceinline__ int64_t load_index(const void* idx, bool idx64, int64_t j, int64_t dim) {
  int64_t v = idx64 ? static_cast<const int64_t*>(idx)[j] : static_cast<int64_t>(static_cast<const int32_t*>(idx)[j]);
  if (v < 0) v += dim;
  return v >= 0 && v < dim ? v : -1;
}

// data: (outer, dim, inner), indices: (n_idx,) -> y: (outer, n_idx, inner)
template <class W>
__global__ void gather_rows(W* __restrict__ y, const W* __restrict__ data, const void* idx, bool idx64, int64_t n_idx,
                            int64_t dim, int64_t inner, int64_t total) {
  CBT_GRID_STRIDE_LOOP(e, total) {
    const int64_t row = e / inner, k = e - row * inner;
    const int64_t o = row / n_idx, j = row - o * n_idx;
    const int64_t v = load_index(idx, idx64, j, dim);
    y[e] = v < 0 ? W(0) : data[(o * dim + v) * inner + k];
  }
}

// dY: (outer, n_idx, inner) -> dX: (outer, dim, inner); repeated indices accumulate
template <class T>
__global__ void gather_grad_rows(T* __restrict__ dX, const T* __restrict__ dY, const void* idx, bool idx64,
                                 int64_t n_idx, int64_t dim, int64_t inner, int64_t total) {
  CBT_GRID_STRIDE_LOOP(e, total) {
    const int64_t row = e / inner, k = e - row * inner;
    const int64_t o = row / n_idx, j = row - o * n_idx;
    const int64_t v = load_index(idx, idx64, j, dim);
    if (v >= 0) atomicAdd(dX + (o * dim + v) * inner + k, dY[e]);
  }
}

// The same sums without atomics (--deterministic): one thread per dX element adds the dY
// rows of its index in index order. O(dX × indices), so only when reproducibility is asked.
template <class T>
__global__ void gather_grad_rows_ordered(T* __restrict__ dX, const T* __restrict__ dY, const void* idx, bool idx64,
                                         int64_t n_idx, int64_t dim, int64_t inner, int64_t total) {
  CBT_GRID_STRIDE_LOOP(e, total) {
    const int64_t row = e / inner, k = e - row * inner;
    const int64_t o = row / dim, v = row - o * dim;
    T acc = 0;
    for (int64_t j = 0; j < n_idx; ++j)
      if (load_index(idx, idx64, j, dim) == v) acc += dY[(o * n_idx + j) * inner + k];
    dX[e] = acc;
  }
}

bool index_is_64(const Tensor& indices) {
  CBT_MODEL_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
                  "Gather indices must be int64 or int32, got ", dtype_name(indices.dtype()));
  return indices.dtype() == DType::Int64;
}

void gather_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& data = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  Tensor& y = ctx.out(0);
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), data.rank());
  const int64_t dim = data.shape()[axis];
  const int64_t n_idx = indices.numel();
  int64_t inner = dims_product(data.shape(), axis + 1, data.rank());
  const int64_t total = y.numel();
  if (total == 0) return;
  // Whole rows move as wider words when their length and the addresses allow it.
  size_t elem = dtype_size(data.dtype());
  const auto ud = reinterpret_cast<uintptr_t>(data.data()), uy = reinterpret_cast<uintptr_t>(y.data());
  for (int64_t w = static_cast<int64_t>(8 / elem); w > 1; w /= 2) {
    const auto bytes = static_cast<uintptr_t>(elem) * static_cast<uintptr_t>(w);
    if (inner % w == 0 && ud % bytes == 0 && uy % bytes == 0) {
      inner /= w;
      elem *= static_cast<size_t>(w);
      break;
    }
  }
  const int64_t words = total / static_cast<int64_t>(elem / dtype_size(data.dtype()));
  const bool idx64 = index_is_64(indices);
  with_word(elem, [&]<class W>() {
    gather_rows<W><<<blocks_for(words), kThreads, 0, cc.stream>>>(
        static_cast<W*>(y.data()), static_cast<const W*>(data.data()), indices.data(), idx64, n_idx, dim, inner, words);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

void gather_grad_kernel(KernelContext& ctx) {
  auto& cc = cuda::context_of(ctx.device_ctx);
  const Tensor& dY = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  Tensor& dX = ctx.out(0);
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), dX.rank());
  const int64_t dim = dX.shape()[axis];
  const int64_t inner = dims_product(dX.shape(), axis + 1, dX.rank());
  const bool idx64 = index_is_64(indices);
  if (dX.nbytes()) CBT_CUDA_CHECK(cudaMemsetAsync(dX.data(), 0, dX.nbytes(), cc.stream));
  const int64_t total = dY.numel();
  if (total == 0 || dX.numel() == 0) return;
  dispatch_float(dY.dtype(), [&]<class T>() {
    if (cc.deterministic) {
      const int64_t n = dX.numel();
      gather_grad_rows_ordered<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(dX.ptr<T>(), dY.ptr<T>(), indices.data(),
                                                                             idx64, indices.numel(), dim, inner, n);
    } else {
      gather_grad_rows<T><<<blocks_for(total), kThreads, 0, cc.stream>>>(dX.ptr<T>(), dY.ptr<T>(), indices.data(),
                                                                         idx64, indices.numel(), dim, inner, total);
    }
  });
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "Slice", DeviceKind::CUDA, slice_kernel);
CBT_REGISTER_KERNEL("", "Pad", DeviceKind::CUDA, pad_kernel);
CBT_REGISTER_KERNEL("", "Gather", DeviceKind::CUDA, gather_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "SliceGrad", DeviceKind::CUDA, slice_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "PadGrad", DeviceKind::CUDA, pad_grad_kernel);
CBT_REGISTER_KERNEL(kCbtDomain, "GatherGrad", DeviceKind::CUDA, gather_grad_kernel);

}  // namespace cbt
