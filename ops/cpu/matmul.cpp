// Gemm and MatMul CPU kernels, forward and backward, over OpenBLAS.
#include <algorithm>
#include <vector>

#include "graph/shape_utils.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/fused_relu.h"
#include "ops/gemm_geometry.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

bool needed(const KernelContext& ctx, size_t k) {
  auto mask = ctx.node.attrs.get_ints("outputs_needed", {1, 1, 1});
  return ctx.has_out(k) && (k >= mask.size() || mask[k] != 0);
}

// For each flat index of `out`, the flat index of `in` broadcast to it.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
  auto st = broadcast_strides(in, out);
  std::vector<int64_t> idx(dims_product(out, 0, out.size()));
  std::vector<int64_t> coord(out.size(), 0);
  for (int64_t& v : idx) {
    v = 0;
    for (size_t k = 0; k < out.size(); ++k) v += coord[k] * st[k];
    for (size_t k = out.size(); k-- > 0;) {
      if (++coord[k] < out[k]) break;
      coord[k] = 0;
    }
  }
  return idx;
}

// a: (..., M, K), b: (..., K, N) -> y: (batch, M, N)
template <class T>
void matmul_forward(KernelContext& ctx) {
  const Tensor &A = ctx.in(0), &B = ctx.in(1);
  MatDims d = mat_dims(A.shape(), B.shape());
  const T* a = A.ptr<T>();
  const T* b = B.ptr<T>();
  T* y = ctx.out(0).ptr<T>();
  if (d.foldable()) {
    gemm(Trans::No, Trans::No, d.count() * d.M, d.N, d.K, T(1), a, b, T(0), y);
    return;
  }
  auto ai = broadcast_index(d.abatch, d.batch), bi = broadcast_index(d.bbatch, d.batch);
  for (int64_t i = 0; i < d.count(); ++i)
    gemm(Trans::No, Trans::No, d.M, d.N, d.K, T(1), a + ai[i] * d.M * d.K, b + bi[i] * d.K * d.N, T(0),
         y + i * d.M * d.N);
}

// dy: (batch, M, N), a, b as in the forward -> dA, dB summed over broadcast batch dims.
template <class T>
void matmul_backward(KernelContext& ctx) {
  const Tensor &dY = ctx.in(0), &A = ctx.in(1), &B = ctx.in(2);
  MatDims d = mat_dims(A.shape(), B.shape());
  const T* dy = dY.ptr<T>();
  const T* a = A.ptr<T>();
  const T* b = B.ptr<T>();
  T* da = needed(ctx, 0) ? ctx.out(0).ptr<T>() : nullptr;
  T* db = needed(ctx, 1) ? ctx.out(1).ptr<T>() : nullptr;
  if (d.foldable()) {
    int64_t rows = d.count() * d.M;
    if (da) gemm(Trans::No, Trans::Yes, rows, d.K, d.N, T(1), dy, b, T(0), da);
    if (db) gemm(Trans::Yes, Trans::No, d.K, d.N, rows, T(1), a, dy, T(0), db);
    return;
  }
  if (da) std::fill_n(da, A.numel(), T(0));
  if (db) std::fill_n(db, B.numel(), T(0));
  auto ai = broadcast_index(d.abatch, d.batch), bi = broadcast_index(d.bbatch, d.batch);
  int64_t mk = d.M * d.K, kn = d.K * d.N, mn = d.M * d.N;
  for (int64_t i = 0; i < d.count(); ++i) {
    if (da) gemm(Trans::No, Trans::Yes, d.M, d.K, d.N, T(1), dy + i * mn, b + bi[i] * kn, T(1), da + ai[i] * mk);
    if (db) gemm(Trans::Yes, Trans::No, d.K, d.N, d.M, T(1), a + ai[i] * mk, dy + i * mn, T(1), db + bi[i] * kn);
  }
}

// a: (M, K) or (K, M), b: (K, N) or (N, K), c: broadcastable to (M, N) -> y: (M, N); with
// relu=1 (fused, graph/fusion.h) y = max(that, 0).
template <class T>
void gemm_forward(KernelContext& ctx) {
  GemmAttrs at(ctx.node);
  const Tensor &A = ctx.in(0), &B = ctx.in(1);
  Tensor& Y = ctx.out(0);
  int64_t M = Y.dim(0), N = Y.dim(1), K = at.ta ? A.dim(0) : A.dim(1);
  T* y = Y.ptr<T>();
  T beta = T(0);
  if (ctx.has_in(2) && at.beta != 0.0f) {
    BroadcastC bc(ctx.in(2).shape());
    const T* c = ctx.in(2).ptr<T>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) y[i * N + j] = T(at.beta) * c[i * bc.row_step + j * bc.col_step];
    beta = T(1);
  }
  gemm(at.ta ? Trans::Yes : Trans::No, at.tb ? Trans::Yes : Trans::No, M, N, K, T(at.alpha), A.ptr<T>(), B.ptr<T>(),
       beta, y);
  if (ctx.node.attrs.get_int("relu", 0)) relu_in_place(y, M * N);
}

// dy: (M, N) -> dA (shape of A), dB (shape of B), dC (shape of C, summed over broadcasts);
// with relu=1, dy where the fused output y (input 4) > 0.
template <class T>
void gemm_backward(KernelContext& ctx) {
  GemmAttrs at(ctx.node);
  const Tensor &dY = ctx.in(0), &A = ctx.in(1), &B = ctx.in(2);
  int64_t M = dY.dim(0), N = dY.dim(1), K = at.ta ? A.dim(0) : A.dim(1);
  const T* dy = fused_relu_grad<T>(ctx, 4, 3);
  const T* a = A.ptr<T>();
  const T* b = B.ptr<T>();
  T alpha = T(at.alpha);
  if (needed(ctx, 0)) {
    T* da = ctx.out(0).ptr<T>();
    if (!at.ta)  // dA (M, K) = dY (M, N) op(B)^T
      gemm(Trans::No, at.tb ? Trans::No : Trans::Yes, M, K, N, alpha, dy, b, T(0), da);
    else  // dA (K, M) = op(B) (K, N) dY^T
      gemm(at.tb ? Trans::Yes : Trans::No, Trans::Yes, K, M, N, alpha, b, dy, T(0), da);
  }
  if (needed(ctx, 1)) {
    T* db = ctx.out(1).ptr<T>();
    if (!at.tb)  // dB (K, N) = op(A)^T (K, M) dY
      gemm(at.ta ? Trans::No : Trans::Yes, Trans::No, K, N, M, alpha, a, dy, T(0), db);
    else  // dB (N, K) = dY^T (N, M) op(A)
      gemm(Trans::Yes, at.ta ? Trans::Yes : Trans::No, N, K, M, alpha, dy, a, T(0), db);
  }
  if (needed(ctx, 2)) {
    Tensor& dC = ctx.out(2);
    BroadcastC bc(dC.shape());
    std::vector<double> acc(dC.numel(), 0.0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) acc[i * bc.row_step + j * bc.col_step] += dy[i * N + j];
    T* dc = dC.ptr<T>();
    for (int64_t i = 0; i < dC.numel(); ++i) dc[i] = static_cast<T>(at.beta * acc[i]);
  }
}

}  // namespace

CBT_REGISTER_KERNEL("", "MatMul", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { matmul_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "MatMulGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { matmul_backward<T>(ctx); });
});
CBT_REGISTER_KERNEL("", "Gemm", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { gemm_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "GemmGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { gemm_backward<T>(ctx); });
});

}  // namespace cbt::cpu
