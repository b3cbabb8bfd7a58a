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

// p (T) = softmax of row s of X Y (x: (S, D), y: (D, T)).
template <class T>
void probabilities(const T* x, const T* y, const AttentionDims& d, int64_t s, std::vector<double>& p) {
  double m = -INFINITY;
  for (int64_t t = 0; t < d.T; ++t) {
    double a = 0;
    for (int64_t k = 0; k < d.D; ++k) a += double(x[s * d.D + k]) * double(y[k * d.T + t]);
    p[t] = static_cast<double>(static_cast<T>(a));  // the scores in the operands' type, as a MatMul writes them
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

// X, Y, V -> O
void attention_forward(KernelContext& ctx) {
  const AttentionDims d = dims_of(ctx, 0);
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() {
    const T *X = ctx.in(0).ptr<T>(), *Y = ctx.in(1).ptr<T>(), *V = ctx.in(2).ptr<T>();
    T* O = ctx.out(0).ptr<T>();
    for_each_matrix(d, [&](int64_t b) {
      const T *x = X + b * d.S * d.D, *y = Y + b * d.D * d.T, *v = V + b * d.T * d.E;
      T* o = O + b * d.S * d.E;
      std::vector<double> p(d.T);
      for (int64_t s = 0; s < d.S; ++s) {
        probabilities(x, y, d, s, p);
        for (int64_t e = 0; e < d.E; ++e) {
          double acc = 0;
          for (int64_t t = 0; t < d.T; ++t) acc += p[t] * double(v[t * d.E + e]);
          o[s * d.E + e] = static_cast<T>(acc);
        }
      }
    });
  });
}

// dO, X, Y, V -> dX, dY, dV: with P = softmax(X Y), dP = dO V^T, dA = P (dP - rowsum(P dP)),
// dX = dA Y^T, dY = X^T dA, dV = P^T dO.
void attention_backward(KernelContext& ctx) {
  const AttentionDims d = dims_of(ctx, 1);
  auto wanted = [&](size_t k) {
    auto mask = ctx.node.attrs.get_ints("outputs_needed", {1, 1, 1});
    return ctx.has_out(k) && (k >= mask.size() || mask[k] != 0);
  };
  const bool want_dx = wanted(0), want_dy = wanted(1), want_dv = wanted(2);
  dispatch_float(ctx.in(1).dtype(), [&]<class T>() {
    const T *dO = ctx.in(0).ptr<T>(), *X = ctx.in(1).ptr<T>(), *Y = ctx.in(2).ptr<T>(), *V = ctx.in(3).ptr<T>();
    for_each_matrix(d, [&](int64_t b) {
      const T *go = dO + b * d.S * d.E, *x = X + b * d.S * d.D, *y = Y + b * d.D * d.T, *v = V + b * d.T * d.E;
      std::vector<double> p(d.T), da(d.S * d.T), pp(d.S * d.T);
      for (int64_t s = 0; s < d.S; ++s) {
        probabilities(x, y, d, s, p);
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
