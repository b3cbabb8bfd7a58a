// BatchNormalization (inference, training, backward), LayerNormalization, RMSNorm and
// Instance/GroupNormalization CPU kernels.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "graph/ops/norm_groups.h"
#include "graph/shape_utils.h"
#include "ops/kernel.h"
#include "ops/norm_rows.h"

namespace cbt::cpu {
namespace {

bool needed(const KernelContext& ctx, size_t k) {
  auto mask = ctx.node.attrs.get_ints("outputs_needed", {1, 1, 1});
  return ctx.has_out(k) && (k >= mask.size() || mask[k] != 0);
}

// X viewed as (N, C, S).
struct NCS {
  int64_t N, C, S;
  explicit NCS(const Tensor& x) : N(x.dim(0)), C(x.dim(1)), S(x.numel() / std::max<int64_t>(x.dim(0) * x.dim(1), 1)) {}
};

// x: (N, C, S), scale, b, mean, var: (C) -> y = scale * (x - mean) / sqrt(var + eps) + b
template <class T>
void batch_norm_inference(KernelContext& ctx) {
  const Tensor& X = ctx.in(0);
  NCS d(X);
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const T *x = X.ptr<T>(), *scale = ctx.in(1).ptr<T>(), *bias = ctx.in(2).ptr<T>();
  const T *mean = ctx.in(3).ptr<T>(), *var = ctx.in(4).ptr<T>();
  std::vector<T> a(d.C), b(d.C);
  for (int64_t c = 0; c < d.C; ++c) {
    a[c] = static_cast<T>(scale[c] / std::sqrt(double(var[c]) + eps));
    b[c] = bias[c] - mean[c] * a[c];
  }
  T* y = ctx.out(0).ptr<T>();
#pragma omp parallel for collapse(2) if (X.numel() > (int64_t{1} << 16))
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t c = 0; c < d.C; ++c) {
      int64_t o = (n * d.C + c) * d.S;
      for (int64_t s = 0; s < d.S; ++s) y[o + s] = x[o + s] * a[c] + b[c];
    }
  // Opset 14+ models may name the running statistics as outputs: they pass through.
  for (size_t k = 1; k < 3; ++k)
    if (ctx.has_out(k)) std::copy_n(ctx.in(2 + k).ptr<T>(), d.C, ctx.out(k).ptr<T>());
}

// x: (N, C, S), scale, b: (C), running mean/var: (C), updated in place ->
// y, saved_mean: (C), saved_invstd: (C). Running var takes the unbiased batch variance.
template <class T>
void batch_norm_training(KernelContext& ctx) {
  const Tensor& X = ctx.in(0);
  NCS d(X);
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  double momentum = ctx.node.attrs.get_float("momentum", 0.9f);
  const bool relu = ctx.node.attrs.get_int("relu", 0) != 0;  // fused with a Relu
  const T *x = X.ptr<T>(), *scale = ctx.in(1).ptr<T>(), *bias = ctx.in(2).ptr<T>();
  T *run_mean = ctx.in(3).ptr<T>(), *run_var = ctx.in(4).ptr<T>();
  T *y = ctx.out(0).ptr<T>(), *saved_mean = ctx.out(1).ptr<T>(), *saved_invstd = ctx.out(2).ptr<T>();
  int64_t m = d.N * d.S;
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t c = 0; c < d.C; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < d.N; ++n) {
      const T* row = x + (n * d.C + c) * d.S;
      for (int64_t s = 0; s < d.S; ++s) sum += row[s];
    }
    double mean = sum / double(m);
    for (int64_t n = 0; n < d.N; ++n) {
      const T* row = x + (n * d.C + c) * d.S;
      for (int64_t s = 0; s < d.S; ++s) sq += (row[s] - mean) * (row[s] - mean);
    }
    double var = sq / double(m), invstd = 1.0 / std::sqrt(var + eps);
    T a = static_cast<T>(scale[c] * invstd), b = static_cast<T>(bias[c] - mean * scale[c] * invstd);
    for (int64_t n = 0; n < d.N; ++n) {
      int64_t o = (n * d.C + c) * d.S;
      for (int64_t s = 0; s < d.S; ++s) {
        T v = x[o + s] * a + b;
        y[o + s] = relu ? (v > 0 ? v : T(0)) : v;
      }
    }
    saved_mean[c] = static_cast<T>(mean);
    saved_invstd[c] = static_cast<T>(invstd);
    double unbiased = sq / double(std::max<int64_t>(m - 1, 1));
    run_mean[c] = static_cast<T>(momentum * run_mean[c] + (1 - momentum) * mean);
    run_var[c] = static_cast<T>(momentum * run_var[c] + (1 - momentum) * unbiased);
  }
}

