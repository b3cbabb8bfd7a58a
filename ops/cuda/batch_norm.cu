// BatchNormalization CUDA kernels (inference, training, backward).
// Own kernels rather than cuDNN, whose saved-variance and running-variance conventions
// differ from the CPU kernels; statistics are reduced in double, in a fixed order
// (deterministic), with the CPU's formulas.
#include "ops/cuda/batch_norm.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "graph/channels_last.h"
#include "ops/cuda/batch_norm_math.cuh"
#include "ops/cuda/batch_norm_nhwc.h"
#include "ops/cuda/dense_util.cuh"

namespace cg = cooperative_groups;

namespace cbt::cuda {
namespace {

std::atomic<uint64_t> g_one_launch_runs{0};

void check_float(const Tensor& t, const Node& node) { check_float32(t, node, "normalises float32 tensors"); }

// X viewed as (N, C, S).
ChannelSplit ncs_split(const Tensor& x) {
  int64_t n = x.dim(0), c = x.dim(1);
  return ChannelSplit(n, c, x.numel() / std::max<int64_t>(n * c, 1));
}

// Element-wise kernels over (N, C, S) index with I: uint32_t whenever fits_32.
// y: (N, C, S) = affine(x, a[c], b[c], relu)
template <class I>
__global__ void channel_affine_kernel(const float* x, const float* a, const float* b, float* y, I C, I S, I total,
                                      bool relu) {
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<I>(blockDim.x) * gridDim.x) {
    I c = (i / S) % C;
    y[i] = affine(x[i], a[c], b[c], relu);
  }
}

void channel_affine(const CudaContext& cc, const ChannelSplit& d, const float* x, const float* a, const float* b,
                    float* y, bool relu = false) {
  int64_t total = d.N * d.C * d.S;
  if (fits_32(total))
    channel_affine_kernel<uint32_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(
        x, a, b, y, static_cast<uint32_t>(d.C), static_cast<uint32_t>(d.S), static_cast<uint32_t>(total), relu);
  else
    channel_affine_kernel<int64_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(x, a, b, y, d.C, d.S, total, relu);
  CBT_CUDA_CHECK_LAUNCH();
}

// a = scale / sqrt(var + eps), b = bias - mean * a, per channel: (C)
__global__ void bn_inference_coeffs_kernel(const float* scale, const float* bias, const float* mean, const float* var,
                                           double eps, int64_t C, float* a, float* b) {
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

// bn_train_finish on the shifted sums t of channel c, shifted by its first element.
struct BnTrainFinish {
  ChannelSplit d;
  BnTrainParams p;
  __device__ float2 operator()(int64_t c, double2 t, bool store = true) const {
    return bn_train_finish(p, c, double(d.N * d.S), double(p.x[c * d.S]), t, store);
  }
};

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

// bn_grad_finish on the sums t of (dy, dy * (x - mean)) of channel c.
struct BnGradFinish {
  ChannelSplit d;
  BnGradParams p;
  __device__ BnGradCoef operator()(int64_t c, double2 t, bool store = true) const {
    return bn_grad_finish(p, c, double(d.N * d.S), t, store);
  }
};

template <class I>
__global__ void bn_grad_dx_kernel(const float* dy, const float* y, const float* x, const float* mean,
                                  const BnGradCoef* coef, float* dx, I C, I S, I total) {
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<I>(blockDim.x) * gridDim.x) {
    I c = (i / S) % C;
    dx[i] = bn_dx(coef[c], relu_masked(dy, y, i), x[i], mean[c]);
  }
}

// One launch per BatchNorm (thread-block clusters, compute capability 9.0 and later).
// The blocks of a channel, one per chunk of ChannelSplit, form one cluster. Each block keeps
// its elements in registers and sums them as chunk_sum does; thread 0 of every block then
// adds the cluster's block sums in chunk order, read from their shared memory, as
// channel_total does. The totals, and so every result, are bit for bit the two-launch
// path's on the same split; the input is read once instead of twice, and no block waits on
// a global counter.
//
// Which path, and how many blocks a channel, depends on the learners sharing the GPU
// (CudaContext::conv_concurrency; ResNet-32 at batch 32 on an H200, docs/bench/
// h200_2026-11-27_s15): with few, a launch has the GPU mostly to itself, and the one-launch
// kernels over blocks of about 1024 elements were fastest (1 learner +11%, 4 learners +7%
// against two launches); with 16 learners the GPU is full, and two launches over blocks of
// about 4096 elements were (+2.5% against one launch over the same blocks, +3% against two
// launches over blocks of 1024, +8.5% against one launch over blocks of 1024).

constexpr int kMaxValues = 16;            // elements per thread
constexpr int64_t kMaxClusterBlocks = 8;  // the portable cluster size
constexpr int kFewLearners = 8;           // up to this many learners a GPU: one launch

// X viewed as (N, C, S) and split into chunks of about 1024 elements (few learners) or 4096
// (many), at most 8 a channel, wherever a channel fits one cluster's registers (at most
// kMaxValues * kThreads elements a block) and the flat index 32 bits; elsewhere as
// ChannelSplit has it.
ChannelSplit bn_split(const Tensor& x, const CudaContext& cc) {
  ChannelSplit d = ncs_split(x);
  const int64_t count = d.N * d.S, block = cc.conv_concurrency > kFewLearners ? 4096 : 1024;
  if (count <= kMaxClusterBlocks * kMaxValues * kThreads && fits_32(d.N * d.C * d.S))
    d.chunks = std::clamp<int64_t>((count + block - 1) / block, 1, kMaxClusterBlocks);
  return d;
}

// Whether the one-launch kernels apply to split d: every chunk fits a block's registers.
bool fits_one_launch(const ChannelSplit& d) {
  return d.chunks <= kMaxClusterBlocks && fits_32(d.N * d.C * d.S) &&
         (d.N * d.S + d.chunks - 1) / d.chunks <= kMaxValues * kThreads;
}

// Elements per thread of a one-launch kernel: a power of two covering the longest chunk.
int values_per_thread(const ChannelSplit& d) {
  int64_t longest = (d.N * d.S + d.chunks - 1) / d.chunks, need = (longest + kThreads - 1) / kThreads;
  int v = 1;
  while (v < need) v *= 2;
  return v;
}

// Calls f(std::integral_constant<int, V>) for V = values_per_thread(d).
template <class F>
void with_values(const ChannelSplit& d, F f) {
  switch (values_per_thread(d)) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
    default:
      CBT_CHECK(false, "batch norm: no one-launch kernel for this chunk size");
  }
}

