// Depthwise convolutions (depthwise_conv.h). Forward and backward data: one block per band of
// rows of a few planes, the band's inputs (zero-padded) and the planes' taps in shared memory,
// each thread `pt` outputs of a row summed over (kh, kw) in that order. Backward filter: one
// block per channel and run of (image, band) chunks, each thread its K x K sums over the
// outputs it takes, then the block's threads in a fixed tree, then the blocks in their order.
// The searches that time every configuration are here too.
#include "ops/cuda/depthwise_conv.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "ops/cuda/config_search.h"
#include "ops/cuda/copy_timing.h"
#include "ops/cuda/fused_relu.cuh"

namespace cbt::cuda {
namespace {

std::atomic<uint64_t> g_depthwise_runs{0};

// Every configuration offered stays within the shared memory a kernel has without opting in.
constexpr size_t kMaxSharedBytes = 48 * 1024;
constexpr int64_t kInt = int64_t{1} << 31;
constexpr int kMaxThreads = 256;  // the kernels' __launch_bounds__

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// a / b rounded towards minus infinity (b > 0).
__host__ __device__ inline int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// One launch's geometry (tiling_of).
struct Tiling {
  int rows = 1;        // rows a band computes (dX's for the backward data, else output rows); the last may have fewer
  int bands = 1;       // bands a plane
  int cols = 1;        // groups of pt outputs a row (the backward data's: of one column parity)
  int tile_rows = 1;   // rows held in shared memory (zeros beyond the image)
  int tile_cols = 1;   // columns held
  int items = 1;       // thread items a block (rows x cols x parities x planes)
  int64_t blocks = 1;  // blocks along x: plane groups, or the backward filter's channels
  int parts = 1;       // the backward filter's blocks a channel (along y)
};

Tiling tiling_of(const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& c) {
  Tiling t;
  const int K = static_cast<int>(d.K), S = static_cast<int>(d.S), PW = static_cast<int>(d.PW);
  if (op == ConvOp::BackwardData) {
    // dX row ih reads dY rows (ih + PH - kh) / S; a band of `rows` reads at most
    // (rows + K - 2) / S + 2 of them. Column ih = p + S i (parity p) reads dY columns
    // i + (p + PW - kw) / S: from floor((PW - K + 1) / S) on.
    t.rows = static_cast<int>(ceil_div(d.H, c.bands));
    t.bands = static_cast<int>(ceil_div(d.H, t.rows));
    t.cols = static_cast<int>(ceil_div(ceil_div(d.W, S), c.pt));
    t.tile_rows = (t.rows + K - 2) / S + 2;
    t.tile_cols = t.cols * c.pt + floor_div(S - 1 + PW, S) - floor_div(PW - K + 1, S);
    t.items = c.group * t.rows * S * t.cols;
  } else {
    // Output row oh reads input rows oh S - PH + kh; column ow, input columns ow S - PW + kw.
    t.rows = static_cast<int>(ceil_div(d.OH, c.bands));
    t.bands = static_cast<int>(ceil_div(d.OH, t.rows));
    t.cols = static_cast<int>(ceil_div(d.OW, c.pt));
    t.tile_rows = (t.rows - 1) * S + K;
    t.tile_cols = (t.cols * c.pt - 1) * S + K;
    t.items = (op == ConvOp::Forward ? c.group : 1) * t.rows * t.cols;
  }
  if (op == ConvOp::BackwardFilter) {
    t.blocks = d.C;
    t.parts = static_cast<int>(std::min<int64_t>(ceil_div(d.N * t.bands, c.group), kInt - 1));
  } else {
    t.blocks = ceil_div(d.N * d.C, c.group);
  }
  return t;
}

size_t shared_floats(const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& c, const Tiling& t) {
  const size_t kk = static_cast<size_t>(d.K * d.K), area = static_cast<size_t>(t.tile_rows) * t.tile_cols;
  if (op != ConvOp::BackwardFilter) return static_cast<size_t>(c.group) * (kk + area);
  // x's rows, dY's band (rows x cols * pt), then a sum a warp for every tap
  return area + static_cast<size_t>(t.rows) * t.cols * c.pt + static_cast<size_t>(c.threads / 32) * kk;
}

// Whether `c` is a configuration the launches take for `op` of `d` (supported).
bool launchable(const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& c) {
  if (c.pt != 1 && c.pt != 2 && c.pt != 4) return false;
  if (c.bands < 1 || c.group < 1 || c.threads < 32 || c.threads > kMaxThreads || c.threads % 32 != 0) return false;
  if (c.bands > (op == ConvOp::BackwardData ? d.H : d.OH)) return false;
  const Tiling t = tiling_of(d, op, c);
  // A group of planes (forward, backward data) or of (image, band) chunks (backward filter).
  const int64_t units = op == ConvOp::BackwardFilter ? d.N * t.bands : d.N * d.C;
  if (c.group > units || units >= kInt || t.blocks >= kInt || t.parts > 65535 || t.bands > 65535) return false;
  return shared_floats(d, op, c, t) * sizeof(float) <= kMaxSharedBytes;
}

// The shared memory of a forward or backward-data block: the K x K taps of planes
// [p0, p0 + group) (zeros past the last plane), then each plane's tile of `src` (planes of
// rows x cols): t.tile_rows rows from row0 by t.tile_cols columns from col0, zeros outside.
template <int KK>
__device__ __forceinline__ void load_taps_and_tiles(const float* __restrict__ w, int C, const float* __restrict__ src,
                                                    int rows, int cols, int row0, int col0, int64_t p0, int64_t planes,
                                                    int group, const Tiling& t, float* taps, float* tiles) {
  for (int e = threadIdx.x; e < group * KK; e += blockDim.x) {
    const int64_t p = p0 + e / KK;
    taps[e] = p < planes ? w[(p % C) * KK + e % KK] : 0.0f;
  }
  const int area = t.tile_rows * t.tile_cols;
  for (int e = threadIdx.x; e < group * area; e += blockDim.x) {
    const int i = e / area, rc = e - i * area, r = rc / t.tile_cols, col = rc - r * t.tile_cols;
    const int64_t p = p0 + i;
    const int h = row0 + r, v = col0 + col;
    const bool in = p < planes && h >= 0 && h < rows && v >= 0 && v < cols;
    tiles[e] = in ? src[p * rows * cols + h * cols + v] : 0.0f;
  }
}

// x: (N, C, H, W), w: (C, 1, K, K), bias: (C) or null -> y: (N, C, OH, OW) (see DepthwiseConfig).
// Block (x, band) computes output rows [band * rows, +rows) of planes [x * group, +group).
// Shared memory: the planes' taps [plane][KK], then their input rows [plane][row][col] from
// input row band * rows * S - PH and column -PW on, zeros outside x. A thread's pt outputs of a
// row read the same K x ((pt - 1) S + K) window (loaded once each: the loops unroll).
template <int K, int S, int PT>
__global__ void __launch_bounds__(kMaxThreads)
    depthwise_forward_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                             float* __restrict__ y, DepthwiseConv d, Tiling t, int group, bool relu) {
  constexpr int KK = K * K;
  extern __shared__ float smem[];
  const int C = static_cast<int>(d.C), H = static_cast<int>(d.H), W = static_cast<int>(d.W);
  const int OH = static_cast<int>(d.OH), OW = static_cast<int>(d.OW);
  const int64_t planes = d.N * d.C, p0 = static_cast<int64_t>(blockIdx.x) * group;
  const int oh0 = static_cast<int>(blockIdx.y) * t.rows, rows = min(t.rows, OH - oh0);
  const int area = t.tile_rows * t.tile_cols, h0 = oh0 * S - static_cast<int>(d.PH), PW = static_cast<int>(d.PW);
  float* taps = smem;
  float* tiles = smem + group * KK;
  load_taps_and_tiles<KK>(w, C, x, H, W, h0, -PW, p0, planes, group, t, taps, tiles);
  __syncthreads();
  const int per_plane = t.rows * t.cols;
  for (int item = threadIdx.x; item < group * per_plane; item += blockDim.x) {
    const int i = item / per_plane, rem = item - i * per_plane, r = rem / t.cols, j = rem - r * t.cols;
    const int64_t p = p0 + i;
    if (p >= planes || r >= rows) continue;
    const float* xs = tiles + i * area + r * S * t.tile_cols + j * PT * S;
    const float* tp = taps + i * KK;
    float acc[PT];
#pragma unroll
    for (int q = 0; q < PT; ++q) acc[q] = 0.0f;
#pragma unroll
    for (int kh = 0; kh < K; ++kh)
#pragma unroll
      for (int kw = 0; kw < K; ++kw) {
        const float tap = tp[kh * K + kw];
#pragma unroll
        for (int q = 0; q < PT; ++q) acc[q] = fmaf(xs[kh * t.tile_cols + q * S + kw], tap, acc[q]);
      }
    const float b = bias ? bias[p % C] : 0.0f;
    float* out = y + p * OH * OW + static_cast<int64_t>(oh0 + r) * OW + j * PT;
#pragma unroll
    for (int q = 0; q < PT; ++q) {
      if (j * PT + q >= OW) break;
      const float v = bias ? acc[q] + b : acc[q];
      out[q] = relu ? relu_of(v) : v;
    }
  }
}

// dy: (N, C, OH, OW), w: (C, 1, K, K) -> dx: (N, C, H, W): dX[ih][iw] sums dY[oh][ow] w[kh][kw]
// over the taps with oh S - PH + kh = ih and ow S - PW + kw = iw. Block (x, band) computes dX
// rows [band * rows, +rows) of planes [x * group, +group). Shared memory: the planes' taps, then
// their dY rows [plane][row][col] from row r_lo = floor((band * rows + PH - K + 1) / S) and column
// c_lo = floor((PW - K + 1) / S) on, zeros outside dY. A thread takes dX columns
// p + S (j * pt + q), q < pt, of one parity p: they share their taps, and tap kw reads dY
// columns j * pt + q + (p + PW - kw) / S, consecutive (loaded once each: the loops unroll).
template <int K, int S, int PT>
__global__ void __launch_bounds__(kMaxThreads)
    depthwise_backward_data_kernel(const float* __restrict__ dy, const float* __restrict__ w, float* __restrict__ dx,
                                   DepthwiseConv d, Tiling t, int group) {
  constexpr int KK = K * K;
  extern __shared__ float smem[];
  const int C = static_cast<int>(d.C), H = static_cast<int>(d.H), W = static_cast<int>(d.W);
  const int OH = static_cast<int>(d.OH), OW = static_cast<int>(d.OW);
  const int PH = static_cast<int>(d.PH), PW = static_cast<int>(d.PW);
  const int64_t planes = d.N * d.C, p0 = static_cast<int64_t>(blockIdx.x) * group;
  const int ih0 = static_cast<int>(blockIdx.y) * t.rows, rows = min(t.rows, H - ih0);
  const int r_lo = floor_div(ih0 + PH - (K - 1), S), c_lo = floor_div(PW - (K - 1), S);
  const int area = t.tile_rows * t.tile_cols;
  float* taps = smem;
  float* tiles = smem + group * KK;
  load_taps_and_tiles<KK>(w, C, dy, OH, OW, r_lo, c_lo, p0, planes, group, t, taps, tiles);
  __syncthreads();
  const int per_row = S * t.cols, per_plane = t.rows * per_row;
  for (int item = threadIdx.x; item < group * per_plane; item += blockDim.x) {
    const int i = item / per_plane, rem = item - i * per_plane, r = rem / per_row, rest = rem - r * per_row;
    const int par = rest / t.cols, j = rest - par * t.cols;
    const int64_t p = p0 + i;
    if (p >= planes || r >= rows) continue;
    const int ih = ih0 + r;
    const float* tp = taps + i * KK;
    float acc[PT];
#pragma unroll
    for (int q = 0; q < PT; ++q) acc[q] = 0.0f;
#pragma unroll
    for (int kh = 0; kh < K; ++kh) {
      const int a = ih + PH - kh + S * K;  // S K more than dY's row times S: never negative
      if (a % S != 0) continue;
      const float* row = tiles + i * area + (a / S - K - r_lo) * t.tile_cols + j * PT;
#pragma unroll
      for (int kw = 0; kw < K; ++kw) {
        const int b = par + PW - kw + S * K;
        if (b % S != 0) continue;
        const float tap = tp[kh * K + kw];
        const float* at = row + (b / S - K - c_lo);
#pragma unroll
        for (int q = 0; q < PT; ++q) acc[q] = fmaf(at[q], tap, acc[q]);
      }
    }
    float* out = dx + p * H * W + static_cast<int64_t>(ih) * W;
#pragma unroll
    for (int q = 0; q < PT; ++q) {
      const int iw = par + S * (j * PT + q);
      if (iw >= W) break;
      out[iw] = acc[q];
    }
  }
}

// x: (N, C, H, W), dy: (N, C, OH, OW) -> the sums of block (c, g): dW[c][kh][kw] over chunks
// [g * group, +group) of the N * bands (image n = chunk / bands, band = chunk % bands), written
// to dw when the channel has one block (gridDim.y == 1), else to partial[(g * C + c) * KK + k].
// Per chunk, shared memory holds the band's input rows (as the forward's) and its dY rows
// [row][col] (cols * pt a row, zeros beyond OW); each thread sums its outputs' products into
// its K x K registers, the threads then add theirs down each warp and the warps in order.
template <int K, int S, int PT>
__global__ void __launch_bounds__(kMaxThreads)
    depthwise_wgrad_kernel(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ partial,
                           float* __restrict__ dw, DepthwiseConv d, Tiling t, int group) {
  constexpr int KK = K * K;
  extern __shared__ float smem[];
  const int C = static_cast<int>(d.C), H = static_cast<int>(d.H), W = static_cast<int>(d.W);
  const int OH = static_cast<int>(d.OH), OW = static_cast<int>(d.OW);
  const int PH = static_cast<int>(d.PH), PW = static_cast<int>(d.PW);
  const int c = static_cast<int>(blockIdx.x), part = static_cast<int>(blockIdx.y);
  const int chunks = static_cast<int>(d.N) * t.bands, chunk_end = min(chunks, (part + 1) * group);
  const int x_area = t.tile_rows * t.tile_cols, y_cols = t.cols * PT, y_area = t.rows * y_cols;
  float* xs = smem;
  float* ys = smem + x_area;
  float* warp_sums = ys + y_area;  // [warp][KK]
  float acc[KK];
#pragma unroll
  for (int k = 0; k < KK; ++k) acc[k] = 0.0f;
  for (int chunk = part * group; chunk < chunk_end; ++chunk) {
    const int n = chunk / t.bands, oh0 = (chunk - n * t.bands) * t.rows, rows = min(t.rows, OH - oh0);
    const int64_t plane = static_cast<int64_t>(n) * C + c;
    const float* xp = x + plane * H * W;
    const float* yp = dy + plane * OH * OW;
    const int h0 = oh0 * S - PH;
    __syncthreads();  // the previous chunk's rows are no longer read
    for (int e = threadIdx.x; e < x_area; e += blockDim.x) {
      const int r = e / t.tile_cols, col = e - r * t.tile_cols, h = h0 + r, v = col - PW;
      xs[e] = h >= 0 && h < H && v >= 0 && v < W ? xp[h * W + v] : 0.0f;
    }
    for (int e = threadIdx.x; e < y_area; e += blockDim.x) {
      const int r = e / y_cols, col = e - r * y_cols;
      ys[e] = r < rows && col < OW ? yp[(oh0 + r) * OW + col] : 0.0f;
    }
    __syncthreads();
    for (int item = threadIdx.x; item < rows * t.cols; item += blockDim.x) {
      const int r = item / t.cols, j = item - r * t.cols;
      const float* yr = ys + r * y_cols + j * PT;
      const float* xr = xs + r * S * t.tile_cols + j * PT * S;
      float g[PT];
#pragma unroll
      for (int q = 0; q < PT; ++q) g[q] = yr[q];
#pragma unroll
      for (int q = 0; q < PT; ++q)
#pragma unroll
        for (int kh = 0; kh < K; ++kh)
#pragma unroll
          for (int kw = 0; kw < K; ++kw)
            acc[kh * K + kw] = fmaf(g[q], xr[kh * t.tile_cols + q * S + kw], acc[kh * K + kw]);
    }
  }
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
#pragma unroll
  for (int k = 0; k < KK; ++k) {
    float v = acc[k];
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) warp_sums[warp * KK + k] = v;
  }
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x / 32);
  for (int k = threadIdx.x; k < KK; k += blockDim.x) {
    float sum = warp_sums[k];
    for (int wi = 1; wi < warps; ++wi) sum += warp_sums[wi * KK + k];
    if (gridDim.y == 1)
      dw[c * KK + k] = sum;
    else
      partial[(static_cast<int64_t>(part) * C + c) * KK + k] = sum;
  }
}

