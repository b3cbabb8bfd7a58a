// CPU kernels of SoftmaxAttention and its gradient (graph/softmax_attention.h): one matrix of
// the batch at a time (in parallel), in the operands' type, every product as rows scaled and
// added to rows (contiguous inner loops the compiler vectorises) in a fixed order.
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

// The optional bias of matrix m's scores (input `i`).
template <class T>
struct Bias {
  const T* b = nullptr;
  ScoreBias layout;
  Bias(const KernelContext& ctx, size_t i, const Shape& scores) {
    if (!ctx.has_in(i)) return;
    b = ctx.in(i).ptr<T>();
    layout = score_bias_layout(ctx.in(i).shape(), scores).value();
  }
};

// row[0, n) += a * src[0, n)
template <class T>
void add_scaled(T* row, T a, const T* src, int64_t n) {
  for (int64_t j = 0; j < n; ++j) row[j] += a * src[j];
}

template <class T>
T dot(const T* a, const T* b, int64_t n) {
  T acc = 0;
  for (int64_t j = 0; j < n; ++j) acc += a[j] * b[j];
  return acc;
}

// p (S, T) = the rows of softmax(X Y + B) of matrix m (x: (S, D), y: (D, T)).
template <class T>
void probabilities(const T* x, const T* y, const Bias<T>& bias, int64_t m, const AttentionDims& d, T* p) {
  for (int64_t s = 0; s < d.S; ++s) {
    T* row = p + s * d.T;
    std::fill(row, row + d.T, T(0));
    for (int64_t k = 0; k < d.D; ++k) add_scaled(row, x[s * d.D + k], y + k * d.T, d.T);
    if (bias.b)
      for (int64_t t = 0; t < d.T; ++t) row[t] += bias.b[bias.layout.offset(m, s, t)];
    const T top = *std::max_element(row, row + d.T);
    T sum = 0;
    for (int64_t t = 0; t < d.T; ++t) sum += row[t] = std::exp(row[t] - top);
    const T inv = T(1) / sum;
    for (int64_t t = 0; t < d.T; ++t) row[t] *= inv;
  }
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
      std::vector<T> p(d.S * d.T);
      probabilities(x, y, bias, b, d, p.data());
      std::fill(o, o + d.S * d.E, T(0));
      for (int64_t s = 0; s < d.S; ++s)
        for (int64_t t = 0; t < d.T; ++t) add_scaled(o + s * d.E, p[s * d.T + t], v + t * d.E, d.E);
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
      std::vector<T> p(d.S * d.T), ds(d.S * d.T);
      probabilities(x, y, bias, b, d, p.data());
      for (int64_t s = 0; s < d.S; ++s) {
        const T *pr = p.data() + s * d.T, *gr = go + s * d.E;
        T* row = ds.data() + s * d.T;
        T r = 0;
        for (int64_t t = 0; t < d.T; ++t) r += pr[t] * (row[t] = dot(gr, v + t * d.E, d.E));
        for (int64_t t = 0; t < d.T; ++t) row[t] = pr[t] * (row[t] - r);
      }
      if (want_ds) std::copy(ds.begin(), ds.end(), ctx.out(3).ptr<T>() + b * d.S * d.T);
      if (want_dx) {
        T* dx = ctx.out(0).ptr<T>() + b * d.S * d.D;
        for (int64_t s = 0; s < d.S; ++s)
          for (int64_t k = 0; k < d.D; ++k) dx[s * d.D + k] = dot(ds.data() + s * d.T, y + k * d.T, d.T);
      }
      if (want_dy) {
        T* dy = ctx.out(1).ptr<T>() + b * d.D * d.T;
        std::fill(dy, dy + d.D * d.T, T(0));
        for (int64_t s = 0; s < d.S; ++s)
          for (int64_t k = 0; k < d.D; ++k) add_scaled(dy + k * d.T, x[s * d.D + k], ds.data() + s * d.T, d.T);
      }
      if (want_dv) {
        T* dv = ctx.out(2).ptr<T>() + b * d.T * d.E;
        std::fill(dv, dv + d.T * d.E, T(0));
        for (int64_t s = 0; s < d.S; ++s)
          for (int64_t t = 0; t < d.T; ++t) add_scaled(dv + t * d.E, p[s * d.T + t], go + s * d.E, d.E);
      }
    });
  });
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxAttention", DeviceKind::CPU, attention_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxAttentionGrad", DeviceKind::CPU, attention_backward);

}  // namespace cbt::cpu