constexpr uint32_t kPast = 0xffffffffu;  // an element past the block's chunk

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CBT_BN_CLUSTERS 1
#endif

#ifdef CBT_BN_CLUSTERS
// This thread's part of a one-launch kernel: its channel c, its block's rank in the channel's
// cluster, and the flat indices of its elements in chunk_sum's order (kPast past the chunk).
template <int V>
struct ClusterChunk {
  uint32_t rank, c, at[V];
  __device__ explicit ClusterChunk(const ChannelSplit& d)
      : rank(cg::this_cluster().block_rank()), c(blockIdx.x / static_cast<uint32_t>(d.chunks)) {
    const uint32_t S = static_cast<uint32_t>(d.S), C = static_cast<uint32_t>(d.C);
    const int64_t count = d.N * d.S;
    const uint32_t lo = static_cast<uint32_t>(count * rank / d.chunks);
    const uint32_t hi = static_cast<uint32_t>(count * (rank + 1) / d.chunks);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      uint32_t j = lo + threadIdx.x + static_cast<uint32_t>(k) * blockDim.x;
      uint32_t n = j / S, s = j - n * S;
      at[k] = j < hi ? (n * C + c) * S + s : kPast;
    }
  }
};

// The channel's totals of every thread's (s0, s1), valid in thread 0 of each block: the
// block's sums (block_sum, as chunk_sum), then the cluster's block sums added in chunk order
// (as channel_total), read from each block's shared memory.
__device__ double2 channel_sums(double s0, double s1) {
  __shared__ double shared[32];
  __shared__ double2 slot;
  s0 = block_sum(s0, shared);
  s1 = block_sum(s1, shared);
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) slot = make_double2(s0, s1);
  cluster.sync();
  double2 t = make_double2(0, 0);
  if (threadIdx.x == 0)
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) {
      const double2* q = cluster.map_shared_rank(&slot, r);
      t.x += q->x, t.y += q->y;
    }
  cluster.sync();  // no block leaves, freeing its shared memory, before every block read it
  return t;
}
#endif