// dw[i] = the sum of partial[g * count + i] over g = 0, 1, ..., parts - 1, in that order.
__global__ void depthwise_wgrad_sum_kernel(const float* __restrict__ partial, float* __restrict__ dw, int count,
                                           int parts) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  float sum = 0.0f;
  for (int g = 0; g < parts; ++g) sum += partial[static_cast<int64_t>(g) * count + i];
  dw[i] = sum;
}

// The tensors of one launch: forward (a = x, b = w, bias, relu, out = y), backward data (a = dy,
// b = w, out = dx), backward filter (a = x, b = dy, partial, out = dw).
struct Operands {
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;
  bool relu = false;
  float* partial = nullptr;
  float* out = nullptr;
};

template <int K, int S, int PT>
bool launch_kernel(cudaStream_t st, const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& c, const Operands& o) {
  const Tiling t = tiling_of(d, op, c);
  const size_t smem = shared_floats(d, op, c, t) * sizeof(float);
  if (op == ConvOp::Forward) {
    const dim3 grid(static_cast<unsigned>(t.blocks), static_cast<unsigned>(t.bands));
    depthwise_forward_kernel<K, S, PT><<<grid, c.threads, smem, st>>>(o.a, o.b, o.bias, o.out, d, t, c.group, o.relu);
  } else if (op == ConvOp::BackwardData) {
    const dim3 grid(static_cast<unsigned>(t.blocks), static_cast<unsigned>(t.bands));
    depthwise_backward_data_kernel<K, S, PT><<<grid, c.threads, smem, st>>>(o.a, o.b, o.out, d, t, c.group);
  } else {
    const dim3 grid(static_cast<unsigned>(t.blocks), static_cast<unsigned>(t.parts));
    depthwise_wgrad_kernel<K, S, PT><<<grid, c.threads, smem, st>>>(o.a, o.b, o.partial, o.out, d, t, c.group);
    if (t.parts > 1) {
      const int count = static_cast<int>(d.C * K * K);
      depthwise_wgrad_sum_kernel<<<static_cast<unsigned>(ceil_div(count, 128)), 128, 0, st>>>(o.partial, o.out, count,
                                                                                              t.parts);
    }
  }
  return cudaPeekAtLastError() == cudaSuccess;
}

