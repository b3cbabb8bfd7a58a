// CUDA kernels of ReduceSum/ReduceMean/ReduceMax/ReduceMin/ReduceProd and their backward ops, of
// GlobalMaxPool (ReduceMax over the spatial dims), and of ArgMax/ArgMin (one thread an output,
// ops/arg_extreme.h's rule); ops/cpu/reduce.cpp is the specification. Sums are deterministic
// (sum_to: fixed split, fixed order).

#include "ops/arg_extreme.h"
#include "ops/cuda/broadcast.cuh"
#include "ops/cuda/host_input.h"

namespace cbt::cuda::ew {
namespace {

// `in` with the dims named by `axes` set to 1 (empty axes: all, or none with
// noop_with_empty_axes), as on the CPU.
Shape kept_from_axes(const KernelContext& ctx, const Shape& in, const std::vector<int64_t>& axes) {
  Shape kept = in;
  if (axes.empty()) {
    if (!ctx.node.attrs.get_int("noop_with_empty_axes", 0))
      for (auto& d : kept) d = 1;
    return kept;
  }
  for (int64_t a : normalize_axes(axes, static_cast<int64_t>(in.size()))) kept[a] = 1;
  return kept;
}

// Positions of `sub` in `in` when sub is a subsequence, matched from the left or the right.
bool embed(const Shape& in, const Shape& sub, bool from_left, std::vector<size_t>& pos) {
  pos.assign(sub.size(), 0);
  size_t n = in.size(), m = sub.size();
  if (from_left) {
    for (size_t i = 0, k = 0; k < m; ++i) {
      if (i == n) return false;
      if (in[i] == sub[k]) pos[k++] = i;
    }
  } else {
    for (size_t i = n, k = m; k > 0; --i) {
      if (i == 0) return false;
      if (in[i - 1] == sub[k - 1]) pos[--k] = i - 1;
    }
  }
  return true;
}

// The kept shape from the shapes alone, when they determine it: with keepdims the reduced
// shape is it; without, the reduced shape must sit in `in` in one way only (1-dims do not
// matter: summing over them changes nothing).
bool kept_from_shapes(const Shape& in, const Shape& reduced, Shape& kept) {
  if (reduced.size() == in.size()) {
    kept = reduced;
    return true;
  }
  Shape in_big, red_big;
  std::vector<size_t> where;  // index in `in` of each entry of in_big
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1) {
      in_big.push_back(in[i]);
      where.push_back(i);
    }
  for (int64_t d : reduced)
    if (d != 1) red_big.push_back(d);
  std::vector<size_t> left, right;
  if (!embed(in_big, red_big, true, left) || !embed(in_big, red_big, false, right) || left != right) return false;
  kept.assign(in.size(), 1);
  for (size_t p : left) kept[where[p]] = in[where[p]];
  return true;
}

// X's shape `in` with the reduced dims set to 1, where `reduced` is the reduced tensor's
// shape. The axes input (opset 13+ ReduceSum, 18+ ReduceMean) lives on the device; reading it
// would stall the stream, so it is read (once, then cached in the node's state by host_input)
// only when the shapes, which the schema inferred from those same axes, leave the answer open.
Shape kept_shape(KernelContext& ctx, const Shape& in, const Shape& reduced) {
  if (!ctx.has_in(1)) return kept_from_axes(ctx, in, ctx.node.attrs.get_ints("axes"));
  const Tensor& axes = ctx.in(1);
  Shape kept;
  if (!axes.device().is_cpu() && axes.numel() > 0 && kept_from_shapes(in, reduced, kept)) return kept;
  return kept_from_axes(ctx, in, host_input<int64_t>(ctx, 1));
}

// x: any shape; y: x reduced (keepdims or not: the same memory layout).
template <bool Mean>
void reduce(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  Shape kept = kept_shape(ctx, x.shape(), y.shape());
  if (Mean) require_f32(ctx, x);
  Scratch ws(cc);
  dispatch_arith(ctx, x.dtype(), [&]<class T>() {
    T scale = Mean && x.numel() ? static_cast<T>(static_cast<double>(y.numel()) / x.numel()) : T(1);
    sum_to(cc.stream, ws, x.ptr<T>(), x.shape(), y.ptr<T>(), kept, scale);
  });
}

// dY: the reduced shape; dX: attribute 'shape'.
template <bool Mean>
void reduce_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& dy = ctx.in(0);
  Tensor& dx = ctx.out(0);
  require_f32(ctx, dy);
  Shape kept = kept_shape(ctx, dx.shape(), dy.shape());
  float scale = Mean && dx.numel() ? static_cast<float>(static_cast<double>(dy.numel()) / dx.numel()) : 1.0f;
  broadcast_to(cc.stream, dy.ptr<float>(), kept, dx.ptr<float>(), dx.shape(), scale);
}

