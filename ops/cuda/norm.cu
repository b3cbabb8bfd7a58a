// BatchNormalization (inference, training, backward) and LayerNormalization CUDA kernels.
// Own kernels rather than cuDNN, whose saved-variance and running-variance conventions
// differ from the CPU kernels; statistics are reduced in double, in a fixed order
// (deterministic), with the CPU's formulas.
#include <algorithm>
#include <cmath>

#include "graph/shape_utils.h"
#include "ops/cuda/dense_util.cuh"

namespace cbt::cuda {
namespace {

const float* fptr(const Tensor& t) { return static_cast<const float*>(t.data()); }
float* fptr_out(const Tensor& t) { return static_cast<float*>(t.data()); }

void check_float(const Tensor& t, const Node& node) {
  CBT_MODEL_CHECK(t.dtype() == DType::Float32, "node ", node.describe(),
                  ": the CUDA backend normalises float32 tensors, got ", dtype_name(t.dtype()));
}

// X viewed as (N, C, S).
ChannelSplit ncs_split(const Tensor& x) {
  int64_t n = x.dim(0), c = x.dim(1);
  return ChannelSplit(n, c, x.numel() / std::max<int64_t>(n * c, 1));
}

// Element-wise kernels over (N, C, S) index with I: uint32_t whenever fits_32.
// y: (N, C, S) = x * a[c] + b[c], then max(y, 0) with relu (BatchNorm fused with a Relu)
template <class I>
__global__ void channel_affine_kernel(const float* x, const float* a, const float* b, float* y,
                                      I C, I S, I total, bool relu) {
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<I>(blockDim.x) * gridDim.x) {
    I c = (i / S) % C;
    float v = x[i] * a[c] + b[c];
    y[i] = relu ? (v > 0 ? v : 0.0f) : v;
  }
}

void channel_affine(const CudaContext& cc, const ChannelSplit& d, const float* x, const float* a,
                    const float* b, float* y, bool relu = false) {
  int64_t total = d.N * d.C * d.S;
  if (fits_32(total))
    channel_affine_kernel<uint32_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(
        x, a, b, y, static_cast<uint32_t>(d.C), static_cast<uint32_t>(d.S),
        static_cast<uint32_t>(total), relu);
  else
    channel_affine_kernel<int64_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(
        x, a, b, y, d.C, d.S, total, relu);
  CBT_CUDA_CHECK_LAUNCH();
}

// a = scale / sqrt(var + eps), b = bias - mean * a, per channel: (C)
__global__ void bn_inference_coeffs_kernel(const float* scale, const float* bias,
                                           const float* mean, const float* var, double eps,
                                           int64_t C, float* a, float* b) {
  CBT_GRID_STRIDE_LOOP(c, C) {
    a[c] = static_cast<float>(scale[c] / sqrt(double(var[c]) + eps));
    b[c] = bias[c] - mean[c] * a[c];
  }
}

// x: (N, C, S), scale, b, mean, var: (C) -> y = scale * (x - mean) / sqrt(var + eps) + b
void batch_norm_inference(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  ChannelSplit d = ncs_split(X);
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  Scratch scratch(cc);
  float* a = scratch.take<float>(d.C, "batch-norm coefficients");
  float* b = scratch.take<float>(d.C, "batch-norm coefficients");
  bn_inference_coeffs_kernel<<<blocks_for(d.C), kThreads, 0, cc.stream>>>(
      fptr(ctx.in(1)), fptr(ctx.in(2)), fptr(ctx.in(3)), fptr(ctx.in(4)), eps, d.C, a, b);
  CBT_CUDA_CHECK_LAUNCH();
  channel_affine(cc, d, fptr(X), a, b, fptr_out(ctx.out(0)));
  // Opset 14+ models may name the running statistics as outputs: they pass through.
  for (size_t k = 1; k < 3; ++k)
    if (ctx.has_out(k))
      CBT_CUDA_CHECK(cudaMemcpyAsync(ctx.out(k).data(), ctx.in(2 + k).data(), d.C * sizeof(float),
                                     cudaMemcpyDeviceToDevice, cc.stream));
}

// (x - K, (x - K)^2) with K the channel's first element: shifted sums keep the variance
// accurate when the mean is large against the spread.
struct ShiftedMoments {
  const float* x;
  int64_t S;
  __device__ double2 operator()(int64_t i, int64_t c) const {
    double v = double(x[i]) - double(x[c * S]);
    return make_double2(v, v * v);
  }
};

struct BnTrainParams {
  const float *x, *scale, *bias;
  float *run_mean, *run_var, *saved_mean, *saved_invstd, *a, *b;
  double eps, momentum;
};

// Per channel, from the shifted sums t: batch mean and variance, saved statistics,
// running-statistic update (unbiased variance), and the affine coefficients of the
// normalisation.
struct BnTrainFinish {
  ChannelSplit d;
  BnTrainParams p;
  __device__ void operator()(int64_t c, double2 t) const {
    double m = double(d.N * d.S), shift = t.x / m;
    double mean = double(p.x[c * d.S]) + shift;
    double sq = fmax(t.y - shift * t.x, 0.0);  // sum of squared deviations
    double var = sq / m, invstd = 1.0 / sqrt(var + p.eps);
    p.a[c] = static_cast<float>(p.scale[c] * invstd);
    p.b[c] = static_cast<float>(p.bias[c] - mean * p.scale[c] * invstd);
    p.saved_mean[c] = static_cast<float>(mean);
    p.saved_invstd[c] = static_cast<float>(invstd);
    double unbiased = sq / (m > 1 ? m - 1 : 1.0);
    p.run_mean[c] = static_cast<float>(p.momentum * p.run_mean[c] + (1 - p.momentum) * mean);
    p.run_var[c] = static_cast<float>(p.momentum * p.run_var[c] + (1 - p.momentum) * unbiased);
  }
};

// x: (N, C, S), scale, b: (C), running mean/var: (C), updated in place ->
// y, saved_mean: (C), saved_invstd: (C)
void batch_norm_training(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  ChannelSplit d = ncs_split(X);
  Scratch scratch(cc);
  auto* partial = scratch.take<double2>(d.blocks(), "batch-norm statistics");
  BnTrainParams p;
  p.x = fptr(X), p.scale = fptr(ctx.in(1)), p.bias = fptr(ctx.in(2));
  p.run_mean = fptr_out(ctx.in(3)), p.run_var = fptr_out(ctx.in(4));
  p.saved_mean = fptr_out(ctx.out(1)), p.saved_invstd = fptr_out(ctx.out(2));
  p.a = scratch.take<float>(d.C, "batch-norm coefficients");
  p.b = scratch.take<float>(d.C, "batch-norm coefficients");
  p.eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  p.momentum = ctx.node.attrs.get_float("momentum", 0.9f);
  channel_reduce(cc, d, ShiftedMoments{p.x, d.S}, partial,
                 arrival_counters(ctx, cc, scratch, d.C), BnTrainFinish{d, p});
  channel_affine(cc, d, p.x, p.a, p.b, fptr_out(ctx.out(0)), ctx.node.attrs.get_int("relu", 0) != 0);
}

// The incoming gradient at i; fused with a Relu (y: its output), only where y > 0.
__device__ __forceinline__ float relu_masked(const float* dy, const float* y, int64_t i) {
  return y && !(y[i] > 0) ? 0.0f : dy[i];
}

// (dy, dy * (x - mean)) per element.
struct GradMoments {
  const float *dy, *x, *mean, *y;
  __device__ double2 operator()(int64_t i, int64_t c) const {
    float g = relu_masked(dy, y, i);
    return make_double2(g, g * (double(x[i]) - double(mean[c])));
  }
};

// Per-channel coefficients of the batch-norm input gradient.
struct BnGradCoef {
  double k, mean_dy, mean_dy_xhat, invstd;  // k = scale * invstd
};

struct BnGradParams {
  const float *scale, *mean, *stat;
  float *dscale, *dbias;  // null when not needed
  BnGradCoef* coef;       // (C)
  double eps;
  bool frozen;
};

// Per channel, from the sums t of (dy, dy * (x - mean)): dScale, dBias and the coefficients
// of dX.
struct BnGradFinish {
  ChannelSplit d;
  BnGradParams p;
  __device__ void operator()(int64_t c, double2 t) const {
    double invstd = p.frozen ? 1.0 / sqrt(double(p.stat[c]) + p.eps) : double(p.stat[c]);
    double sum_dy = t.x, sum_dy_xhat = t.y * invstd, m = double(d.N * d.S);
    if (p.dbias) p.dbias[c] = static_cast<float>(sum_dy);
    if (p.dscale) p.dscale[c] = static_cast<float>(sum_dy_xhat);
    p.coef[c] = {p.scale[c] * invstd, p.frozen ? 0.0 : sum_dy / m,
                 p.frozen ? 0.0 : sum_dy_xhat / m, invstd};
  }
};

// dX = k * (dy - mean_dy - xhat * mean_dy_xhat), xhat = (x - mean) * invstd
template <class I>
__global__ void bn_grad_dx_kernel(const float* dy, const float* y, const float* x,
                                  const float* mean, const BnGradCoef* coef, float* dx, I C, I S,
                                  I total) {
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<I>(blockDim.x) * gridDim.x) {
    I c = (i / S) % C;
    BnGradCoef k = coef[c];
    double xhat = (double(x[i]) - double(mean[c])) * k.invstd;
    dx[i] = static_cast<float>(k.k * (double(relu_masked(dy, y, i)) - k.mean_dy - xhat * k.mean_dy_xhat));
  }
}

