// CPU kernels of cbtrain's losses and their backward ops; sums are accumulated in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// Labels must index a class; a bad label is bad data, not a bug.
void check_labels(const KernelContext& ctx, const Tensor& labels, int64_t classes) {
  for (int64_t n = 0; n < labels.numel(); ++n) {
    int64_t y = labels.at_i64(n);
    if (y < 0 || y >= classes)
      throw UserError("node " + ctx.node.describe() + ": label " + std::to_string(y) + " at row " + std::to_string(n) +
                      " is outside [0, " + std::to_string(classes) + ")");
  }
}

// One row of dLogits from its log-probabilities: k (N, C), k = dLoss / N.
template <class T>
void sce_grad_row(const T* lp, int64_t y, int64_t C, T k, double eps, T* dx) {
  const T off = static_cast<T>(eps / C), on = static_cast<T>(1 - eps + eps / C);
  for (int64_t c = 0; c < C; ++c) dx[c] = k * (std::exp(lp[c]) - (c == y ? on : off));
}

// logits: (N, C); labels: (N); loss: (); log_probs: (N, C). With dLoss () as a third input,
// also dLogits (N, C) as a third output, as softmax_cross_entropy_grad writes it, and
// optionally their column sums (C) as a fourth (graph/fusion.h, fuse_loss_gradient).
void softmax_cross_entropy(KernelContext& ctx) {
  const Tensor &x = ctx.in(0), &labels = ctx.in(1);
  int64_t N = x.dim(0), C = x.dim(1);
  check_labels(ctx, labels, C);
  double eps = ctx.node.attrs.get_float("label_smoothing", 0.0f);
  const bool with_grad = ctx.has_in(2);
  dispatch_float(x.dtype(), [&]<class T>() {
    const T* xp = x.ptr<T>();
    // Without a log_probs output (inference, or the gradient fused in) the rows still need
    // somewhere to go.
    std::vector<T> scratch;
    if (!ctx.has_out(1)) scratch.resize(N * C);
    T* lp = ctx.has_out(1) ? ctx.out(1).ptr<T>() : scratch.data();
    T* dx = with_grad ? ctx.out(2).ptr<T>() : nullptr;
    const T k = with_grad ? static_cast<T>(ctx.in(2).at_f64(0) / N) : T{0};
    double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total) if (N * C >= kParallelMin)
    for (int64_t n = 0; n < N; ++n) {
      const T* xr = xp + n * C;
      T* lr = lp + n * C;
      T m = *std::max_element(xr, xr + C);
      double sum = 0;
      for (int64_t c = 0; c < C; ++c) sum += std::exp(static_cast<double>(xr[c] - m));
      double lse = m + std::log(sum), all = 0;
      for (int64_t c = 0; c < C; ++c) {
        lr[c] = static_cast<T>(xr[c] - lse);
        all += lr[c];
      }
      total += -(1 - eps) * lr[labels.at_i64(n)] - eps / C * all;
      if (dx) sce_grad_row(lr, labels.at_i64(n), C, k, eps, dx + n * C);
    }
    ctx.out(0).ptr<T>()[0] = static_cast<T>(N ? total / N : 0);
    if (dx && ctx.has_out(3)) {  // the bias gradient: dLogits' column sums, as GemmGrad sums them
      std::vector<double> acc(C, 0.0);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c) acc[c] += dx[n * C + c];
      T* db = ctx.out(3).ptr<T>();
      for (int64_t c = 0; c < C; ++c) db[c] = static_cast<T>(acc[c]);
    }
  });
}

// dLoss: (); log_probs: (N, C); labels: (N); dLogits: (N, C).
void softmax_cross_entropy_grad(KernelContext& ctx) {
  const Tensor &lp_t = ctx.in(1), &labels = ctx.in(2);
  int64_t N = lp_t.dim(0), C = lp_t.dim(1);
  check_labels(ctx, labels, C);
  double eps = ctx.node.attrs.get_float("label_smoothing", 0.0f);
  dispatch_float(lp_t.dtype(), [&]<class T>() {
    const T* lp = lp_t.ptr<T>();
    T* dx = ctx.out(0).ptr<T>();
    const T k = static_cast<T>(ctx.in(0).at_f64(0) / N);
#pragma omp parallel for schedule(static) if (N * C >= kParallelMin)
    for (int64_t n = 0; n < N; ++n) sce_grad_row(lp + n * C, labels.at_i64(n), C, k, eps, dx + n * C);
  });
}

// Mean over all elements of f(pred, target); pred, target: same shape; loss: ().
template <class F>
void mean_loss(KernelContext& ctx, F f) {
  const Tensor &p = ctx.in(0), &t = ctx.in(1);
  int64_t n = p.numel();
  dispatch_float(p.dtype(), [&]<class T>() {
    const T *pp = p.ptr<T>(), *tp = t.ptr<T>();
    double total = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : total) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) total += f(static_cast<double>(pp[i]), static_cast<double>(tp[i]));
    ctx.out(0).ptr<T>()[0] = static_cast<T>(n ? total / n : 0);
  });
}

// dLoss: (); pred, target, dPred: same shape; dPred = dLoss / n * g(pred, target).
template <class G>
void mean_loss_grad(KernelContext& ctx, G g) {
  const Tensor &p = ctx.in(1), &t = ctx.in(2);
  int64_t n = p.numel();
  dispatch_float(p.dtype(), [&]<class T>() {
    const T *pp = p.ptr<T>(), *tp = t.ptr<T>();
    T* dp = ctx.out(0).ptr<T>();
    const T k = static_cast<T>(ctx.in(0).at_f64(0) / std::max<int64_t>(n, 1));
#pragma omp parallel for simd schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) dp[i] = k * g(pp[i], tp[i]);
  });
}

void mse(KernelContext& ctx) {
  mean_loss(ctx, [](double p, double t) { return (p - t) * (p - t); });
}
void mse_grad(KernelContext& ctx) {
  mean_loss_grad(ctx, [](auto p, auto t) { return 2 * (p - t); });
}

// max(x, 0) - x t + log(1 + exp(-|x|)): the stable form of -t log s(x) - (1-t) log(1-s(x)).
void bce_with_logits(KernelContext& ctx) {
  mean_loss(ctx, [](double x, double t) { return std::max(x, 0.0) - x * t + std::log1p(std::exp(-std::fabs(x))); });
}
void bce_with_logits_grad(KernelContext& ctx) {
  mean_loss_grad(ctx, [](auto x, auto t) {
    using T = decltype(x);
    T s = x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
    return s - t;
  });
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxCrossEntropy", DeviceKind::CPU, softmax_cross_entropy);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxCrossEntropyGrad", DeviceKind::CPU, softmax_cross_entropy_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "MeanSquaredError", DeviceKind::CPU, mse);
CBT_REGISTER_KERNEL(kCbtDomain, "MeanSquaredErrorGrad", DeviceKind::CPU, mse_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "BinaryCrossEntropyWithLogits", DeviceKind::CPU, bce_with_logits);
CBT_REGISTER_KERNEL(kCbtDomain, "BinaryCrossEntropyWithLogitsGrad", DeviceKind::CPU, bce_with_logits_grad);

}  // namespace cbt::cpu