// BatchNorm forward in one launch: statistics as channel_reduce with ShiftedMoments and
// BnTrainFinish (block rank 0 of a channel stores them), then y = affine(x, a, b, relu).
template <int V>
__global__ void __launch_bounds__(kThreads)
    bn_train_one_launch_kernel(ChannelSplit d, BnTrainParams p, float* y, bool relu) {
#ifdef CBT_BN_CLUSTERS
  __shared__ float2 ab;
  const ClusterChunk<V> my(d);
  float v[V];
  const double shift = p.x[my.c * static_cast<uint32_t>(d.S)];
  double s0 = 0, s1 = 0;
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (my.at[k] != kPast) {
      v[k] = p.x[my.at[k]];
      double t = double(v[k]) - shift;
      s0 += t, s1 += t * t;
    }
  double2 t = channel_sums(s0, s1);
  if (threadIdx.x == 0) ab = BnTrainFinish{d, p}(my.c, t, my.rank == 0);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (my.at[k] != kPast) y[my.at[k]] = affine(v[k], ab.x, ab.y, relu);
#endif
}

// BatchNorm backward in one launch: sums as channel_reduce with GradMoments and BnGradFinish
// (block rank 0 stores dScale and dBias), then dX (when dx is set) as bn_grad_dx_kernel.
template <int V>
__global__ void __launch_bounds__(kThreads) bn_grad_one_launch_kernel(ChannelSplit d, BnGradParams p, const float* dy,
                                                                      const float* y, const float* x, float* dx) {
#ifdef CBT_BN_CLUSTERS
  __shared__ BnGradCoef coef;
  const ClusterChunk<V> my(d);
  float g[V], xv[V];
  const float mean = p.mean[my.c];
  double s0 = 0, s1 = 0;
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (my.at[k] != kPast) {
      g[k] = relu_masked(dy, y, my.at[k]);
      xv[k] = x[my.at[k]];
      s0 += g[k], s1 += g[k] * (double(xv[k]) - double(mean));
    }
  double2 t = channel_sums(s0, s1);
  if (threadIdx.x == 0) coef = BnGradFinish{d, p}(my.c, t, my.rank == 0);
  __syncthreads();
  if (!dx) return;
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (my.at[k] != kPast) dx[my.at[k]] = bn_dx(coef, g[k], xv[k], mean);
#endif
}

// Whether split d runs in one launch: it fits, the GPU and build have clusters, and
// CBT_BN_ONE_LAUNCH (read at each call) is "on", or unset with at most kFewLearners learners
// on the GPU; "off" keeps two launches.
bool one_launch(const CudaContext& cc, const ChannelSplit& d) {
  const char* env = std::getenv("CBT_BN_ONE_LAUNCH");
  const std::string how = env ? env : "";
  if (how == "off" || !fits_one_launch(d) || !batch_norm_one_launch_supported(cc.device)) return false;
  return how == "on" || cc.conv_concurrency <= kFewLearners;
}

// Launches `kernel` with one cluster of d.chunks blocks per channel on the context's stream.
template <class... Params, class... Args>
void launch_clusters(const CudaContext& cc, const ChannelSplit& d, void (*kernel)(Params...), Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(d.blocks()));
  cfg.blockDim = dim3(kThreads);
  cfg.stream = cc.stream;
  cudaLaunchAttribute cluster = {};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(d.chunks);
  cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
  cfg.attrs = &cluster;
  cfg.numAttrs = 1;
  CBT_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
  g_one_launch_runs.fetch_add(1, std::memory_order_relaxed);
}

// x: (N, C, S), scale, b: (C), running mean/var: (C), updated in place ->
// y, saved_mean: (C), saved_invstd: (C); channels_last=1: batch_norm_nhwc.h
void batch_norm_training(KernelContext& ctx) {
  if (ctx.node.attrs.get_int(kChannelsLastAttr, 0)) return batch_norm_training_nhwc(ctx);
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  ChannelSplit d = bn_split(X, cc);
  BnTrainParams p;
  p.x = fptr(X), p.scale = fptr(ctx.in(1)), p.bias = fptr(ctx.in(2));
  p.run_mean = fptr_out(ctx.in(3)), p.run_var = fptr_out(ctx.in(4));
  p.saved_mean = fptr_out(ctx.out(1)), p.saved_invstd = fptr_out(ctx.out(2));
  p.eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  p.momentum = ctx.node.attrs.get_float("momentum", 0.9f);
  p.a = p.b = nullptr;
  float* y = fptr_out(ctx.out(0));
  const bool relu = ctx.node.attrs.get_int("relu", 0) != 0;
  if (one_launch(cc, d)) {
    with_values(d,
                [&](auto v) { launch_clusters(cc, d, bn_train_one_launch_kernel<decltype(v)::value>, d, p, y, relu); });
    return;
  }
  Scratch scratch(cc);
  auto* partial = scratch.take<double2>(d.blocks(), "batch-norm statistics");
  p.a = scratch.take<float>(d.C, "batch-norm coefficients");
  p.b = scratch.take<float>(d.C, "batch-norm coefficients");
  channel_reduce(cc, d, ShiftedMoments{p.x, d.S}, partial, arrival_counters(ctx, cc, scratch, d.C),
                 BnTrainFinish{d, p});
  channel_affine(cc, d, p.x, p.a, p.b, y, relu);
}

