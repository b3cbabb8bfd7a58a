// The normalisations over rows, CUDA kernels (forward and backward): LayerNormalization, RMSNorm
// (LayerNormalization without the mean and the bias, ops/norm_rows.h's RowNormForm), and
// Instance/GroupNormalization (a row is one sample's group of channels, ops/norm_rows.h).
// Statistics are reduced in double, in a fixed order (deterministic), with the CPU's formulas.
#include <algorithm>
#include <cmath>

#include "graph/ops/norm_groups.h"
#include "ops/cuda/broadcast.cuh"
#include "ops/cuda/dense_util.cuh"
#include "ops/norm_rows.h"

namespace cbt::cuda {
namespace {

void check_float(const Tensor& t, const Node& node) { check_float32(t, node, "normalises float32 tensors"); }

// X viewed as (rows, inner) around the normalisation axis (ops/norm_rows.h).
struct Rows : NormRows {
  using NormRows::NormRows;
  // One block per row (looping when rows exceed the grid); threads a multiple of 32.
  int threads() const { return static_cast<int>(std::clamp<int64_t>((inner + 31) / 32 * 32, 32, 256)); }
  unsigned blocks() const { return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, 65535)); }
};

// Mean and 1/sqrt(var + eps) of row xr (length n), known to every thread of the block;
// uncentred (RMSNorm), 0 and 1/sqrt(mean(x^2) + eps).
__device__ double2 row_stats(const float* xr, int64_t n, double eps, double* shared, bool centered = true) {
  double mean = 0;
  if (centered) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += xr[j];
    mean = block_sum_all(sum, shared) / double(n);
  }
  double sq = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sq += (xr[j] - mean) * (xr[j] - mean);
  double var = block_sum_all(sq, shared) / double(n);
  return make_double2(mean, 1.0 / sqrt(var + eps));
}

// x: (rows, inner), scale?, b?: (inner) -> y, mean?, invstd?: (rows)
__global__ void layer_norm_fwd_kernel(const float* x, const float* scale, const float* bias, float* y, float* mean_out,
                                      float* invstd_out, Rows d, double eps, bool centered) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const float* xr = x + r * d.inner;
    float* yr = y + r * d.inner;
    double2 st = row_stats(xr, d.inner, eps, shared, centered);
    for (int64_t j = threadIdx.x; j < d.inner; j += blockDim.x)
      yr[j] = static_cast<float>((xr[j] - st.x) * st.y * (scale ? scale[j] : 1.0f) + (bias ? bias[j] : 0.0f));
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[r] = static_cast<float>(st.x);
      if (invstd_out) invstd_out[r] = static_cast<float>(st.y);
    }
  }
}

// LayerNormalization: X, scale, B? -> Y, Mean?, InvStdDev?; RMSNorm: X, scale? -> Y, InvRms?
void layer_norm_forward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const RowNormForm f = RowNormForm::of(ctx.node.op_type);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  Rows d(X, ctx.node.attrs.get_int("axis", -1));
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  layer_norm_fwd_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(
      fptr(X), optional_in<float>(ctx, 1), optional_in<float>(ctx, f.bias_in), fptr_out(ctx.out(0)),
      optional_out<float>(ctx, f.mean_out), optional_out<float>(ctx, f.invstd_out), d, eps, f.centered);
  CBT_CUDA_CHECK_LAUNCH();
}

// stats[r] = (mean, invstd) of row r, recomputed (the forward did not save them).
__global__ void layer_norm_stats_kernel(const float* x, double2* stats, Rows d, double eps, bool centered) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    double2 st = row_stats(x + r * d.inner, d.inner, eps, shared, centered);
    if (threadIdx.x == 0) stats[r] = st;
  }
}

// Row r's (mean, invstd): the forward's saved float32 ones (the training graph asks the forward
// for them, graph/ops/norm.cpp; RMSNorm saves no mean, 0), or those layer_norm_stats_kernel
// recomputed.
struct RowStats {
  const double2* computed;
  const float *mean, *invstd;
  __device__ double2 operator()(int64_t r) const {
    return computed ? computed[r] : make_double2(mean ? mean[r] : 0.0f, invstd[r]);
  }
};

