// BatchNorm's channels-last bfloat16 CUDA kernels (--precision bf16): X viewed as (rows, C),
// rows = N * H * W. Each thread owns V adjacent channels (one 16-byte load when V = 8) and
// steps over the rows of its block's chunk; per-channel sums are formed in float per thread
// and in double per block, added in a fixed order (deterministic), and finished with the
// float32 kernels' formulas (batch_norm_math.cuh). Normalisation and dX in float, rounded
// once to bfloat16.
#include "ops/cuda/batch_norm_nhwc.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <type_traits>

#include "ops/cuda/batch_norm_math.cuh"
#include "ops/cuda/dense_util.cuh"

namespace cbt::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kFewLearners = 8;  // as batch_norm.cu: more learners a GPU take larger blocks

// X viewed as (rows, C) in blocks of kThreads threads: channel tiles of `lanes` groups of V
// channels (blockIdx.y), and chunks of `chunk_rows` rows (blockIdx.x) that a block covers
// `row_step` rows at a time.
struct NhwcSplit {
  int64_t rows = 0, chunk_rows = 1, chunks = 1;
  int C = 1, lanes = 1, row_step = 1, tiles = 1;
};

// The fewest rows a thread of the statistics and gradient sums steps over: 4, or
// CBT_BN_NHWC_ROWS (1 to 64) from the environment, for experiments. Read once. Against 1 (one
// H200, session 39 call 5): ResNet-20 at 8 learners 122,477 -> 129,911 images/s, ResNet-32
// 69,909 -> 76,495; at 16 learners, whose blocks are that long already, the same within 2%; 16
// rows lost 5-10% everywhere.
int rows_per_thread() {
  static const int rows = [] {
    const char* v = std::getenv("CBT_BN_NHWC_ROWS");
    const int r = v ? std::atoi(v) : 4;
    return std::clamp(r, 1, 64);
  }();
  return rows;
}

// Blocks of about 2048 elements while few learners share the GPU (more blocks fill it), 8192
// with many (fewer partial sums to add), as bn_split chooses for the float32 kernels.
NhwcSplit nhwc_split(const Tensor& x, int V, const CudaContext& cc) {
  NhwcSplit d;
  d.C = static_cast<int>(x.dim(1));
  d.rows = x.numel() / std::max<int64_t>(d.C, 1);
  const int groups = (d.C + V - 1) / V;
  d.lanes = std::clamp(groups, 1, kThreads);
  d.tiles = (groups + d.lanes - 1) / d.lanes;
  d.row_step = kThreads / d.lanes;
  const int64_t block = cc.conv_concurrency > kFewLearners ? 8192 : 2048;
  const int64_t want = std::max<int64_t>(block / (int64_t{d.lanes} * V), int64_t{d.row_step} * rows_per_thread());
  d.chunk_rows = (want + d.row_step - 1) / d.row_step * d.row_step;
  d.chunks = std::max<int64_t>((d.rows + d.chunk_rows - 1) / d.chunk_rows, 1);
  return d;
}

dim3 grid_of(const NhwcSplit& d) { return dim3(static_cast<unsigned>(d.chunks), static_cast<unsigned>(d.tiles)); }

// This thread's part: channels c0 .. c0 + V - 1 of rows r, r + row_step, ... below `end`.
template <int V>
struct Part {
  int lane, slot, c0;
  int64_t r, end;
  bool active;
  __device__ explicit Part(const NhwcSplit& d)
      : lane(static_cast<int>(threadIdx.x) % d.lanes),
        slot(static_cast<int>(threadIdx.x) / d.lanes),
        c0((static_cast<int>(blockIdx.y) * d.lanes + lane) * V),
        r(static_cast<int64_t>(blockIdx.x) * d.chunk_rows + slot),
        end(std::min(d.rows, static_cast<int64_t>(blockIdx.x + 1) * d.chunk_rows)),
        active(slot < d.row_step && c0 < d.C) {}
};