// dy, x: (N, C, S), scale: (C), mean: (C), invstd (C) or running var (C) when frozen_stats
// -> dX, dScale, dBias. With batch statistics dX also flows through the mean and variance.
void batch_norm_backward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  check_float(X, ctx.node);
  ChannelSplit d = ncs_split(X);
  Scratch scratch(cc);
  auto* partial = scratch.take<double2>(d.blocks(), "batch-norm gradient sums");
  BnGradParams p;
  p.scale = fptr(ctx.in(2)), p.mean = fptr(ctx.in(3)), p.stat = fptr(ctx.in(4));
  p.dscale = output_needed(ctx, 1) ? fptr_out(ctx.out(1)) : nullptr;
  p.dbias = output_needed(ctx, 2) ? fptr_out(ctx.out(2)) : nullptr;
  p.coef = scratch.take<BnGradCoef>(d.C, "batch-norm gradient coefficients");
  p.eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  p.frozen = ctx.node.attrs.get_int("frozen_stats", 0) != 0;
  const float* y = ctx.node.attrs.get_int("relu", 0) ? fptr(ctx.in(5)) : nullptr;
  channel_reduce(cc, d, GradMoments{fptr(dY), fptr(X), p.mean, y}, partial,
                 arrival_counters(ctx, cc, scratch, d.C), BnGradFinish{d, p});
  if (!output_needed(ctx, 0)) return;
  int64_t total = X.numel();
  if (fits_32(total))
    bn_grad_dx_kernel<uint32_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(
        fptr(dY), y, fptr(X), p.mean, p.coef, fptr_out(ctx.out(0)), static_cast<uint32_t>(d.C),
        static_cast<uint32_t>(d.S), static_cast<uint32_t>(total));
  else
    bn_grad_dx_kernel<int64_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(
        fptr(dY), y, fptr(X), p.mean, p.coef, fptr_out(ctx.out(0)), d.C, d.S, total);
  CBT_CUDA_CHECK_LAUNCH();
}