template <int K, int S>
bool launch_pt(cudaStream_t st, const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& c, const Operands& o) {
  switch (c.pt) {
    case 1:
      return launch_kernel<K, S, 1>(st, d, op, c, o);
    case 2:
      return launch_kernel<K, S, 2>(st, d, op, c, o);
    case 4:
      return launch_kernel<K, S, 4>(st, d, op, c, o);
    default:
      return false;
  }
}

template <int K>
bool launch_s(cudaStream_t st, const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& c, const Operands& o) {
  return d.S == 1 ? launch_pt<K, 1>(st, d, op, c, o) : d.S == 2 ? launch_pt<K, 2>(st, d, op, c, o) : false;
}

// Checks `d` and `c` (depthwise_supported, launchable), then launches.
bool launch(cudaStream_t st, const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& c, const Operands& o) {
  if (!depthwise_supported(d) || !launchable(d, op, c) || !o.a || !o.b || !o.out) return false;
  if (op == ConvOp::BackwardFilter && tiling_of(d, op, c).parts > 1 && !o.partial) return false;
  switch (d.K) {
    case 3:
      return launch_s<3>(st, d, op, c, o);
    case 5:
      return launch_s<5>(st, d, op, c, o);
    case 7:
      return launch_s<7>(st, d, op, c, o);
    default:
      return false;
  }
}