// X's dims split into those Y keeps and those reduced, with their sizes and strides in X: one
// thread per element of Y walks its group.
struct GroupPlan {
  static constexpr int kMaxRank = 8;
  int kept_rank = 0, reduced_rank = 0;
  int64_t kept_size[kMaxRank], kept_stride[kMaxRank], reduced_size[kMaxRank], reduced_stride[kMaxRank];
  int64_t group = 1;  // elements of X per element of Y
};

GroupPlan group_plan(const Shape& in, const Shape& kept) {
  CBT_CHECK(in.size() <= static_cast<size_t>(GroupPlan::kMaxRank),
            "ReduceMax/ReduceMin on CUDA take rank <= ", GroupPlan::kMaxRank, ", not ", in.size());
  GroupPlan p;
  const std::vector<int64_t> strides = strides_of(in);
  for (size_t d = 0; d < in.size(); ++d) {
    if (kept[d] == 1 && in[d] != 1) {
      p.reduced_size[p.reduced_rank] = in[d];
      p.reduced_stride[p.reduced_rank++] = strides[d];
      p.group *= in[d];
    } else {
      p.kept_size[p.kept_rank] = in[d];
      p.kept_stride[p.kept_rank++] = strides[d];
    }
  }
  return p;
}

__device__ int64_t group_base(const GroupPlan& p, int64_t o) {
  int64_t base = 0;
  for (int i = p.kept_rank - 1; i >= 0; --i) {
    base += (o % p.kept_size[i]) * p.kept_stride[i];
    o /= p.kept_size[i];
  }
  return base;
}

__device__ int64_t group_offset(const GroupPlan& p, int64_t r) {
  int64_t off = 0;
  for (int i = p.reduced_rank - 1; i >= 0; --i) {
    off += (r % p.reduced_size[i]) * p.reduced_stride[i];
    r /= p.reduced_size[i];
  }
  return off;
}

// NaN wins, as on the CPU.
template <bool Max, class T>
__global__ void extreme_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, const GroupPlan p) {
  CBT_GRID_STRIDE_LOOP(o, n) {
    const int64_t base = group_base(p, o);
    T best = x[base];
    for (int64_t r = 1; r < p.group && best == best; ++r) {
      const T v = x[base + group_offset(p, r)];
      if (v != v || (Max ? v > best : v < best)) best = v;
    }
    y[o] = best;
  }
}

// dY shared evenly among the elements of the group equal to Y; every element of X belongs to one
// group, so each thread writes its own.
__global__ void extreme_grad_kernel(const float* __restrict__ dy, const float* __restrict__ x,
                                    const float* __restrict__ y, float* __restrict__ dx, int64_t n, const GroupPlan p) {
  CBT_GRID_STRIDE_LOOP(o, n) {
    const int64_t base = group_base(p, o);
    int64_t ties = 0;
    for (int64_t r = 0; r < p.group; ++r) ties += x[base + group_offset(p, r)] == y[o];
    const float share = ties ? dy[o] / static_cast<float>(ties) : 0.0f;
    for (int64_t r = 0; r < p.group; ++r) {
      const int64_t off = base + group_offset(p, r);
      dx[off] = x[off] == y[o] ? share : 0.0f;
    }
  }
}