// partial[chunk * inner + j] = (sum dy * xhat, sum dy) of column j over the rows of chunk.
__global__ void layer_norm_param_partials_kernel(const float* dy, const float* x, RowStats stats, Rows d,
                                                 int64_t chunks, double2* partial) {
  int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= d.inner) return;
  int64_t chunk = blockIdx.y, lo = d.rows * chunk / chunks, hi = d.rows * (chunk + 1) / chunks;
  double ds = 0, db = 0;
  for (int64_t r = lo; r < hi; ++r) {
    double g = dy[r * d.inner + j];
    const double2 st = stats(r);
    ds += g * (x[r * d.inner + j] - st.x) * st.y;
    db += g;
  }
  partial[chunk * d.inner + j] = make_double2(ds, db);
}

// dScale[p], dBias[p] = the sums of `terms` partials at(p, t), a warp per parameter: lane l
// takes t = l, l + 32, ..., then the warp's fixed tree (deterministic). One thread per
// parameter would walk every partial in series: a long chain when parameters are few (a
// LayerNorm over 24 channels of 6,000 rows spent 24 µs there).
template <class At>
__global__ void norm_param_finalize_kernel(At at, int64_t params, int64_t terms, float* dscale, float* dbias) {
  constexpr int per_block = kThreads / 32;
  const int lane = threadIdx.x % 32;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / 32; p < params;
       p += static_cast<int64_t>(gridDim.x) * per_block) {
    double ds = 0, db = 0;
    for (int64_t t = lane; t < terms; t += 32) {
      const double2 v = at(p, t);
      ds += v.x, db += v.y;
    }
    ds = ew::group_reduce<32>(ds, ew::SumOp{}, static_cast<double*>(nullptr));
    db = ew::group_reduce<32>(db, ew::SumOp{}, static_cast<double*>(nullptr));
    if (lane == 0 && dscale) dscale[p] = static_cast<float>(ds);
    if (lane == 0 && dbias) dbias[p] = static_cast<float>(db);
  }
}

// LayerNormalization's partials: column j's chunk t.
struct ChunkOfColumn {
  const double2* partial;
  int64_t inner;
  __device__ double2 operator()(int64_t j, int64_t t) const { return partial[t * inner + j]; }
};

// dX of one row of n values, by the block: invstd * (g - mean(g) - xhat * mean(g * xhat)),
// g = dy * scale_at(j) (a float product, as on the CPU); uncentred rows (RMSNorm) have no
// mean(g) term.
template <class ScaleAt>
__device__ void row_dx(const float* xr, const float* dyr, int64_t n, double2 st, ScaleAt scale_at, float* dxr,
                       double* shared, bool centered = true) {
  double sg = 0, sgx = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    double g = dyr[j] * scale_at(j);
    sg += g;
    sgx += g * (xr[j] - st.x) * st.y;
  }
  double mean_g = block_sum_all(sg, shared) / double(n);
  if (!centered) mean_g = 0;
  double mean_gx = block_sum_all(sgx, shared) / double(n);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    double xhat = (xr[j] - st.x) * st.y;
    dxr[j] = static_cast<float>(st.y * (dyr[j] * scale_at(j) - mean_g - xhat * mean_gx));
  }
}

// LayerNormalization's scale, one a column (RMSNorm's may be absent: 1).
struct ScaleByColumn {
  const float* scale;
  __device__ float operator()(int64_t j) const { return scale ? scale[j] : 1.0f; }
};

__global__ void layer_norm_dx_kernel(const float* dy, const float* x, const float* scale, RowStats stats, float* dx,
                                     Rows d, bool centered) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x)
    row_dx(x + r * d.inner, dy + r * d.inner, d.inner, stats(r), ScaleByColumn{scale}, dx + r * d.inner, shared,
           centered);
}