bool counted(bool ok) {
  if (ok) g_depthwise_runs.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

// Threads for `items` thread items: 64 up to 64, 128 up to 256, else 256.
int threads_for(int items) { return items <= 64 ? 64 : items <= 256 ? 128 : 256; }

}  // namespace

std::string DepthwiseConfig::str() const {
  return "pt" + std::to_string(pt) + "/bands" + std::to_string(bands) + "/group" + std::to_string(group) + "/t" +
         std::to_string(threads);
}

bool depthwise_supported(const DepthwiseConv& d) {
  const bool sizes = d.N >= 1 && d.C >= 1 && d.H >= 1 && d.W >= 1 && d.OH >= 1 && d.OW >= 1;
  const bool filter = (d.K == 3 || d.K == 5 || d.K == 7) && (d.S == 1 || d.S == 2);
  if (!sizes || !filter) return false;
  // Pads below the filter, and every output's window starts inside x (rows (OH - 1) S - PH on).
  const bool pads = d.PH >= 0 && d.PW >= 0 && d.PH < d.K && d.PW < d.K && (d.OH - 1) * d.S - d.PH <= d.H - 1 &&
                    (d.OW - 1) * d.S - d.PW <= d.W - 1;
  // Offsets inside a plane and plane indices are 32-bit; the tiles' extents too.
  const bool small = d.H * d.W < kInt && d.OH * d.OW < kInt && d.N * d.C < kInt && d.C * d.K * d.K < kInt &&
                     d.H < 65536 && d.W < 65536;
  return pads && small;
}