// dy, x: (N, C, S), scale: (C), mean: (C), invstd (C) or running var (C) when frozen_stats
// -> dX, dScale, dBias. With batch statistics dX also flows through the mean and variance.
template <class T>
void batch_norm_backward(KernelContext& ctx) {
  const Tensor& X = ctx.in(1);
  NCS d(X);
  bool frozen = ctx.node.attrs.get_int("frozen_stats", 0) != 0;
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const T *dy_in = ctx.in(0).ptr<T>(), *x = X.ptr<T>(), *scale = ctx.in(2).ptr<T>();
  const T *mean = ctx.in(3).ptr<T>(), *stat = ctx.in(4).ptr<T>();
  // Fused with a Relu: the incoming gradient counts where the fused output Y is positive.
  const T* y = ctx.node.attrs.get_int("relu", 0) ? ctx.in(5).ptr<T>() : nullptr;
  auto dy = [&](int64_t i) -> double { return y && !(y[i] > 0) ? 0.0 : double(dy_in[i]); };
  T* dx = needed(ctx, 0) ? ctx.out(0).ptr<T>() : nullptr;
  T* dscale = needed(ctx, 1) ? ctx.out(1).ptr<T>() : nullptr;
  T* dbias = needed(ctx, 2) ? ctx.out(2).ptr<T>() : nullptr;
  double m = double(d.N * d.S);
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t c = 0; c < d.C; ++c) {
    double invstd = frozen ? 1.0 / std::sqrt(double(stat[c]) + eps) : double(stat[c]);
    double mu = mean[c], sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t n = 0; n < d.N; ++n) {
      int64_t o = (n * d.C + c) * d.S;
      for (int64_t s = 0; s < d.S; ++s) {
        sum_dy += dy(o + s);
        sum_dy_xhat += dy(o + s) * (x[o + s] - mu) * invstd;
      }
    }
    if (dbias) dbias[c] = static_cast<T>(sum_dy);
    if (dscale) dscale[c] = static_cast<T>(sum_dy_xhat);
    if (!dx) continue;
    double k = scale[c] * invstd;
    double mean_dy = frozen ? 0 : sum_dy / m, mean_dy_xhat = frozen ? 0 : sum_dy_xhat / m;
    for (int64_t n = 0; n < d.N; ++n) {
      int64_t o = (n * d.C + c) * d.S;
      for (int64_t s = 0; s < d.S; ++s) {
        double xhat = (x[o + s] - mu) * invstd;
        dx[o + s] = static_cast<T>(k * (dy(o + s) - mean_dy - xhat * mean_dy_xhat));
      }
    }
  }
}

using Rows = NormRows;  // X viewed as (rows, inner) around the normalisation axis

// Mean and 1/sqrt(var + eps) of one row of length n; uncentred (RMSNorm), 0 and
// 1/sqrt(mean(x^2) + eps).
template <class T>
std::pair<double, double> row_stats(const T* x, int64_t n, double eps, bool centered = true) {
  double sum = 0, sq = 0;
  if (centered)
    for (int64_t j = 0; j < n; ++j) sum += x[j];
  double mean = sum / double(n);
  for (int64_t j = 0; j < n; ++j) sq += (x[j] - mean) * (x[j] - mean);
  return {mean, 1.0 / std::sqrt(sq / double(n) + eps)};
}