// dy, x: (rows, inner), scale: (inner), mean?, invstd?: (rows) -> dX, dScale, dBias; RMSNorm's:
// dy, x, scale?, invrms? -> dX, dScale?
void layer_norm_backward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const RowNormForm f = RowNormForm::of(ctx.node.op_type);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  check_float(X, ctx.node);
  Rows d(X, ctx.node.attrs.get_int("axis", -1));
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const float *saved_mean = optional_in<float>(ctx, f.mean_in), *saved_invstd = optional_in<float>(ctx, f.invstd_in);
  const bool saved = saved_invstd && (saved_mean || !f.centered);
  Scratch scratch(cc);
  RowStats stats{nullptr, saved ? saved_mean : nullptr, saved ? saved_invstd : nullptr};
  if (!saved) {
    auto* computed = scratch.take<double2>(d.rows, "layer-norm statistics");
    layer_norm_stats_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(fptr(X), computed, d, eps, f.centered);
    CBT_CUDA_CHECK_LAUNCH();
    stats.computed = computed;
  }
  bool want_ds = output_needed(ctx, 1), want_db = output_needed(ctx, 2);
  if (want_ds || want_db) {
    // Row chunks of at least 16 rows, so that columns x chunks fill the GPU (about 2,048
    // threads an SM); blocks as wide as the columns; each chunk sums its rows in order.
    const int threads = d.threads();
    const int64_t col_blocks = (d.inner + threads - 1) / threads;
    const int64_t chunks =
        std::clamp<int64_t>(std::min<int64_t>(d.rows / 16, 132 * 2048 / (col_blocks * threads)), 1, 4096);
    auto* partial = scratch.take<double2>(chunks * d.inner, "layer-norm parameter gradients");
    dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(chunks));
    layer_norm_param_partials_kernel<<<grid, threads, 0, cc.stream>>>(fptr(dY), fptr(X), stats, d, chunks, partial);
    CBT_CUDA_CHECK_LAUNCH();
    norm_param_finalize_kernel<<<blocks_for(d.inner * 32), kThreads, 0, cc.stream>>>(
        ChunkOfColumn{partial, d.inner}, d.inner, chunks, want_ds ? fptr_out(ctx.out(1)) : nullptr,
        want_db ? fptr_out(ctx.out(2)) : nullptr);
    CBT_CUDA_CHECK_LAUNCH();
  }
  if (!output_needed(ctx, 0)) return;
  layer_norm_dx_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(fptr(dY), fptr(X), optional_in<float>(ctx, 2), stats,
                                                                  fptr_out(ctx.out(0)), d, f.centered);
  CBT_CUDA_CHECK_LAUNCH();
}

// Instance/GroupNormalization's rows (ops/norm_rows.h) with the launch shape of Rows.
struct Groups : GroupRows {
  using GroupRows::GroupRows;
  int threads() const { return static_cast<int>(std::clamp<int64_t>((inner + 31) / 32 * 32, 32, 256)); }
  unsigned blocks() const { return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, 65535)); }
};

Groups groups_of(const KernelContext& ctx, const Tensor& x, const Tensor& scale) {
  return Groups(x, norm_groups(ctx.node, x.dim(1)), scale.numel());
}

// x: (rows, inner) -> y = (x - mean) * invstd * scale[p] + bias[p], p = d.param(r, j)
__global__ void group_norm_fwd_kernel(const float* x, const float* scale, const float* bias, float* y, Groups d,
                                      double eps) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const float* xr = x + r * d.inner;
    float* yr = y + r * d.inner;
    double2 st = row_stats(xr, d.inner, eps, shared);
    for (int64_t j = threadIdx.x; j < d.inner; j += blockDim.x) {
      const int64_t p = d.param(r, j);
      yr[j] = static_cast<float>((xr[j] - st.x) * st.y * scale[p] + bias[p]);
    }
  }
}

void group_norm_forward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  Groups d = groups_of(ctx, X, ctx.in(1));
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  group_norm_fwd_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(fptr(X), fptr(ctx.in(1)), fptr(ctx.in(2)),
                                                                   fptr_out(ctx.out(0)), d, eps);
  CBT_CUDA_CHECK_LAUNCH();
}

__global__ void group_norm_stats_kernel(const float* x, double2* stats, Groups d, double eps) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    double2 st = row_stats(x + r * d.inner, d.inner, eps, shared);
    if (threadIdx.x == 0) stats[r] = st;
  }
}