size_t depthwise_shared_bytes(const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& cfg) {
  return shared_floats(d, op, cfg, tiling_of(d, op, cfg)) * sizeof(float);
}

size_t depthwise_partial_bytes(const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& cfg) {
  if (op != ConvOp::BackwardFilter) return 0;
  const Tiling t = tiling_of(d, op, cfg);
  return t.parts > 1 ? static_cast<size_t>(t.parts) * static_cast<size_t>(d.C * d.K * d.K) * sizeof(float) : 0;
}

std::vector<DepthwiseConfig> depthwise_configs(const DepthwiseConv& d, ConvOp op, size_t workspace_budget) {
  std::vector<DepthwiseConfig> out;
  if (!depthwise_supported(d)) return out;
  // The columns a thread's pt outputs walk along, and the rows cut into bands.
  const int64_t cols = op == ConvOp::BackwardData ? ceil_div(d.W, d.S) : d.OW;
  const int64_t lines = op == ConvOp::BackwardData ? d.H : d.OH;
  for (int pt : {1, 2, 4}) {
    if (pt > 1 && pt / 2 >= cols) continue;  // half or more of a thread's outputs would be padding
    if (op != ConvOp::BackwardFilter) {
      // Bands of one plane, or whole planes a few at a time (the small ones).
      for (int bands : {1, 2, 4, 8, 16, 32})
        for (int group : {1, 2, 4, 8}) {
          if ((group > 1 && bands > 1) || bands > lines || (group > 1 && group / 2 >= d.N * d.C)) continue;
          DepthwiseConfig c{pt, bands, group, kMaxThreads};
          const Tiling t = tiling_of(d, op, c);
          if (t.bands != bands || t.items > 2048) continue;  // as fewer bands; too much work for a block
          // Too little work, where fewer bands or more planes would give more (tiny planes keep one).
          const bool more = bands > 1 || (group < 8 && group * 2 <= d.N * d.C);
          if (t.items < 16 && more) continue;
          c.threads = threads_for(t.items);
          if (launchable(d, op, c)) out.push_back(c);
        }
      continue;
    }
    // Backward filter: the two fewest bands that fit, chunks a block from one to every chunk of
    // a channel (one block a channel, no second launch).
    int band_counts = 0;
    for (int bands : {1, 2, 4, 8, 16, 32}) {
      if (band_counts == 2 || bands > lines) break;
      DepthwiseConfig c{pt, bands, 1, kMaxThreads};
      Tiling t = tiling_of(d, op, c);
      if (t.bands != bands) continue;
      c.threads = threads_for(t.items);
      if (shared_floats(d, op, c, t) * sizeof(float) > kMaxSharedBytes) continue;
      ++band_counts;
      const int64_t chunks = d.N * t.bands;
      int last_parts = 0;
      for (int64_t group : {int64_t{1}, int64_t{4}, int64_t{16}, chunks}) {
        if (group > chunks) continue;
        c.group = static_cast<int>(group);
        t = tiling_of(d, op, c);
        if (t.parts == last_parts) continue;  // the same split as a smaller group
        last_parts = t.parts;
        if (launchable(d, op, c) && depthwise_partial_bytes(d, op, c) <= workspace_budget) out.push_back(c);
      }
    }
  }
  return out;
}