// X viewed as (rows, inner) around the normalisation axis.
struct Rows {
  int64_t rows, inner;
  Rows(const Tensor& x, int64_t axis) {
    if (axis < 0) axis += static_cast<int64_t>(x.rank());
    inner = dims_product(x.shape(), axis, x.rank());
    rows = x.numel() / std::max<int64_t>(inner, 1);
  }
  // One block per row (looping when rows exceed the grid); threads a multiple of 32.
  int threads() const { return static_cast<int>(std::clamp<int64_t>((inner + 31) / 32 * 32, 32, 256)); }
  unsigned blocks() const { return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, 65535)); }
};

// Mean and 1/sqrt(var + eps) of row xr (length n), known to every thread of the block.
__device__ double2 row_stats(const float* xr, int64_t n, double eps, double* shared) {
  double sum = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += xr[j];
  double mean = block_sum_all(sum, shared) / double(n);
  double sq = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sq += (xr[j] - mean) * (xr[j] - mean);
  double var = block_sum_all(sq, shared) / double(n);
  return make_double2(mean, 1.0 / sqrt(var + eps));
}

// x: (rows, inner), scale, b: (inner) -> y, mean?, invstd?: (rows)
__global__ void layer_norm_fwd_kernel(const float* x, const float* scale, const float* bias,
                                      float* y, float* mean_out, float* invstd_out, Rows d,
                                      double eps) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const float* xr = x + r * d.inner;
    float* yr = y + r * d.inner;
    double2 st = row_stats(xr, d.inner, eps, shared);
    for (int64_t j = threadIdx.x; j < d.inner; j += blockDim.x)
      yr[j] = static_cast<float>((xr[j] - st.x) * st.y * scale[j] + (bias ? bias[j] : 0.0f));
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[r] = static_cast<float>(st.x);
      if (invstd_out) invstd_out[r] = static_cast<float>(st.y);
    }
  }
}