template <bool Max>
void reduce_extreme(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t n = y.numel();
  if (n == 0 || x.numel() == 0) return;
  const GroupPlan p = group_plan(x.shape(), kept_shape(ctx, x.shape(), y.shape()));
  dispatch_arith(ctx, x.dtype(), [&]<class T>() {
    extreme_kernel<Max, T><<<blocks_for(n), kThreads, 0, cc.stream>>>(x.ptr<T>(), y.ptr<T>(), n, p);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

// dX from dY, X and Y (n elements, X's groups as `p`).
void extreme_grad(const CudaContext& cc, const float* dy, const float* x, const float* y, float* dx, int64_t n,
                  const GroupPlan& p) {
  extreme_grad_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(dy, x, y, dx, n, p);
  CBT_CUDA_CHECK_LAUNCH();
}

void reduce_extreme_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &x = ctx.in(2), &y = ctx.in(3);
  Tensor& dx = ctx.out(0);
  for (const Tensor* t : {&dy, &x, &y}) require_f32(ctx, *t);
  const int64_t n = dy.numel();
  if (n == 0 || dx.numel() == 0) return;
  const GroupPlan p = group_plan(dx.shape(), kept_shape(ctx, dx.shape(), dy.shape()));
  extreme_grad(cc, dy.ptr<float>(), x.ptr<float>(), y.ptr<float>(), dx.ptr<float>(), n, p);
}

// The product of each group, in X's order as on the CPU.
template <class T>
__global__ void prod_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, const GroupPlan p) {
  CBT_GRID_STRIDE_LOOP(o, n) {
    const int64_t base = group_base(p, o);
    T acc = T(1);
    for (int64_t r = 0; r < p.group; ++r) acc *= x[base + group_offset(p, r)];
    y[o] = acc;
  }
}

// dY times the product of the group's other elements (ops/cpu/reduce.cpp's rule for zeros).
__global__ void prod_grad_kernel(const float* __restrict__ dy, const float* __restrict__ x, float* __restrict__ dx,
                                 int64_t n, const GroupPlan p) {
  CBT_GRID_STRIDE_LOOP(o, n) {
    const int64_t base = group_base(p, o);
    float others = 1.0f;
    int64_t zeros = 0;
    for (int64_t r = 0; r < p.group; ++r) {
      const float v = x[base + group_offset(p, r)];
      if (v == 0.0f)
        ++zeros;
      else
        others *= v;
    }
    for (int64_t r = 0; r < p.group; ++r) {
      const int64_t off = base + group_offset(p, r);
      dx[off] = zeros == 0 ? dy[o] * others / x[off] : zeros == 1 && x[off] == 0.0f ? dy[o] * others : 0.0f;
    }
  }
}

void reduce_prod(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t n = y.numel();
  if (n == 0) return;
  const GroupPlan p = group_plan(x.shape(), kept_shape(ctx, x.shape(), y.shape()));
  dispatch_arith(ctx, x.dtype(), [&]<class T>() {
    prod_kernel<T><<<blocks_for(n), kThreads, 0, cc.stream>>>(x.ptr<T>(), y.ptr<T>(), n, p);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

void reduce_prod_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &x = ctx.in(2);
  Tensor& dx = ctx.out(0);
  for (const Tensor* t : {&dy, &x}) require_f32(ctx, *t);
  const int64_t n = dy.numel();
  if (n == 0 || dx.numel() == 0) return;
  const GroupPlan p = group_plan(dx.shape(), kept_shape(ctx, dx.shape(), dy.shape()));
  prod_grad_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(dy.ptr<float>(), x.ptr<float>(), dx.ptr<float>(), n, p);
  CBT_CUDA_CHECK_LAUNCH();
}

// GlobalMaxPool: (N, C, spatial...) -> (N, C, 1, ...); its backward op recomputes the max.
void global_max_pool(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  require_f32(ctx, x);
  const int64_t n = y.numel();
  if (n == 0 || x.numel() == 0) return;
  extreme_kernel<true, float>
      <<<blocks_for(n), kThreads, 0, cc.stream>>>(x.ptr<float>(), y.ptr<float>(), n, group_plan(x.shape(), y.shape()));
  CBT_CUDA_CHECK_LAUNCH();
}

void global_max_pool_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dy = ctx.in(0), &x = ctx.in(1);
  Tensor& dx = ctx.out(0);
  require_f32(ctx, dy);
  require_f32(ctx, x);
  const int64_t n = dy.numel();
  if (n == 0 || dx.numel() == 0) return;
  const GroupPlan p = group_plan(x.shape(), dy.shape());
  Scratch ws(cc);
  float* y = ws.take<float>(n, "the recomputed maxima");
  extreme_kernel<true, float><<<blocks_for(n), kThreads, 0, cc.stream>>>(x.ptr<float>(), y, n, p);
  CBT_CUDA_CHECK_LAUNCH();
  extreme_grad(cc, dy.ptr<float>(), x.ptr<float>(), y, dx.ptr<float>(), n, p);
}

template <bool Max, class T>
__global__ void arg_extreme_kernel(const T* x, int64_t* y, AxisView a, bool last) {
  CBT_GRID_STRIDE_LOOP(k, a.outer * a.inner) { y[k] = arg_extreme_at<Max>(x, a, k / a.inner, k % a.inner, last); }
}

template <bool Max>
void arg_extreme(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& x = ctx.in(0);
  const AxisView a(x.shape(), ctx.node.attrs.get_int("axis", 0));
  const bool last = ctx.node.attrs.get_int("select_last_index", 0) != 0;
  const int64_t n = a.outer * a.inner;
  if (n == 0) return;
  dispatch_arith(ctx, x.dtype(), [&]<class T>() {
    arg_extreme_kernel<Max, T>
        <<<blocks_for(n), kThreads, 0, cc.stream>>>(x.ptr<T>(), ctx.out(0).ptr<int64_t>(), a, last);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "ArgMax", DeviceKind::CUDA, arg_extreme<true>);
CBT_REGISTER_KERNEL("", "ArgMin", DeviceKind::CUDA, arg_extreme<false>);
CBT_REGISTER_KERNEL("", "GlobalMaxPool", DeviceKind::CUDA, global_max_pool);
CBT_REGISTER_KERNEL(kCbtDomain, "GlobalMaxPoolGrad", DeviceKind::CUDA, global_max_pool_grad);
CBT_REGISTER_KERNEL("", "ReduceMax", DeviceKind::CUDA, reduce_extreme<true>);
CBT_REGISTER_KERNEL("", "ReduceMin", DeviceKind::CUDA, reduce_extreme<false>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceMaxGrad", DeviceKind::CUDA, reduce_extreme_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceMinGrad", DeviceKind::CUDA, reduce_extreme_grad);
CBT_REGISTER_KERNEL("", "ReduceProd", DeviceKind::CUDA, reduce_prod);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceProdGrad", DeviceKind::CUDA, reduce_prod_grad);
CBT_REGISTER_KERNEL("", "ReduceSum", DeviceKind::CUDA, reduce<false>);
CBT_REGISTER_KERNEL("", "ReduceMean", DeviceKind::CUDA, reduce<true>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceSumGrad", DeviceKind::CUDA, reduce_grad<false>);
CBT_REGISTER_KERNEL(kCbtDomain, "ReduceMeanGrad", DeviceKind::CUDA, reduce_grad<true>);

}  // namespace cbt::cuda::ew