bool depthwise_forward(cudaStream_t stream, const DepthwiseConv& d, const DepthwiseConfig& cfg, const float* x,
                       const float* w, const float* bias, bool relu, float* y) {
  return counted(launch(stream, d, ConvOp::Forward, cfg, Operands{x, w, bias, relu, nullptr, y}));
}

bool depthwise_backward_data(cudaStream_t stream, const DepthwiseConv& d, const DepthwiseConfig& cfg, const float* dy,
                             const float* w, float* dx) {
  return counted(launch(stream, d, ConvOp::BackwardData, cfg, Operands{dy, w, nullptr, false, nullptr, dx}));
}

bool depthwise_backward_filter(cudaStream_t stream, const DepthwiseConv& d, const DepthwiseConfig& cfg, const float* x,
                               const float* dy, float* partial, float* dw) {
  return counted(launch(stream, d, ConvOp::BackwardFilter, cfg, Operands{x, dy, nullptr, false, partial, dw}));
}

std::optional<DepthwiseChoice> choose_depthwise(cudaStream_t stream, const DepthwiseConv& d, ConvOp op, int copies,
                                                size_t workspace_budget, SearchPhases* phases, float bar_ms) {
  const std::vector<DepthwiseConfig> configs = depthwise_configs(d, op, workspace_budget);
  if (configs.empty()) return std::nullopt;
  const size_t n = static_cast<size_t>(std::clamp(copies, 1, 16));
  const size_t x_count = static_cast<size_t>(d.N * d.C * d.H * d.W),
               y_count = static_cast<size_t>(d.N * d.C * d.OH * d.OW);
  const size_t w_count = static_cast<size_t>(d.C * d.K * d.K);
  // Forward: x in, y out; backward data: dy in, dx out; backward filter: x and dy in, dw out.
  const size_t in_count = op == ConvOp::BackwardData ? y_count : x_count;
  const size_t other_count = op == ConvOp::BackwardFilter ? y_count : w_count;
  const size_t out_count = op == ConvOp::Forward ? y_count : op == ConvOp::BackwardData ? x_count : w_count;
  size_t partial_bytes = 0;
  for (const DepthwiseConfig& c : configs) partial_bytes = std::max(partial_bytes, depthwise_partial_bytes(d, op, c));
  DeviceBuffer in(in_count * sizeof(float)), other(other_count * sizeof(float)), bias(static_cast<size_t>(d.C) * 4);
  if (!in.p || !other.p || !bias.p) return std::nullopt;
  in.fill_random(in_count, 1);
  other.fill_random(other_count, 2);
  bias.fill_random(static_cast<size_t>(d.C), 3);
  const auto outs = timing_buffers(n, out_count * sizeof(float));
  const auto partials = timing_buffers(partial_bytes > 0 ? n : 0, partial_bytes);
  if (outs.empty() || (partial_bytes > 0 && partials.empty())) return std::nullopt;
  lap(phases, "buffers");
  Streams side(n);
  lap(phases, "streams");
  return fastest_config(
      stream, side, configs, phases, bar_ms, [&](const DepthwiseConfig& cfg, size_t copy, cudaStream_t s) {
        Operands o{static_cast<const float*>(in.p),   static_cast<const float*>(other.p), nullptr, false, nullptr,
                   static_cast<float*>(outs[copy]->p)};
        if (op == ConvOp::Forward) o.bias = static_cast<const float*>(bias.p);
        if (partial_bytes > 0) o.partial = static_cast<float*>(partials[copy]->p);
        return launch(s, d, op, cfg, o);
      });
}

uint64_t depthwise_runs() { return g_depthwise_runs.load(std::memory_order_relaxed); }

}  // namespace cbt::cuda
