// Per-channel formulas of BatchNorm's CUDA kernels, shared by the (N, C, S) float32 kernels
// (batch_norm.cu) and the channels-last bfloat16 ones (batch_norm_nhwc.cu): one place for the
// statistics, the running-statistics update and the coefficients of dX, as on the CPU.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cbt::cuda {

// x * a + b, then max(that, 0) with relu (BatchNorm fused with a Relu)
__device__ __forceinline__ float affine(float x, float a, float b, bool relu) {
  float v = x * a + b;
  return relu ? (v > 0 ? v : 0.0f) : v;
}

struct BnTrainParams {
  const float *x, *scale, *bias;
  float *run_mean, *run_var, *saved_mean, *saved_invstd, *a, *b;
  double eps, momentum;
};

// Channel c, from the sums t of (x - shift, (x - shift)^2) over its m elements: batch mean and
// variance, and the affine coefficients (a, b) of the normalisation, returned and written to
// p.a, p.b when those are set; with `store`, also the saved statistics and the
// running-statistic update (unbiased variance).
__device__ __forceinline__ float2 bn_train_finish(const BnTrainParams& p, int64_t c, double m, double shift_value,
                                                  double2 t, bool store) {
  double shift = t.x / m;
  double mean = shift_value + shift;
  double sq = fmax(t.y - shift * t.x, 0.0);  // sum of squared deviations
  double var = sq / m, invstd = 1.0 / sqrt(var + p.eps);
  float2 ab =
      make_float2(static_cast<float>(p.scale[c] * invstd), static_cast<float>(p.bias[c] - mean * p.scale[c] * invstd));
  if (p.a) p.a[c] = ab.x, p.b[c] = ab.y;
  if (!store) return ab;
  p.saved_mean[c] = static_cast<float>(mean);
  p.saved_invstd[c] = static_cast<float>(invstd);
  double unbiased = sq / (m > 1 ? m - 1 : 1.0);
  p.run_mean[c] = static_cast<float>(p.momentum * p.run_mean[c] + (1 - p.momentum) * mean);
  p.run_var[c] = static_cast<float>(p.momentum * p.run_var[c] + (1 - p.momentum) * unbiased);
  return ab;
}

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

// Channel c, from the sums t of (dy, dy * (x - mean)) over its m elements: the coefficients of
// dX, returned and written to p.coef when set; with `store`, also dScale and dBias.
__device__ __forceinline__ BnGradCoef bn_grad_finish(const BnGradParams& p, int64_t c, double m, double2 t,
                                                     bool store) {
  double invstd = p.frozen ? 1.0 / sqrt(double(p.stat[c]) + p.eps) : double(p.stat[c]);
  double sum_dy = t.x, sum_dy_xhat = t.y * invstd;
  if (store && p.dbias) p.dbias[c] = static_cast<float>(sum_dy);
  if (store && p.dscale) p.dscale[c] = static_cast<float>(sum_dy_xhat);
  BnGradCoef k{p.scale[c] * invstd, p.frozen ? 0.0 : sum_dy / m, p.frozen ? 0.0 : sum_dy_xhat / m, invstd};
  if (p.coef) p.coef[c] = k;
  return k;
}

// dX at one element: k * (g - mean_dy - xhat * mean_dy_xhat), xhat = (x - mean) * invstd, with
// g the incoming gradient (masked by the fused Relu).
__device__ __forceinline__ float bn_dx(const BnGradCoef& k, float g, float x, float mean) {
  double xhat = (double(x) - double(mean)) * k.invstd;
  return static_cast<float>(k.k * (double(g) - k.mean_dy - xhat * k.mean_dy_xhat));
}

}  // namespace cbt::cuda
