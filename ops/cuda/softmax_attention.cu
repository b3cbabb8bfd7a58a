// CUDA kernels of SoftmaxAttention and its gradient (graph/softmax_attention.h); the CPU's
// (ops/cpu/softmax_attention.cpp) are the specification. One block per matrix of the batch, or
// one warp where a row of scores fits a warp, with its operands in shared memory (fuse_attention
// made the op only where they fit): the scores, the softmax and both products without a trip to
// global memory between them. Every sum runs in a fixed order (deterministic).
#include "graph/softmax_attention.h"

#include <algorithm>
#include <cmath>

#include "ops/cuda/broadcast.cuh"
#include "ops/cuda/dense_util.cuh"

namespace cbt::cuda {
namespace {

// 16 warps: a block is alone on its SM when the batch has about as many matrices as the GPU
// has SMs (4 heads of 32 images), so its own warps must hide the latency.
constexpr int kAttentionThreads = 512;

// The optional bias of the scores and where matrix b's score (s, t) reads it.
struct Bias {
  const float* b = nullptr;
  ScoreBias layout;
};

// A matrix's dims in 32 bits (they fit: fuse_attention takes at most kAttentionMaxFloats a
// matrix), so that the kernels' index arithmetic is 32-bit.
struct SmallDims {
  int S, D, T, E;
  __device__ explicit SmallDims(const AttentionDims& d)
      : S(static_cast<int>(d.S)), D(static_cast<int>(d.D)), T(static_cast<int>(d.T)), E(static_cast<int>(d.E)) {}
};

// p (S, T) = softmax of the rows of matrix m's x (S, D) y (D, T) + B, x, y and p in shared
// memory; ends synced.
__device__ void probabilities(const float* x, const float* y, const Bias& bias, int64_t m, float* p,
                              const AttentionDims& dims) {
  const SmallDims d(dims);
  // The matrix's bias offset once (64-bit divisions over the batch dims), not once a score.
  const float* b = bias.b ? bias.b + bias.layout.batch_offset(m) : nullptr;
  for (int i = threadIdx.x; i < d.S * d.T; i += blockDim.x) {
    const int s = i / d.T, t = i % d.T;
    float a = 0;
    for (int k = 0; k < d.D; ++k) a += x[s * d.D + k] * y[k * d.T + t];
    if (b) a += b[s * bias.layout.s_stride + t * bias.layout.t_stride];
    p[i] = a;
  }
  __syncthreads();
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int s = threadIdx.x / 32; s < d.S; s += warps) {
    float* row = p + s * d.T;
    float mx = -INFINITY;
    for (int t = lane; t < d.T; t += 32) mx = fmaxf(mx, row[t]);
    mx = ew::group_reduce<32>(mx, ew::MaxOp{}, static_cast<float*>(nullptr));
    float sum = 0;
    for (int t = lane; t < d.T; t += 32) sum += expf(row[t] - mx);
    sum = ew::group_reduce<32>(sum, ew::SumOp{}, static_cast<float*>(nullptr));
    const float inv = 1.0f / sum;
    __syncwarp();  // every lane has read the row before it is overwritten
    for (int t = lane; t < d.T; t += 32) row[t] = expf(row[t] - mx) * inv;
  }
  __syncthreads();
}

__device__ void load(float* dst, const float* src, int64_t n) {
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

// out[r * C + c] = the sum over j < J, in order, of a[r * ar + j * aj] * b[c * bc + j * bj], for
// the (r, c) of R x C from `first` by `step` (a block's threads or a warp's lanes): every matrix
// product of both kernel families. A matrix's dims fit 32 bits (kAttentionMaxFloats).
__device__ void products(float* out, int R, int C, int J, const float* a, int ar, int aj, const float* b, int bc,
                         int bj, int first, int step) {
  for (int i = first; i < R * C; i += step) {
    const int r = i / C, c = i % C;
    float acc = 0;
    for (int j = 0; j < J; ++j) acc += a[r * ar + j * aj] * b[c * bc + j * bj];
    out[i] = acc;
  }
}

// dX = dA Y^T, dY = X^T dA and dV = P^T dO of matrix b, those wanted (non-null), from the
// operands in shared memory, by `first` and `step` as products'.
__device__ void input_gradients(float* dX, float* dY, float* dV, int64_t b, const float* x, const float* y,
                                const float* go, const float* p, const float* da, const SmallDims& d, int first,
                                int step) {
  if (dX) products(dX + b * d.S * d.D, d.S, d.D, d.T, da, d.T, 1, y, d.T, 1, first, step);
  if (dY) products(dY + b * d.D * d.T, d.D, d.T, d.S, x, 1, d.D, da, 1, d.T, first, step);
  if (dV) products(dV + b * d.T * d.E, d.T, d.E, d.S, p, 1, d.T, go, 1, d.E, first, step);
}

__global__ void __launch_bounds__(kAttentionThreads)
    attention_fwd_kernel(const float* X, const float* Y, const float* V, Bias bias, float* O, AttentionDims d) {
  __shared__ float sh[kAttentionMaxFloats];
  float *x = sh, *y = x + d.S * d.D, *v = y + d.D * d.T, *p = v + d.T * d.E;
  for (int64_t b = blockIdx.x; b < d.batch; b += gridDim.x) {
    load(x, X + b * d.S * d.D, d.S * d.D);
    load(y, Y + b * d.D * d.T, d.D * d.T);
    load(v, V + b * d.T * d.E, d.T * d.E);
    __syncthreads();
    probabilities(x, y, bias, b, p, d);
    const SmallDims m(d);
    products(O + b * d.S * d.E, m.S, m.E, m.T, p, m.T, 1, v, 1, m.E, threadIdx.x, blockDim.x);  // P V
    __syncthreads();  // the shared operands are reloaded for the next matrix
  }
}

// dP = dO V^T, dA = P (dP - rowsum(P dP)), dX = dA Y^T, dY = X^T dA, dV = P^T dO; dS = dA.
__global__ void __launch_bounds__(kAttentionThreads)
    attention_bwd_kernel(const float* dO, const float* X, const float* Y, const float* V, Bias bias, float* dX,
                         float* dY, float* dV, float* dS, AttentionDims d) {
  __shared__ float sh[kAttentionMaxFloats];
  float *x = sh, *y = x + d.S * d.D, *v = y + d.D * d.T, *go = v + d.T * d.E, *p = go + d.S * d.E, *da = p + d.S * d.T;
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t b = blockIdx.x; b < d.batch; b += gridDim.x) {
    load(x, X + b * d.S * d.D, d.S * d.D);
    load(y, Y + b * d.D * d.T, d.D * d.T);
    load(v, V + b * d.T * d.E, d.T * d.E);
    load(go, dO + b * d.S * d.E, d.S * d.E);
    __syncthreads();
    probabilities(x, y, bias, b, p, d);
    const SmallDims m(d);
    products(da, m.S, m.T, m.E, go, m.E, 1, v, m.E, 1, threadIdx.x, blockDim.x);  // dP = dO V^T
    __syncthreads();
    for (int64_t s = threadIdx.x / 32; s < d.S; s += warps) {
      const float* pr = p + s * d.T;
      float* row = da + s * d.T;
      float r = 0;
      for (int64_t t = lane; t < d.T; t += 32) r += pr[t] * row[t];
      r = ew::group_reduce<32>(r, ew::SumOp{}, static_cast<float*>(nullptr));
      for (int64_t t = lane; t < d.T; t += 32) row[t] = pr[t] * (row[t] - r);
    }
    __syncthreads();
    if (dS)
      for (int64_t i = threadIdx.x; i < d.S * d.T; i += blockDim.x) dS[b * d.S * d.T + i] = da[i];
    input_gradients(dX, dY, dV, b, x, y, go, p, da, m, threadIdx.x, blockDim.x);
    __syncthreads();
  }
}

// ---- small matrices: a warp each ----------------------------------------------------------
//
// Where every row of scores fits a warp (T <= 32), a block of the kernels above would leave most
// of its 16 warps idle and pay its syncs per matrix: Swin's 1,152 windows of 16 x 16 took 28 us
// forward. Here each warp takes a matrix of its own, its operands in its own slice of (dynamic)
// shared memory. A row of scores takes a group of G lanes (G the power of two from T up), so a
// warp works on 32 / G rows at once; the softmax's sums are butterflies within the group (every
// lane of it gets the same bits), the products run in a fixed order. The bias is read into the
// probabilities' slice first, all of it at once, not a row's latency at a time.

constexpr int kMatricesPerBlock = 4;      // at most; fewer where a matrix's floats are many
constexpr int kWarpSharedFloats = 12288;  // 48 KiB, the dynamic shared memory a block takes unasked
// With fewer matrices a warp each leaves the GPU idle where a block kernel's 16 warps a matrix
// do not: the decoder's attention (28 keys, one learner) took 43 us a launch forward a warp a
// matrix against 9 us a block a matrix.
constexpr int64_t kWarpPathMinMatrices = 512;

// Lane `lane`'s row within a pass and key: G lanes a row.
struct RowLanes {
  int group = 32, row = 0, t = 0;
  __device__ RowLanes(int lane, int T) {
    while (group / 2 >= T) group /= 2;
    row = lane / group;
    t = lane % group;
  }
  __device__ int rows() const { return 32 / group; }
};

struct FmaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
__device__ __forceinline__ float group_sum(float v, int group) { return ew::lanes_reduce(v, ew::SumOp{}, group); }
__device__ __forceinline__ float group_max(float v, int group) { return ew::lanes_reduce(v, FmaxOp{}, group); }
__device__ void load_warp(float* dst, const float* src, int n, int lane) {
  for (int i = lane; i < n; i += 32) dst[i] = src[i];
}
// p (S, T) = matrix m's bias, or zeros; each lane the elements of its rows and key.
__device__ void load_bias(float* p, const Bias& bias, int64_t m, const SmallDims& d, const RowLanes& r) {
  if (r.t >= d.T) return;
  const float* b = bias.b ? bias.b + bias.layout.batch_offset(m) : nullptr;
  for (int s = r.row; s < d.S; s += r.rows())
    p[s * d.T + r.t] = b ? b[s * bias.layout.s_stride + r.t * bias.layout.t_stride] : 0.0f;
}

// The probability p(s, t) of lane's row s and key t (0 off the matrix), from x, y and p holding
// the bias: every lane of the warp calls it (the butterflies), valid or not.
__device__ float group_probability(const float* x, const float* y, const float* p, int s, const RowLanes& r,
                                   const SmallDims& d) {
  const bool valid = s < d.S && r.t < d.T;
  float a = -INFINITY;
  if (valid) {
    a = 0;
    for (int k = 0; k < d.D; ++k) a += x[s * d.D + k] * y[k * d.T + r.t];
    a += p[s * d.T + r.t];
  }
  const float mx = group_max(a, r.group);
  const float e = valid ? expf(a - mx) : 0.0f;
  return e * (1.0f / group_sum(e, r.group));
}

__host__ __device__ int64_t warp_fwd_floats(const AttentionDims& d) {
  return d.S * d.D + d.D * d.T + d.T * d.E + d.S * d.T;
}

__global__ void __launch_bounds__(kMatricesPerBlock * 32)
    attention_fwd_warp_kernel(const float* X, const float* Y, const float* V, Bias bias, float* O, AttentionDims dims) {
  extern __shared__ float smem[];
  const SmallDims d(dims);
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32, warps = blockDim.x / 32;
  const RowLanes r(lane, d.T);
  float* x = smem + w * warp_fwd_floats(dims);
  float *y = x + d.S * d.D, *v = y + d.D * d.T, *p = v + d.T * d.E;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * warps + w; b < dims.batch;
       b += static_cast<int64_t>(gridDim.x) * warps) {
    load_warp(x, X + b * d.S * d.D, d.S * d.D, lane);
    load_warp(y, Y + b * d.D * d.T, d.D * d.T, lane);
    load_warp(v, V + b * d.T * d.E, d.T * d.E, lane);
    load_bias(p, bias, b, d, r);
    __syncwarp();
    for (int s0 = 0; s0 < d.S; s0 += r.rows()) {
      const int s = s0 + r.row;
      const float pt = group_probability(x, y, p, s, r, d);
      if (s < d.S && r.t < d.T) p[s * d.T + r.t] = pt;  // the lane read this bias itself
    }
    __syncwarp();
    products(O + b * d.S * d.E, d.S, d.E, d.T, p, d.T, 1, v, 1, d.E, lane, 32);  // P V
    __syncwarp();  // the slice is reloaded for the warp's next matrix
  }
}