// V bfloat16s at p as floats; V = 8 is one 16-byte load.
template <int V>
__device__ __forceinline__ void load(const bf16* p, float (&v)[V]) {
  if constexpr (V == 8) {
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(h[k]);
      v[2 * k] = f.x, v[2 * k + 1] = f.y;
    }
  } else {
    static_assert(V == 1);
    v[0] = __bfloat162float(*p);
  }
}

// V floats rounded to nearest even, stored as bfloat16s at p.
template <int V>
__device__ __forceinline__ void store(bf16* p, const float (&v)[V]) {
  if constexpr (V == 8) {
    uint4 u;
    auto* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = __floats2bfloat162_rn(v[2 * k], v[2 * k + 1]);
    *reinterpret_cast<uint4*>(p) = u;
  } else {
    static_assert(V == 1);
    *p = __float2bfloat16_rn(v[0]);
  }
}

// The incoming gradients of V channels at p, zero where the fused Relu's output y is not > 0.
template <int V>
__device__ __forceinline__ void load_grad(const bf16* dy, const bf16* y, int64_t at, float (&g)[V]) {
  load<V>(dy + at, g);
  if (!y) return;
  float yv[V];
  load<V>(y + at, yv);
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (!(yv[k] > 0)) g[k] = 0.0f;
}

// Adds every thread's sums (s0, s1) of its channels over the block, in double and in a fixed
// order, into partial[chunk][c]; the last block of the channel tile to arrive (arrivals[tile]
// counts them, zero before and after) adds the chunks in chunk order and calls fin(c, total)
// for each channel of the tile. Which block finishes varies, the order of the sums does not.
template <int V, class Fin>
__device__ void reduce_tile(const NhwcSplit& d, const Part<V>& my, const float (&s0)[V], const float (&s1)[V],
                            double2* partial, unsigned* arrivals, const Fin& fin) {
  __shared__ double2 sums[kThreads * V];  // [slot][lane * V + k]
  __shared__ bool last;
  double t0[V], t1[V];
#pragma unroll
  for (int k = 0; k < V; ++k) t0[k] = s0[k], t1[k] = s1[k];
  // Where a warp holds whole rows of lanes, it first adds its rows by shuffles: a block then
  // leaves 8 slots a channel instead of row_step.
  const bool shuffle = d.lanes <= 32 && 32 % d.lanes == 0;
  int slots = d.row_step;
  if (shuffle) {
    for (int o = 16; o >= d.lanes; o >>= 1)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        t0[k] += __shfl_down_sync(0xffffffffu, t0[k], o);
        t1[k] += __shfl_down_sync(0xffffffffu, t1[k], o);
      }
    slots = kThreads / 32;
  }
  const int slot = shuffle ? static_cast<int>(threadIdx.x) / 32 : my.slot;
  if (my.active && (!shuffle || static_cast<int>(threadIdx.x % 32) < d.lanes))
