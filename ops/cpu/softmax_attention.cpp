// CPU kernels of SoftmaxAttention and its gradient (graph/softmax_attention.h): one matrix of
// the batch at a time (in parallel), sums in double in a fixed order.
#include "graph/softmax_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

AttentionDims dims_of(const KernelContext& ctx, size_t first) {
  auto d = attention_dims(ctx.in(first).shape(), ctx.in(first + 1).shape(), ctx.in(first + 2).shape());
  CBT_CHECK(d.has_value(), ctx.node.describe(), ": operands of SoftmaxAttention do not fit");
  return *d;
}

// The optional bias of matrix b's scores (input `i`).
template <class T>
struct Bias {
  const T* b = nullptr;
  ScoreBias layout;
  Bias(const KernelContext& ctx, size_t i, const Shape& scores) {
    if (!ctx.has_in(i)) return;
    b = ctx.in(i).ptr<T>();
    layout = score_bias_layout(ctx.in(i).shape(), scores).value();
  }
  double at(int64_t m, int64_t s, int64_t t) const { return b ? double(b[layout.offset(m, s, t)]) : 0.0; }
};

// p (T) = softmax of row s of matrix m's X Y + B (x: (S, D), y: (D, T)).
template <class T>
void probabilities(const T* x, const T* y, const Bias<T>& bias, int64_t m_index, const AttentionDims& d, int64_t s,
                   std::vector<double>& p) {
  double m = -INFINITY;
  for (int64_t t = 0; t < d.T; ++t) {
    double a = 0;
    for (int64_t k = 0; k < d.D; ++k) a += double(x[s * d.D + k]) * double(y[k * d.T + t]);
    // the scores in the operands' type, as a MatMul (and the Add) write them
    a = static_cast<double>(static_cast<T>(a));
    if (bias.b) a = static_cast<double>(static_cast<T>(a + bias.at(m_index, s, t)));
    p[t] = a;
    m = std::max(m, p[t]);
  }
  double sum = 0;
  for (int64_t t = 0; t < d.T; ++t) sum += p[t] = std::exp(p[t] - m);
  for (int64_t t = 0; t < d.T; ++t) p[t] = static_cast<double>(static_cast<T>(p[t] / sum));
}

// Calls f(b) for each matrix of the batch, in parallel.
template <class F>
void for_each_matrix(const AttentionDims& d, F f) {
  const int64_t work = d.batch * d.working_floats();
#pragma omp parallel for schedule(static) if (work >= kParallelMin && d.batch > 1)
  for (int64_t b = 0; b < d.batch; ++b) f(b);
}

// X, Y, V, B? -> O
void attention_forward(KernelContext& ctx) {
  const AttentionDims d = dims_of(ctx, 0);
  const Shape scores = attention_scores_shape(ctx.in(0).shape(), ctx.in(1).shape());
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    const T *X = ctx.in(0).ptr<T>(), *Y = ctx.in(1).ptr<T>(), *V = ctx.in(2).ptr<T>();
    const Bias<T> bias(ctx, 3, scores);
    T* O = ctx.out(0).ptr<T>();
    for_each_matrix(d, [&](int64_t b) {
      const T *x = X + b * d.S * d.D, *y = Y + b * d.D * d.T, *v = V + b * d.T * d.E;
      T* o = O + b * d.S * d.E;
      std::vector<double> p(d.T);
      for (int64_t s = 0; s < d.S; ++s) {
        probabilities(x, y, bias, b, d, s, p);
        for (int64_t e = 0; e < d.E; ++e) {
          double acc = 0;
          for (int64_t t = 0; t < d.T; ++t) acc += p[t] * double(v[t * d.E + e]);
          o[s * d.E + e] = static_cast<T>(acc);
        }
      }
    });
  });
}

// dO, X, Y, V, B? -> dX, dY, dV, dS?: with P = softmax(X Y + B), dP = dO V^T,
// dS = P (dP - rowsum(P dP)), dX = dS Y^T, dY = X^T dS, dV = P^T dO.
void attention_backward(KernelContext& ctx) {
  const AttentionDims d = dims_of(ctx, 1);
  const Shape scores = attention_scores_shape(ctx.in(1).shape(), ctx.in(2).shape());
  auto wanted = [&](size_t k) {
    auto mask = ctx.node.attrs.get_ints("outputs_needed", {1, 1, 1});
    return ctx.has_out(k) && (k >= mask.size() || mask[k] != 0);
  };
  const bool want_dx = wanted(0), want_dy = wanted(1), want_dv = wanted(2), want_ds = wanted(3);
  dispatch_float(ctx.in(1).dtype(), [&]<class T>() {
    const T *dO = ctx.in(0).ptr<T>(), *X = ctx.in(1).ptr<T>(), *Y = ctx.in(2).ptr<T>(), *V = ctx.in(3).ptr<T>();
    const Bias<T> bias(ctx, 4, scores);
    for_each_matrix(d, [&](int64_t b) {
      const T *go = dO + b * d.S * d.E, *x = X + b * d.S * d.D, *y = Y + b * d.D * d.T, *v = V + b * d.T * d.E;
      std::vector<double> p(d.T), da(d.S * d.T), pp(d.S * d.T);
      for (int64_t s = 0; s < d.S; ++s) {
        probabilities(x, y, bias, b, d, s, p);
        double r = 0;
        for (int64_t t = 0; t < d.T; ++t) {
          double dp = 0;
          for (int64_t e = 0; e < d.E; ++e) dp += double(go[s * d.E + e]) * double(v[t * d.E + e]);
          da[s * d.T + t] = dp;
          pp[s * d.T + t] = p[t];
          r += p[t] * dp;
        }
        for (int64_t t = 0; t < d.T; ++t) da[s * d.T + t] = p[t] * (da[s * d.T + t] - r);
      }
      if (want_ds) {
        T* ds = ctx.out(3).ptr<T>() + b * d.S * d.T;
        for (int64_t i = 0; i < d.S * d.T; ++i) ds[i] = static_cast<T>(da[i]);
      }
      if (want_dx) {
        T* dx = ctx.out(0).ptr<T>() + b * d.S * d.D;
        for (int64_t s = 0; s < d.S; ++s)
          for (int64_t k = 0; k < d.D; ++k) {
            double acc = 0;
            for (int64_t t = 0; t < d.T; ++t) acc += da[s * d.T + t] * double(y[k * d.T + t]);
            dx[s * d.D + k] = static_cast<T>(acc);
          }
      }
      if (want_dy) {
        T* dy = ctx.out(1).ptr<T>() + b * d.D * d.T;
        for (int64_t k = 0; k < d.D; ++k)
          for (int64_t t = 0; t < d.T; ++t) {
            double acc = 0;
            for (int64_t s = 0; s < d.S; ++s) acc += double(x[s * d.D + k]) * da[s * d.T + t];
            dy[k * d.T + t] = static_cast<T>(acc);
          }
      }
      if (want_dv) {
        T* dv = ctx.out(2).ptr<T>() + b * d.T * d.E;
        for (int64_t t = 0; t < d.T; ++t)
          for (int64_t e = 0; e < d.E; ++e) {
            double acc = 0;
            for (int64_t s = 0; s < d.S; ++s) acc += pp[s * d.T + t] * double(go[s * d.E + e]);
            dv[t * d.E + e] = static_cast<T>(acc);
          }
      }
    });
  });
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxAttention", DeviceKind::CPU, attention_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxAttentionGrad", DeviceKind::CPU, attention_backward);

}  // namespace cbt::cpu