// dScale and dBias (outputs 1 and 2, where asked for) of a normalisation over rows: the sums of
// dy * xhat and of dy over every value, into the parameter param_at(r, j) of value j of row r
// (stats_at(r): the row's mean and invstd).
template <class T, class StatsAt, class ParamAt>
void row_param_grads(KernelContext& ctx, const T* x, const T* dy, int64_t rows, int64_t inner, int64_t params,
                     StatsAt stats_at, ParamAt param_at) {
  if (!needed(ctx, 1) && !needed(ctx, 2)) return;
  std::vector<double> ds(params, 0.0), db(params, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const auto [mean, invstd] = stats_at(r);
    for (int64_t j = 0; j < inner; ++j) {
      const double g = dy[r * inner + j];
      ds[param_at(r, j)] += g * (x[r * inner + j] - mean) * invstd;
      db[param_at(r, j)] += g;
    }
  }
  if (needed(ctx, 1)) std::transform(ds.begin(), ds.end(), ctx.out(1).ptr<T>(), [](double v) { return T(v); });
  if (needed(ctx, 2)) std::transform(db.begin(), db.end(), ctx.out(2).ptr<T>(), [](double v) { return T(v); });
}

// dX of one normalised row of n values: invstd * (g - mean(g) - xhat * mean(g * xhat)), where
// g = dy * scale_at(j) (a product in T) and xhat = (x - mean) * invstd; uncentred rows
// (RMSNorm, mean 0) have no mean(g) term.
template <class T, class ScaleAt>
void row_dx(const T* xr, const T* dyr, int64_t n, double mean, double invstd, ScaleAt scale_at, T* dxr,
            bool centered = true) {
  double mean_g = 0, mean_gx = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double g = dyr[j] * scale_at(j);
    mean_g += g;
    mean_gx += g * (xr[j] - mean) * invstd;
  }
  mean_g = centered ? mean_g / double(n) : 0.0, mean_gx /= double(n);
  for (int64_t j = 0; j < n; ++j) {
    const double xhat = (xr[j] - mean) * invstd;
    dxr[j] = static_cast<T>(invstd * (dyr[j] * scale_at(j) - mean_g - xhat * mean_gx));
  }
}

// x: (rows, inner), scale, b: (inner) -> y, mean?, invstd?: (rows); RMSNorm: x, scale? -> y,
// invrms? (RowNormForm).
template <class T>
void layer_norm_forward(KernelContext& ctx) {
  const RowNormForm f = RowNormForm::of(ctx.node.op_type);
  const Tensor& X = ctx.in(0);
  Rows d(X, ctx.node.attrs.get_int("axis", -1));
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const T *x = X.ptr<T>(), *scale = optional_in<T>(ctx, 1), *bias = optional_in<T>(ctx, f.bias_in);
  T* y = ctx.out(0).ptr<T>();
  T* mean_out = optional_out<T>(ctx, f.mean_out);
  T* invstd_out = optional_out<T>(ctx, f.invstd_out);
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t r = 0; r < d.rows; ++r) {
    const T* xr = x + r * d.inner;
    T* yr = y + r * d.inner;
    auto [mean, invstd] = row_stats(xr, d.inner, eps, f.centered);
    for (int64_t j = 0; j < d.inner; ++j)
      yr[j] = static_cast<T>((xr[j] - mean) * invstd * (scale ? scale[j] : T(1)) + (bias ? bias[j] : T(0)));
    if (mean_out) mean_out[r] = static_cast<T>(mean);
    if (invstd_out) invstd_out[r] = static_cast<T>(invstd);
  }
}