// partial[n * C + c] = (sum dy * xhat, sum dy) over the S values of sample n's channel c.
__global__ void group_norm_param_partials_kernel(const float* dy, const float* x, const double2* stats, Groups d,
                                                 double2* partial) {
  __shared__ double shared[32];
  for (int64_t nc = blockIdx.x; nc < d.n * d.c; nc += gridDim.x) {
    const int64_t n = nc / d.c, ch = nc % d.c;
    const double2 st = stats[n * d.groups + ch / d.channels_per_group];
    const float *xr = x + nc * d.s, *dyr = dy + nc * d.s;
    double ds = 0, db = 0;
    for (int64_t j = threadIdx.x; j < d.s; j += blockDim.x) {
      ds += dyr[j] * (xr[j] - st.x) * st.y;
      db += dyr[j];
    }
    ds = block_sum(ds, shared);
    db = block_sum(db, shared);
    if (threadIdx.x == 0) partial[nc] = make_double2(ds, db);
  }
}

// Instance/GroupNormalization's partials of parameter p (a channel, or a group's channels)
// over the samples: term t is sample t / count's channel first(p) + t % count.
struct SamplesOfParam {
  const double2* partial;
  Groups d;
  __device__ double2 operator()(int64_t p, int64_t t) const {
    const int64_t count = d.per_group ? d.channels_per_group : 1;
    return partial[(t / count) * d.c + p * count + t % count];
  }
};

// Instance/GroupNormalization's scale of row r: per channel or per group (GroupRows::param).
struct ScaleOfRow {
  const float* scale;
  Groups d;
  int64_t r;
  __device__ float operator()(int64_t j) const { return scale[d.param(r, j)]; }
};

__global__ void group_norm_dx_kernel(const float* dy, const float* x, const float* scale, const double2* stats,
                                     float* dx, Groups d) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x)
    row_dx(x + r * d.inner, dy + r * d.inner, d.inner, stats[r], ScaleOfRow{scale, d, r}, dx + r * d.inner, shared);
}

// GroupNormGrad: dY, X, scale -> dX, dScale, dBias
void group_norm_backward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1), &scale = ctx.in(2);
  check_float(X, ctx.node);
  Groups d = groups_of(ctx, X, scale);
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  Scratch scratch(cc);
  auto* stats = scratch.take<double2>(d.rows, "group-norm statistics");
  group_norm_stats_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(fptr(X), stats, d, eps);
  CBT_CUDA_CHECK_LAUNCH();
  bool want_ds = output_needed(ctx, 1), want_db = output_needed(ctx, 2);
  if (want_ds || want_db) {
    auto* partial = scratch.take<double2>(d.n * d.c, "group-norm parameter gradients");
    const int threads = static_cast<int>(std::clamp<int64_t>((d.s + 31) / 32 * 32, 32, 256));
    const auto blocks = static_cast<unsigned>(std::clamp<int64_t>(d.n * d.c, 1, 65535));
    group_norm_param_partials_kernel<<<blocks, threads, 0, cc.stream>>>(fptr(dY), fptr(X), stats, d, partial);
    CBT_CUDA_CHECK_LAUNCH();
    const int64_t terms = d.n * (d.per_group ? d.channels_per_group : 1);
    norm_param_finalize_kernel<<<blocks_for(scale.numel() * 32), kThreads, 0, cc.stream>>>(
        SamplesOfParam{partial, d}, scale.numel(), terms, want_ds ? fptr_out(ctx.out(1)) : nullptr,
        want_db ? fptr_out(ctx.out(2)) : nullptr);
    CBT_CUDA_CHECK_LAUNCH();
  }
  if (!output_needed(ctx, 0)) return;
  group_norm_dx_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(fptr(dY), fptr(X), fptr(scale), stats,
                                                                  fptr_out(ctx.out(0)), d);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "LayerNormalization", DeviceKind::CUDA, layer_norm_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "LayerNormGrad", DeviceKind::CUDA, layer_norm_backward);
CBT_REGISTER_KERNEL(kCbtDomain, "RMSNorm", DeviceKind::CUDA, layer_norm_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "RMSNormGrad", DeviceKind::CUDA, layer_norm_backward);
CBT_REGISTER_KERNEL("", "InstanceNormalization", DeviceKind::CUDA, group_norm_forward);
CBT_REGISTER_KERNEL("", "GroupNormalization", DeviceKind::CUDA, group_norm_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "GroupNormGrad", DeviceKind::CUDA, group_norm_backward);

}  // namespace cbt::cuda