// The backward of attention_bwd_kernel, a warp a matrix; its slice holds x, y, v, dO, P and dA
// (AttentionDims::working_floats).
__global__ void __launch_bounds__(kMatricesPerBlock * 32)
    attention_bwd_warp_kernel(const float* dO, const float* X, const float* Y, const float* V, Bias bias, float* dX,
                              float* dY, float* dV, float* dS, AttentionDims dims) {
  extern __shared__ float smem[];
  const SmallDims d(dims);
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32, warps = blockDim.x / 32;
  const RowLanes r(lane, d.T);
  float* x = smem + w * dims.working_floats();
  float *y = x + d.S * d.D, *v = y + d.D * d.T, *go = v + d.T * d.E, *p = go + d.S * d.E, *da = p + d.S * d.T;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * warps + w; b < dims.batch;
       b += static_cast<int64_t>(gridDim.x) * warps) {
    load_warp(x, X + b * d.S * d.D, d.S * d.D, lane);
    load_warp(y, Y + b * d.D * d.T, d.D * d.T, lane);
    load_warp(v, V + b * d.T * d.E, d.T * d.E, lane);
    load_warp(go, dO + b * d.S * d.E, d.S * d.E, lane);
    load_bias(p, bias, b, d, r);
    __syncwarp();
    for (int s0 = 0; s0 < d.S; s0 += r.rows()) {
      const int s = s0 + r.row;
      const bool valid = s < d.S && r.t < d.T;
      const float pt = group_probability(x, y, p, s, r, d);
      float dp = 0;
      if (valid)
        for (int e = 0; e < d.E; ++e) dp += go[s * d.E + e] * v[r.t * d.E + e];
      const float rs = group_sum(pt * dp, r.group);
      if (valid) {
        p[s * d.T + r.t] = pt;
        da[s * d.T + r.t] = pt * (dp - rs);
      }
    }
    __syncwarp();
    if (dS)
      for (int i = lane; i < d.S * d.T; i += 32) dS[b * d.S * d.T + i] = da[i];
    input_gradients(dX, dY, dV, b, x, y, go, p, da, d, lane, 32);
    __syncwarp();
  }
}