#pragma unroll
    for (int k = 0; k < V; ++k) sums[(slot * d.lanes + my.lane) * V + k] = make_double2(t0[k], t1[k]);
  __syncthreads();
  const int width = d.lanes * V, first = static_cast<int>(blockIdx.y) * width;
  for (int j = static_cast<int>(threadIdx.x); j < width && first + j < d.C; j += blockDim.x) {
    double2 t = make_double2(0, 0);
    for (int q = 0; q < slots; ++q) {
      const double2 v = sums[q * width + j];
      t.x += v.x, t.y += v.y;
    }
    partial[static_cast<int64_t>(blockIdx.x) * d.C + first + j] = t;
  }
  __threadfence();  // the partials are visible before the arrival is counted
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(arrivals + blockIdx.y, 1u) == static_cast<unsigned>(d.chunks - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The chunks' partials through L2 (other blocks wrote them). Each channel takes blockDim / width
  // threads, each adding every per-th chunk, then their sums in order: a chain of loads a thread
  // one per-th as long (a block of ResNet-20's 16 channels added 196 chunks in a chain of 196 L2
  // reads, about 11 us a launch).
  const int per = width < static_cast<int>(blockDim.x) ? static_cast<int>(blockDim.x) / width : 1;
  for (int j0 = 0; j0 < width; j0 += static_cast<int>(blockDim.x) / per) {
    const int j = j0 + static_cast<int>(threadIdx.x) % width, q = static_cast<int>(threadIdx.x) / width;
    double2 t = make_double2(0, 0);
    if (q < per && j < width && first + j < d.C)
      for (int64_t b = q; b < d.chunks; b += per) {
        const double2 v = __ldcg(partial + b * d.C + first + j);
        t.x += v.x, t.y += v.y;
      }
    __syncthreads();
    if (q < per && j < width) sums[q * width + j] = t;
    __syncthreads();
    // Thread i finishes channel j0 + i: with per > 1 the loop runs once (blockDim / per >= width),
    // with per = 1 each round covers blockDim channels; either way `own < width` is the bound.
    const int own = j0 + static_cast<int>(threadIdx.x);
    if (own < width && first + own < d.C) {
      double2 total = make_double2(0, 0);
      for (int k = 0; k < per; ++k) {
        const double2 v = sums[k * width + own];
        total.x += v.x, total.y += v.y;
      }
      fin(first + own, total);
    }
  }
  if (threadIdx.x == 0) arrivals[blockIdx.y] = 0;  // ready for the next launch (graph replays too)
}

// Sums of (x - K, (x - K)^2) per channel, K the channel's element of row 0 (shifted sums keep
// the variance accurate when the mean is large against the spread), finished by
// bn_train_finish into p's statistics and the coefficients p.a, p.b.
template <int V>
__global__ void __launch_bounds__(kThreads)
    bn_nhwc_stats_kernel(NhwcSplit d, const bf16* x, BnTrainParams p, double2* partial, unsigned* arrivals) {
  const Part<V> my(d);
  float s0[V] = {}, s1[V] = {};
  if (my.active) {
    float shift[V];
    load<V>(x + my.c0, shift);
    for (int64_t r = my.r; r < my.end; r += d.row_step) {
      float v[V];
      load<V>(x + r * d.C + my.c0, v);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float t = v[k] - shift[k];
        s0[k] += t, s1[k] += t * t;
      }
    }
  }
  reduce_tile<V>(d, my, s0, s1, partial, arrivals, [&](int c, double2 t) {
    bn_train_finish(p, c, double(d.rows), double(__bfloat162float(x[c])), t, true);
  });
}

// y = affine(x, a[c], b[c], relu), rounded once.
template <int V>
__global__ void __launch_bounds__(kThreads)
    bn_nhwc_apply_kernel(NhwcSplit d, const bf16* x, const float* a, const float* b, bf16* y, bool relu) {
  const Part<V> my(d);
  if (!my.active) return;
  float av[V], bv[V];
#pragma unroll
  for (int k = 0; k < V; ++k) av[k] = a[my.c0 + k], bv[k] = b[my.c0 + k];
  for (int64_t r = my.r; r < my.end; r += d.row_step) {
    float v[V];
    load<V>(x + r * d.C + my.c0, v);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = affine(v[k], av[k], bv[k], relu);
    store<V>(y + r * d.C + my.c0, v);
  }
}

