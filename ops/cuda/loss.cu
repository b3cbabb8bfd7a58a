// CUDA kernels of cbtrain's losses and their backward ops; ops/cpu/loss.cpp is the
// specification. Sums are accumulated in double in a fixed order (deterministic).
#include <algorithm>
#include <cmath>

#include "ops/cuda/broadcast.cuh"
#include "ops/cuda/dense_util.cuh"

namespace cbt::cuda::ew {
namespace {

// Blocks of the first pass of a mean; the second pass sums their partials in one block.
constexpr int64_t kMeanBlocks = 1024;

// out[0] = sum of part[0..n) / divisor (0 when divisor is 0), by the calling block of kThreads
// (read through L2: other blocks may have written `part`).
template <class T>
__device__ void finish_mean(const double* part, int64_t n, int64_t divisor, T* out, double* smem) {
  double acc = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) acc += __ldcg(part + i);
  acc = group_reduce<kThreads>(acc, SumOp{}, smem);
  if (threadIdx.x == 0) out[0] = static_cast<T>(divisor ? acc / divisor : 0.0);
}

template <class T>
__global__ void finish_mean_kernel(const double* part, int64_t n, int64_t divisor, T* out) {
  __shared__ double smem[kThreads / 32];
  finish_mean(part, n, divisor, out, smem);
}

// Labels must index a class. The CPU reports a bad label as bad data; a kernel cannot, so a
// row with a bad label makes the loss (and its gradient row) NaN, which stops training.
template <class L>
__device__ inline bool label_ok(L y, int64_t classes) {
  return y >= 0 && static_cast<int64_t>(y) < classes;
}

// The gradient of the mean loss at one logit from its log-probability `v`: k = dLoss / N;
// `on` for the label's class, `off` for the others (label smoothing eps over C classes).
struct SceGrad {
  float k, on, off;
  __device__ SceGrad(double dloss, int64_t N, int64_t C, double eps)
      : k(static_cast<float>(dloss / N)), on(static_cast<float>(1 - eps + eps / C)), off(static_cast<float>(eps / C)) {}
  __device__ float operator()(float v, bool label) const { return k * (expf(v) - (label ? on : off)); }
};

// logits: (N, C); labels: (N); log_probs (optional): (N, C); dx (optional, the gradient fused
// in: graph/fusion.h): (N, C) as sce_grad_kernel writes it, and dbias (optional): (C), dx's
// column sums; row_loss: (N), double. One group of G threads per row, exp and sums in double
// as on the CPU. The last block to finish (`arrival` counts them; zero before and after)
// writes the mean loss as finish_mean_kernel would, in the same order.
template <int G, class L>
__global__ void sce_rows_kernel(const float* x, const L* labels, float* lp, double* row_loss, int64_t N, int64_t C,
                                double eps, unsigned* arrival, float* loss, const float* dloss, float* dx,
                                float* dbias) {
  __shared__ float fmem[kThreads / 32];
  __shared__ double dmem[kThreads / 32];
  constexpr int per_block = kThreads / G;
  int lane = threadIdx.x % G;
  const SceGrad grad(dx ? dloss[0] : 0.0f, N, C, eps);
  for (int64_t n = static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / G; n < N;
       n += static_cast<int64_t>(gridDim.x) * per_block) {
    const float* xr = x + n * C;
    float m = -INFINITY;
    for (int64_t c = lane; c < C; c += G) m = MaxOp{}(m, xr[c]);
    m = group_reduce<G>(m, MaxOp{}, fmem);
    double sum = 0;
    for (int64_t c = lane; c < C; c += G) sum += exp(static_cast<double>(xr[c] - m));
    sum = group_reduce<G>(sum, SumOp{}, dmem);
    double lse = m + log(sum), all = 0;
    const L y = labels[n];
    const bool ok = label_ok(y, C);
    for (int64_t c = lane; c < C; c += G) {
      float v = static_cast<float>(xr[c] - lse);
      if (lp) lp[n * C + c] = v;
      if (dx) dx[n * C + c] = ok ? grad(v, c == y) : NAN;
      all += v;
    }
    all = group_reduce<G>(all, SumOp{}, dmem);
    if (lane == 0) {
      row_loss[n] = ok ? -(1 - eps) * static_cast<float>(xr[y] - lse) - eps / C * all : static_cast<double>(NAN);
    }
  }
  __shared__ bool last;
  __threadfence();  // this thread's rows are visible before the block's arrival is counted
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(arrival, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  finish_mean(row_loss, N, N, loss, dmem);
  if (dbias)  // dx's column sums, in double as on the CPU (read through L2: other blocks wrote dx)
    for (int64_t c = threadIdx.x; c < C; c += kThreads) {
      double acc = 0;
      for (int64_t n = 0; n < N; ++n) acc += __ldcg(dx + n * C + c);
      dbias[c] = static_cast<float>(acc);
    }
  if (threadIdx.x == 0) *arrival = 0;  // ready for the next launch (CUDA-graph replays too)
}

// launch.template operator()<L>() with L the labels' integer type: int64 or int32.
template <class Launch>
void with_label_type(const KernelContext& ctx, const Tensor& labels, Launch& launch) {
  if (labels.dtype() == DType::Int64)
    launch.template operator()<int64_t>();
  else if (labels.dtype() == DType::Int32)
    launch.template operator()<int32_t>();
  else
    unsupported_dtype(ctx, labels.dtype());
}

// logits: (N, C); labels: (N) int64/int32[; dLoss ()]; outputs loss (), optional log_probs
// (N, C)[, dLogits (N, C)[, dBias (C)]].
void softmax_cross_entropy(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &x = ctx.in(0), &labels = ctx.in(1);
  require_f32(ctx, x);
  int64_t N = x.dim(0), C = x.dim(1);
  double eps = ctx.node.attrs.get_float("label_smoothing", 0.0f);
  float* loss = ctx.out(0).ptr<float>();
  if (N == 0 || C == 0) {
    finish_mean_kernel<<<1, kThreads, 0, cc.stream>>>(static_cast<const double*>(nullptr), 0, 0, loss);
    CBT_CUDA_CHECK_LAUNCH();
    return;
  }
  Scratch ws(cc);
  double* row_loss = ws.take<double>(N, "softmax cross-entropy row losses");
  unsigned* arrival = arrival_counters(ctx, cc, ws, 1);
  float* lp = ctx.has_out(1) ? ctx.out(1).ptr<float>() : nullptr;
  const float* dloss = ctx.has_in(2) ? ctx.in(2).ptr<float>() : nullptr;
  float* dx = dloss ? ctx.out(2).ptr<float>() : nullptr;
  float* dbias = dx && ctx.has_out(3) ? ctx.out(3).ptr<float>() : nullptr;
  auto launch = [&]<class L>() {
    if (C >= 512) {
      sce_rows_kernel<kThreads, L><<<blocks_for(N, 1), kThreads, 0, cc.stream>>>(
          x.ptr<float>(), labels.ptr<L>(), lp, row_loss, N, C, eps, arrival, loss, dloss, dx, dbias);
    } else {
      sce_rows_kernel<32, L><<<blocks_for((N + 7) / 8, 1), kThreads, 0, cc.stream>>>(
          x.ptr<float>(), labels.ptr<L>(), lp, row_loss, N, C, eps, arrival, loss, dloss, dx, dbias);
    }
    CBT_CUDA_CHECK_LAUNCH();
  };
  with_label_type(ctx, labels, launch);
}

// dLoss: () on the device; log_probs, dLogits: (N, C); labels: (N).
template <class L>
__global__ void sce_grad_kernel(const float* dloss, const float* lp, const L* labels, float* dx, int64_t N, int64_t C,
                                double eps) {
  const SceGrad grad(dloss[0], N, C, eps);
  CBT_GRID_STRIDE_LOOP(i, N * C) {
    int64_t n = i / C, c = i % C;
    L y = labels[n];
    dx[i] = label_ok(y, C) ? grad(lp[i], c == y) : NAN;
  }
}

void softmax_cross_entropy_grad(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dl = ctx.in(0), &lp = ctx.in(1), &labels = ctx.in(2);
  require_f32(ctx, lp);
  int64_t N = lp.dim(0), C = lp.dim(1);
  if (N * C == 0) return;
  double eps = ctx.node.attrs.get_float("label_smoothing", 0.0f);
  auto launch = [&]<class L>() {
    sce_grad_kernel<<<blocks_for(N * C), kThreads, 0, cc.stream>>>(dl.ptr<float>(), lp.ptr<float>(), labels.ptr<L>(),
                                                                   ctx.out(0).ptr<float>(), N, C, eps);
    CBT_CUDA_CHECK_LAUNCH();
  };
  with_label_type(ctx, labels, launch);
}

struct MseTerm {
  __device__ double operator()(double p, double t) const { return (p - t) * (p - t); }
};
struct MseGrad {
  __device__ float operator()(float p, float t) const { return 2 * (p - t); }
};
// max(x, 0) - x t + log(1 + exp(-|x|)): the stable form of -t log s(x) - (1-t) log(1-s(x)).
struct BceTerm {
  __device__ double operator()(double x, double t) const { return fmax(x, 0.0) - x * t + log1p(exp(-fabs(x))); }
};
struct BceGrad {
  __device__ float operator()(float x, float t) const {
    float s = x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
    return s - t;
  }
};

// part[block] = sum of f(pred[i], target[i]) in double over a fixed share of i.
template <class F>
__global__ void mean_terms_kernel(const float* p, const float* t, int64_t n, double* part, F f) {
  __shared__ double smem[kThreads / 32];
  double acc = 0;
  CBT_GRID_STRIDE_LOOP(i, n) acc += f(static_cast<double>(p[i]), static_cast<double>(t[i]));
  acc = group_reduce<kThreads>(acc, SumOp{}, smem);
  if (threadIdx.x == 0) part[blockIdx.x] = acc;
}

// pred, target: same shape; loss () = mean of f.
template <class F>
void mean_loss(KernelContext& ctx, F f) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &p = ctx.in(0), &t = ctx.in(1);
  require_f32(ctx, p);
  int64_t n = p.numel();
  float* loss = ctx.out(0).ptr<float>();
  Scratch ws(cc);
  int blocks = static_cast<int>(std::min<int64_t>(kMeanBlocks, blocks_for(n)));
  double* part = ws.take<double>(blocks, "loss partial sums");
  if (n > 0) {
    mean_terms_kernel<<<blocks, kThreads, 0, cc.stream>>>(p.ptr<float>(), t.ptr<float>(), n, part, f);
    CBT_CUDA_CHECK_LAUNCH();
  }
  finish_mean_kernel<<<1, kThreads, 0, cc.stream>>>(static_cast<const double*>(part), n ? blocks : 0, n, loss);
  CBT_CUDA_CHECK_LAUNCH();
}

// dLoss: () on the device; pred, target, dPred: same shape; dPred = dLoss / n * g(pred, target).
template <class G>
__global__ void mean_loss_grad_kernel(const float* dloss, const float* p, const float* t, float* dp, int64_t n, G g) {
  float k = static_cast<float>(static_cast<double>(dloss[0]) / (n > 1 ? n : 1));
  CBT_GRID_STRIDE_LOOP(i, n) dp[i] = k * g(p[i], t[i]);
}

template <class G>
void mean_loss_grad(KernelContext& ctx, G g) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &p = ctx.in(1), &t = ctx.in(2);
  require_f32(ctx, p);
  int64_t n = p.numel();
  if (n == 0) return;
  mean_loss_grad_kernel<<<blocks_for(n), kThreads, 0, cc.stream>>>(ctx.in(0).ptr<float>(), p.ptr<float>(),
                                                                   t.ptr<float>(), ctx.out(0).ptr<float>(), n, g);
  CBT_CUDA_CHECK_LAUNCH();
}

void mse(KernelContext& ctx) { mean_loss(ctx, MseTerm{}); }
void mse_grad(KernelContext& ctx) { mean_loss_grad(ctx, MseGrad{}); }
void bce_with_logits(KernelContext& ctx) { mean_loss(ctx, BceTerm{}); }
void bce_with_logits_grad(KernelContext& ctx) { mean_loss_grad(ctx, BceGrad{}); }

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxCrossEntropy", DeviceKind::CUDA, softmax_cross_entropy);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxCrossEntropyGrad", DeviceKind::CUDA, softmax_cross_entropy_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "MeanSquaredError", DeviceKind::CUDA, mse);
CBT_REGISTER_KERNEL(kCbtDomain, "MeanSquaredErrorGrad", DeviceKind::CUDA, mse_grad);
CBT_REGISTER_KERNEL(kCbtDomain, "BinaryCrossEntropyWithLogits", DeviceKind::CUDA, bce_with_logits);
CBT_REGISTER_KERNEL(kCbtDomain, "BinaryCrossEntropyWithLogitsGrad", DeviceKind::CUDA, bce_with_logits_grad);

}  // namespace cbt::cuda::ew