void layer_norm_forward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  Rows d(X, ctx.node.attrs.get_int("axis", -1));
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  layer_norm_fwd_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(
      fptr(X), fptr(ctx.in(1)), ctx.has_in(2) ? fptr(ctx.in(2)) : nullptr, fptr_out(ctx.out(0)),
      ctx.has_out(1) ? fptr_out(ctx.out(1)) : nullptr,
      ctx.has_out(2) ? fptr_out(ctx.out(2)) : nullptr, d, eps);
  CBT_CUDA_CHECK_LAUNCH();
}

// stats[r] = (mean, invstd) of row r: the saved ones when given, else recomputed.
__global__ void layer_norm_stats_kernel(const float* x, const float* saved_mean,
                                        const float* saved_invstd, double2* stats, Rows d,
                                        double eps) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    double2 st = saved_mean ? make_double2(saved_mean[r], saved_invstd[r])
                            : row_stats(x + r * d.inner, d.inner, eps, shared);
    if (threadIdx.x == 0) stats[r] = st;
  }
}

// partial[chunk * inner + j] = (sum dy * xhat, sum dy) of column j over the rows of chunk.
__global__ void layer_norm_param_partials_kernel(const float* dy, const float* x,
                                                 const double2* stats, Rows d, int64_t chunks,
                                                 double2* partial) {
  int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= d.inner) return;
  int64_t chunk = blockIdx.y, lo = d.rows * chunk / chunks, hi = d.rows * (chunk + 1) / chunks;
  double ds = 0, db = 0;
  for (int64_t r = lo; r < hi; ++r) {
    double g = dy[r * d.inner + j];
    ds += g * (x[r * d.inner + j] - stats[r].x) * stats[r].y;
    db += g;
  }
  partial[chunk * d.inner + j] = make_double2(ds, db);
}

__global__ void layer_norm_param_finalize_kernel(const double2* partial, int64_t inner,
                                                 int64_t chunks, float* dscale, float* dbias) {
  CBT_GRID_STRIDE_LOOP(j, inner) {
    double ds = 0, db = 0;
    for (int64_t k = 0; k < chunks; ++k) ds += partial[k * inner + j].x, db += partial[k * inner + j].y;
    if (dscale) dscale[j] = static_cast<float>(ds);
    if (dbias) dbias[j] = static_cast<float>(db);
  }
}