// Sums of (g, g * (x - mean)) per channel, g the incoming gradient (masked by the fused Relu),
// finished by bn_grad_finish into dScale, dBias and dX's coefficients per channel:
// coef[c] = (k, mean_dy, k * invstd * mean_dy_xhat, mean), so that
// dX = k * (g - mean_dy) - coef.z * (x - mean).
template <int V>
__global__ void __launch_bounds__(kThreads)
    bn_nhwc_grad_sums_kernel(NhwcSplit d, const bf16* dy, const bf16* y, const bf16* x, BnGradParams p, float4* coef,
                             double2* partial, unsigned* arrivals) {
  const Part<V> my(d);
  float s0[V] = {}, s1[V] = {};
  if (my.active) {
    float mean[V];
#pragma unroll
    for (int k = 0; k < V; ++k) mean[k] = p.mean[my.c0 + k];
    for (int64_t r = my.r; r < my.end; r += d.row_step) {
      float g[V], xv[V];
      load_grad<V>(dy, y, r * d.C + my.c0, g);
      load<V>(x + r * d.C + my.c0, xv);
#pragma unroll
      for (int k = 0; k < V; ++k) s0[k] += g[k], s1[k] += g[k] * (xv[k] - mean[k]);
    }
  }
  reduce_tile<V>(d, my, s0, s1, partial, arrivals, [&](int c, double2 t) {
    const BnGradCoef k = bn_grad_finish(p, c, double(d.rows), t, true);
    coef[c] = make_float4(static_cast<float>(k.k), static_cast<float>(k.mean_dy),
                          static_cast<float>(k.k * k.invstd * k.mean_dy_xhat), p.mean[c]);
  });
}

// dX = k * (g - mean_dy) - kx * (x - mean) with coef[c] = (k, mean_dy, kx, mean), rounded once.
template <int V>
__global__ void __launch_bounds__(kThreads)
    bn_nhwc_dx_kernel(NhwcSplit d, const bf16* dy, const bf16* y, const bf16* x, const float4* coef, bf16* dx) {
  const Part<V> my(d);
  if (!my.active) return;
  float4 k[V];
#pragma unroll
  for (int j = 0; j < V; ++j) k[j] = coef[my.c0 + j];
  for (int64_t r = my.r; r < my.end; r += d.row_step) {
    float g[V], xv[V];
    load_grad<V>(dy, y, r * d.C + my.c0, g);
    load<V>(x + r * d.C + my.c0, xv);
#pragma unroll
    for (int j = 0; j < V; ++j) g[j] = k[j].x * (g[j] - k[j].y) - k[j].z * (xv[j] - k[j].w);
    store<V>(dx + r * d.C + my.c0, g);
  }
}

// Eight channels a thread where C allows it and every bfloat16 tensor is 16-byte aligned; else one.
template <class F>
void with_width(int64_t C, std::initializer_list<const void*> tensors, F f) {
  bool vec = C % 8 == 0;
  for (const void* t : tensors) vec = vec && reinterpret_cast<uintptr_t>(t) % 16 == 0;
  if (vec)
    f(std::integral_constant<int, 8>{});
  else
    f(std::integral_constant<int, 1>{});
}

// The kernels' layout contract (graph/channels_last.h places these nodes): a mismatch is a bug.
const bf16* bf16_of(const KernelContext& ctx, const Tensor& t, const Shape& x_shape, const char* what) {
  CBT_CHECK(t.dtype() == DType::BFloat16 && t.shape() == x_shape && x_shape.size() == 4, "node ", ctx.node.describe(),
            ": channels_last BatchNorm takes ", what,
            " as a 4-D bfloat16 tensor of X's shape stored (N, H, W, C), got ", dtype_name(t.dtype()), " ",
            shape_str(t.shape()), " against X's ", shape_str(x_shape));
  return static_cast<const bf16*>(t.data());
}

const float* channel_param(const KernelContext& ctx, const Tensor& t, int64_t C, const char* what) {
  CBT_CHECK(t.dtype() == DType::Float32 && t.shape() == Shape{C}, "node ", ctx.node.describe(),
            ": channels_last BatchNorm keeps ", what, " float32 (", C, "), got ", dtype_name(t.dtype()), " ",
            shape_str(t.shape()));
  return fptr(t);
}

}  // namespace