// dy, x: (rows, inner), scale: (inner), mean?, invstd?: (rows) -> dX, dScale, dBias; RMSNorm's:
// dy, x, scale?, invrms? -> dX, dScale? (RowNormForm).
template <class T>
void layer_norm_backward(KernelContext& ctx) {
  const RowNormForm f = RowNormForm::of(ctx.node.op_type);
  const Tensor& X = ctx.in(1);
  Rows d(X, ctx.node.attrs.get_int("axis", -1));
  double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const T *dy = ctx.in(0).ptr<T>(), *x = X.ptr<T>(), *scale = optional_in<T>(ctx, 2);
  const T *saved_mean = optional_in<T>(ctx, f.mean_in), *saved_invstd = optional_in<T>(ctx, f.invstd_in);
  std::vector<double> mean(d.rows), invstd(d.rows);
  const bool saved = saved_invstd && (saved_mean || !f.centered);
  for (int64_t r = 0; r < d.rows; ++r) {
    if (saved) {
      mean[r] = saved_mean ? saved_mean[r] : T(0), invstd[r] = saved_invstd[r];
    } else {
      std::tie(mean[r], invstd[r]) = row_stats(x + r * d.inner, d.inner, eps, f.centered);
    }
  }
  row_param_grads(
      ctx, x, dy, d.rows, d.inner, d.inner,
      [&](int64_t r) {
        return std::pair{mean[r], invstd[r]};
      },
      [](int64_t, int64_t j) { return j; });
  if (!needed(ctx, 0)) return;
  T* dx = ctx.out(0).ptr<T>();
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t r = 0; r < d.rows; ++r)
    row_dx(
        x + r * d.inner, dy + r * d.inner, d.inner, mean[r], invstd[r],
        [&](int64_t j) { return scale ? scale[j] : T(1); }, dx + r * d.inner, f.centered);
}

// Instance/GroupNormalization (ops/norm_rows.h's GroupRows): X, scale, bias -> Y
template <class T>
void group_norm_forward(KernelContext& ctx) {
  const Tensor& X = ctx.in(0);
  const int64_t groups = norm_groups(ctx.node, X.dim(1));
  GroupRows d(X, groups, ctx.in(1).numel());
  const double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const T *x = X.ptr<T>(), *scale = ctx.in(1).ptr<T>(), *bias = ctx.in(2).ptr<T>();
  T* y = ctx.out(0).ptr<T>();
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t r = 0; r < d.rows; ++r) {
    const T* xr = x + r * d.inner;
    T* yr = y + r * d.inner;
    auto [mean, invstd] = row_stats(xr, d.inner, eps);
    for (int64_t j = 0; j < d.inner; ++j) {
      const int64_t p = d.param(r, j);
      yr[j] = static_cast<T>((xr[j] - mean) * invstd * scale[p] + bias[p]);
    }
  }
}

// GroupNormGrad: dY, X, scale -> dX, dScale, dBias; the statistics are recomputed.
template <class T>
void group_norm_backward(KernelContext& ctx) {
  const Tensor& X = ctx.in(1);
  GroupRows d(X, ctx.node.attrs.get_int("num_groups", 1), ctx.in(2).numel());
  const double eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const T *dy = ctx.in(0).ptr<T>(), *x = X.ptr<T>(), *scale = ctx.in(2).ptr<T>();
  std::vector<std::pair<double, double>> stats(d.rows);
  for (int64_t r = 0; r < d.rows; ++r) stats[r] = row_stats(x + r * d.inner, d.inner, eps);
  row_param_grads(
      ctx, x, dy, d.rows, d.inner, ctx.in(2).numel(), [&](int64_t r) { return stats[r]; },
      [&](int64_t r, int64_t j) { return d.param(r, j); });
  if (!needed(ctx, 0)) return;
  T* dx = ctx.out(0).ptr<T>();
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t r = 0; r < d.rows; ++r)
    row_dx(
        x + r * d.inner, dy + r * d.inner, d.inner, stats[r].first, stats[r].second,
        [&](int64_t j) { return scale[d.param(r, j)]; }, dx + r * d.inner);
}

}  // namespace

CBT_REGISTER_KERNEL("", "BatchNormalization", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { batch_norm_inference<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "BatchNormTraining", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { batch_norm_training<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "BatchNormGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { batch_norm_backward<T>(ctx); });
});
CBT_REGISTER_KERNEL("", "LayerNormalization", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { layer_norm_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "LayerNormGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { layer_norm_backward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "RMSNorm", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { layer_norm_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "RMSNormGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { layer_norm_backward<T>(ctx); });
});
CBT_REGISTER_KERNEL("", "InstanceNormalization", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { group_norm_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL("", "GroupNormalization", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { group_norm_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "GroupNormGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { group_norm_backward<T>(ctx); });
});

}  // namespace cbt::cpu