// dX = invstd * (dy * scale - mean(g) - xhat * mean(g * xhat)), g = dy * scale, per row
__global__ void layer_norm_dx_kernel(const float* dy, const float* x, const float* scale,
                                     const double2* stats, float* dx, Rows d) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const float *xr = x + r * d.inner, *dyr = dy + r * d.inner;
    double2 st = stats[r];
    double sg = 0, sgx = 0;
    for (int64_t j = threadIdx.x; j < d.inner; j += blockDim.x) {
      double g = dyr[j] * scale[j];  // float product, as on the CPU
      sg += g;
      sgx += g * (xr[j] - st.x) * st.y;
    }
    double mean_g = block_sum_all(sg, shared) / double(d.inner);
    double mean_gx = block_sum_all(sgx, shared) / double(d.inner);
    for (int64_t j = threadIdx.x; j < d.inner; j += blockDim.x) {
      double xhat = (xr[j] - st.x) * st.y;
      dx[r * d.inner + j] =
          static_cast<float>(st.y * (dyr[j] * scale[j] - mean_g - xhat * mean_gx));
    }
  }
}

// dy, x: (rows, inner), scale: (inner), mean?, invstd?: (rows) -> dX, dScale, dBias
void layer_norm_backward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  check_float(X, ctx.node);
  Rows d(X, ctx.node.attrs.get_int("axis", -1));
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  bool saved = ctx.has_in(3) && ctx.has_in(4);
  Scratch scratch(cc);
  auto* stats = scratch.take<double2>(d.rows, "layer-norm statistics");
  layer_norm_stats_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(
      fptr(X), saved ? fptr(ctx.in(3)) : nullptr, saved ? fptr(ctx.in(4)) : nullptr, stats, d,
      eps);
  CBT_CUDA_CHECK_LAUNCH();
  bool want_ds = output_needed(ctx, 1), want_db = output_needed(ctx, 2);
  if (want_ds || want_db) {
    // Row chunks so that columns x chunks fill the GPU; each chunk sums its rows in order.
    int64_t col_blocks = (d.inner + kThreads - 1) / kThreads;
    int64_t chunks = std::clamp<int64_t>(std::min<int64_t>(d.rows / 16, 528 / col_blocks), 1, 1024);
    auto* partial = scratch.take<double2>(chunks * d.inner, "layer-norm parameter gradients");
    dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(chunks));
    layer_norm_param_partials_kernel<<<grid, kThreads, 0, cc.stream>>>(fptr(dY), fptr(X), stats, d,
                                                                       chunks, partial);
    CBT_CUDA_CHECK_LAUNCH();
    layer_norm_param_finalize_kernel<<<blocks_for(d.inner), kThreads, 0, cc.stream>>>(
        partial, d.inner, chunks, want_ds ? fptr_out(ctx.out(1)) : nullptr,
        want_db ? fptr_out(ctx.out(2)) : nullptr);
    CBT_CUDA_CHECK_LAUNCH();
  }
  if (!output_needed(ctx, 0)) return;
  layer_norm_dx_kernel<<<d.blocks(), d.threads(), 0, cc.stream>>>(
      fptr(dY), fptr(X), fptr(ctx.in(2)), stats, fptr_out(ctx.out(0)), d);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "BatchNormalization", DeviceKind::CUDA, batch_norm_inference);
CBT_REGISTER_KERNEL(kCbtDomain, "BatchNormTraining", DeviceKind::CUDA, batch_norm_training);
CBT_REGISTER_KERNEL(kCbtDomain, "BatchNormGrad", DeviceKind::CUDA, batch_norm_backward);
CBT_REGISTER_KERNEL("", "LayerNormalization", DeviceKind::CUDA, layer_norm_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "LayerNormGrad", DeviceKind::CUDA, layer_norm_backward);

}  // namespace cbt::cuda