// How a batch runs: a warp a matrix (warps > 0, the matrices a block takes) or a block a matrix.
struct AttentionLaunch {
  int warps = 0;
  unsigned blocks = 0;
  size_t shared_bytes = 0;
};

AttentionLaunch launch_of(const AttentionDims& d, int64_t warp_floats) {
  AttentionLaunch l;
  if (d.T <= 32 && d.batch >= kWarpPathMinMatrices) {
    l.warps = static_cast<int>(std::clamp<int64_t>(kWarpSharedFloats / warp_floats, 1, kMatricesPerBlock));
    l.blocks = static_cast<unsigned>(std::min<int64_t>((d.batch + l.warps - 1) / l.warps, 65535));
    l.shared_bytes = static_cast<size_t>(l.warps * warp_floats) * sizeof(float);
  } else {
    l.blocks = static_cast<unsigned>(std::min<int64_t>(d.batch, 65535));
  }
  return l;
}

AttentionDims dims_of(const KernelContext& ctx, size_t first) {
  for (size_t k = first; k < first + 3; ++k) check_float32(ctx.in(k), ctx.node, "runs attention in float32");
  auto d = attention_dims(ctx.in(first).shape(), ctx.in(first + 1).shape(), ctx.in(first + 2).shape());
  CBT_CHECK(d.has_value() && d->working_floats() <= kAttentionMaxFloats, ctx.node.describe(),
            ": operands of SoftmaxAttention do not fit a block's shared memory");
  return *d;
}