void batch_norm_training_nhwc(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  const bf16* x = bf16_of(ctx, X, X.shape(), "X");
  bf16* y = const_cast<bf16*>(bf16_of(ctx, ctx.out(0), X.shape(), "Y"));
  const int64_t C = X.dim(1);
  BnTrainParams p;
  p.x = nullptr;  // the shift is read from the bfloat16 X
  p.scale = channel_param(ctx, ctx.in(1), C, "scale");
  p.bias = channel_param(ctx, ctx.in(2), C, "bias");
  p.run_mean = const_cast<float*>(channel_param(ctx, ctx.in(3), C, "the running mean"));
  p.run_var = const_cast<float*>(channel_param(ctx, ctx.in(4), C, "the running variance"));
  p.saved_mean = const_cast<float*>(channel_param(ctx, ctx.out(1), C, "the saved mean"));
  p.saved_invstd = const_cast<float*>(channel_param(ctx, ctx.out(2), C, "the saved 1/std"));
  p.eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  p.momentum = ctx.node.attrs.get_float("momentum", 0.9f);
  const bool relu = ctx.node.attrs.get_int("relu", 0) != 0;
  with_width(C, {x, y}, [&](auto v) {
    constexpr int V = decltype(v)::value;
    const NhwcSplit d = nhwc_split(X, V, cc);
    Scratch scratch(cc);
    auto* partial = scratch.take<double2>(d.chunks * d.C, "batch-norm statistics");
    p.a = scratch.take<float>(d.C, "batch-norm coefficients");
    p.b = scratch.take<float>(d.C, "batch-norm coefficients");
    unsigned* arrivals = arrival_counters(ctx, cc, scratch, d.tiles);
    bn_nhwc_stats_kernel<V><<<grid_of(d), kThreads, 0, cc.stream>>>(d, x, p, partial, arrivals);
    CBT_CUDA_CHECK_LAUNCH();
    bn_nhwc_apply_kernel<V><<<grid_of(d), kThreads, 0, cc.stream>>>(d, x, p.a, p.b, y, relu);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

void batch_norm_backward_nhwc(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(1);
  const bf16* x = bf16_of(ctx, X, X.shape(), "X");
  const bf16* dy = bf16_of(ctx, ctx.in(0), X.shape(), "dY");
  const bf16* y =
      ctx.node.attrs.get_int("relu", 0) ? bf16_of(ctx, ctx.in(5), X.shape(), "the fused output Y") : nullptr;
  bf16* dx = output_needed(ctx, 0) ? const_cast<bf16*>(bf16_of(ctx, ctx.out(0), X.shape(), "dX")) : nullptr;
  const int64_t C = X.dim(1);
  BnGradParams p;
  p.scale = channel_param(ctx, ctx.in(2), C, "scale");
  p.mean = channel_param(ctx, ctx.in(3), C, "the saved mean");
  p.stat = channel_param(ctx, ctx.in(4), C, "the saved 1/std or running variance");
  p.dscale = output_needed(ctx, 1) ? const_cast<float*>(channel_param(ctx, ctx.out(1), C, "dScale")) : nullptr;
  p.dbias = output_needed(ctx, 2) ? const_cast<float*>(channel_param(ctx, ctx.out(2), C, "dBias")) : nullptr;
  p.coef = nullptr;  // the kernels keep float coefficients of their own
  p.eps = ctx.node.attrs.get_float("epsilon", 1e-5f);
  p.frozen = ctx.node.attrs.get_int("frozen_stats", 0) != 0;
  with_width(C, {x, dy, y, dx}, [&](auto v) {
    constexpr int V = decltype(v)::value;
    const NhwcSplit d = nhwc_split(X, V, cc);
    Scratch scratch(cc);
    auto* partial = scratch.take<double2>(d.chunks * d.C, "batch-norm gradient sums");
    auto* coef = scratch.take<float4>(d.C, "batch-norm gradient coefficients");
    unsigned* arrivals = arrival_counters(ctx, cc, scratch, d.tiles);
    bn_nhwc_grad_sums_kernel<V><<<grid_of(d), kThreads, 0, cc.stream>>>(d, dy, y, x, p, coef, partial, arrivals);
    CBT_CUDA_CHECK_LAUNCH();
    if (!dx) return;
    bn_nhwc_dx_kernel<V><<<grid_of(d), kThreads, 0, cc.stream>>>(d, dy, y, x, coef, dx);
    CBT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace cbt::cuda