// dy, x: (N, C, S), scale: (C), mean: (C), invstd (C) or running var (C) when frozen_stats
// -> dX, dScale, dBias. With batch statistics dX also flows through the mean and variance.
// channels_last=1: batch_norm_nhwc.h
void batch_norm_backward(KernelContext& ctx) {
  if (ctx.node.attrs.get_int(kChannelsLastAttr, 0)) return batch_norm_backward_nhwc(ctx);
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  check_float(X, ctx.node);
  ChannelSplit d = bn_split(X, cc);
  BnGradParams p;
  p.scale = fptr(ctx.in(2)), p.mean = fptr(ctx.in(3)), p.stat = fptr(ctx.in(4));
  p.dscale = output_needed(ctx, 1) ? fptr_out(ctx.out(1)) : nullptr;
  p.dbias = output_needed(ctx, 2) ? fptr_out(ctx.out(2)) : nullptr;
  p.coef = nullptr;
  p.eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  p.frozen = ctx.node.attrs.get_int("frozen_stats", 0) != 0;
  const float* y = ctx.node.attrs.get_int("relu", 0) ? fptr(ctx.in(5)) : nullptr;
  if (one_launch(cc, d)) {
    float* dx = output_needed(ctx, 0) ? fptr_out(ctx.out(0)) : nullptr;
    with_values(d, [&](auto v) {
      launch_clusters(cc, d, bn_grad_one_launch_kernel<decltype(v)::value>, d, p, fptr(dY), y, fptr(X), dx);
    });
    return;
  }
  Scratch scratch(cc);
  auto* partial = scratch.take<double2>(d.blocks(), "batch-norm gradient sums");
  p.coef = scratch.take<BnGradCoef>(d.C, "batch-norm gradient coefficients");
  channel_reduce(cc, d, GradMoments{fptr(dY), fptr(X), p.mean, y}, partial, arrival_counters(ctx, cc, scratch, d.C),
                 BnGradFinish{d, p});
  if (!output_needed(ctx, 0)) return;
  int64_t total = X.numel();
  if (fits_32(total))
    bn_grad_dx_kernel<uint32_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(
        fptr(dY), y, fptr(X), p.mean, p.coef, fptr_out(ctx.out(0)), static_cast<uint32_t>(d.C),
        static_cast<uint32_t>(d.S), static_cast<uint32_t>(total));
  else
    bn_grad_dx_kernel<int64_t><<<blocks_for(total), kThreads, 0, cc.stream>>>(fptr(dY), y, fptr(X), p.mean, p.coef,
                                                                              fptr_out(ctx.out(0)), d.C, d.S, total);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool batch_norm_one_launch_supported(int device) {
  static std::mutex m;
  static std::map<int, bool> known;
  std::lock_guard<std::mutex> lock(m);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  int clusters = 0;
  CBT_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
  cudaFuncAttributes f = {};
  CBT_CUDA_CHECK(cudaFuncGetAttributes(&f, bn_train_one_launch_kernel<1>));
  return known[device] = clusters != 0 && f.ptxVersion >= 90;
}

uint64_t batch_norm_one_launch_runs() { return g_one_launch_runs.load(std::memory_order_relaxed); }

CBT_REGISTER_KERNEL("", "BatchNormalization", DeviceKind::CUDA, batch_norm_inference);
CBT_REGISTER_KERNEL(kCbtDomain, "BatchNormTraining", DeviceKind::CUDA, batch_norm_training);
CBT_REGISTER_KERNEL(kCbtDomain, "BatchNormGrad", DeviceKind::CUDA, batch_norm_backward);

}  // namespace cbt::cuda