// Input i, the optional bias, against the scores of X and Y (inputs x, x + 1).
Bias bias_of(const KernelContext& ctx, size_t i, size_t x) {
  Bias b;
  if (!ctx.has_in(i)) return b;
  check_float32(ctx.in(i), ctx.node, "runs attention in float32");
  auto layout = score_bias_layout(ctx.in(i).shape(), attention_scores_shape(ctx.in(x).shape(), ctx.in(x + 1).shape()));
  CBT_CHECK(layout.has_value(), ctx.node.describe(), ": B does not broadcast to the scores");
  b.b = fptr(ctx.in(i));
  b.layout = *layout;
  return b;
}

void attention_forward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const AttentionDims d = dims_of(ctx, 0);
  const AttentionLaunch l = launch_of(d, warp_fwd_floats(d));
  const float *x = fptr(ctx.in(0)), *y = fptr(ctx.in(1)), *v = fptr(ctx.in(2));
  if (l.warps)
    attention_fwd_warp_kernel<<<l.blocks, l.warps * 32, l.shared_bytes, cc.stream>>>(x, y, v, bias_of(ctx, 3, 0),
                                                                                     fptr_out(ctx.out(0)), d);
  else
    attention_fwd_kernel<<<l.blocks, kAttentionThreads, 0, cc.stream>>>(x, y, v, bias_of(ctx, 3, 0),
                                                                        fptr_out(ctx.out(0)), d);
  CBT_CUDA_CHECK_LAUNCH();
}

void attention_backward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const AttentionDims d = dims_of(ctx, 1);
  const AttentionLaunch l = launch_of(d, d.working_floats());
  auto out = [&](size_t k) { return output_needed(ctx, k) ? fptr_out(ctx.out(k)) : nullptr; };
  const float *go = fptr(ctx.in(0)), *x = fptr(ctx.in(1)), *y = fptr(ctx.in(2)), *v = fptr(ctx.in(3));
  if (l.warps)
    attention_bwd_warp_kernel<<<l.blocks, l.warps * 32, l.shared_bytes, cc.stream>>>(go, x, y, v, bias_of(ctx, 4, 1),
                                                                                     out(0), out(1), out(2), out(3), d);
  else
    attention_bwd_kernel<<<l.blocks, kAttentionThreads, 0, cc.stream>>>(go, x, y, v, bias_of(ctx, 4, 1), out(0), out(1),
                                                                        out(2), out(3), d);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxAttention", DeviceKind::CUDA, attention_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "SoftmaxAttentionGrad", DeviceKind::CUDA, attention_backward);

}  // namespace cbt::cuda
