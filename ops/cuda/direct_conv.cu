// Direct stride-1 convolutions (and the backward data of stride-2 ones as four stride-1
// phases): one block per image, band of output rows and split of the output channels, holding
// the band's input rows (zero-padded) and the split's filters in shared memory; each thread
// sums MT output channels at PT outputs of a column, in a fixed order. The backward filter
// sums per image group and output-row split, then adds those sums in a fixed order. The
// searches that time every configuration are here too.
#include "ops/cuda/direct_conv.h"

#include <cuda_pipeline_primitives.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "ops/cuda/config_search.h"
#include "ops/cuda/copy_timing.h"
#include "ops/cuda/cuda_context.h"
#include "ops/cuda/fused_relu.cuh"

namespace cbt::cuda {
namespace {

std::atomic<uint64_t> g_direct_runs{0};

// Shared memory a block may take: beyond 48 KB each kernel opts in (at its first launch).
constexpr size_t kMaxSharedBytes = 96 * 1024;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether `kernel` may take kMaxSharedBytes of dynamic shared memory on the current device. The
// attribute belongs to the device's context, so the kernel opts in once per device, at its first
// launch there (a single opt-in left every other GPU of the process at 48 KB, where launches
// that need more fail and their configurations lose every timing).
template <auto kernel>
bool opted_in_to_max_shared() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  static std::mutex m;
  static std::map<int, bool> opted;  // per device
  std::lock_guard lock(m);
  auto it = opted.find(device);
  if (it == opted.end())
    it = opted
             .emplace(device, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(kMaxSharedBytes)) == cudaSuccess)
             .first;
  return it->second;
}

// A configuration's launch geometry.
struct Split {
  int rows = 1;     // output rows a block computes (the last band may have fewer)
  int bands = 1;    // blocks along the rows
  int mb = 1;       // output channels a block computes, a multiple of mt
  int splits = 1;   // blocks along the channels
  int chunks = 1;   // chunks of pt rows in a band
  int cols = 1;     // output columns
  int cols_in = 1;  // floats a held input row takes: at least lead + OW + K - 1 - PW
  int lead = 0;     // where image column 0 lies in a held row (its padding before it)
  int rows_in = 1;  // input rows held: chunks * pt + K - 1 (zeros beyond the image)
  int taps = 1;     // floats before the input rows in shared memory: C * K * K * mb, rounded up to 4
  int64_t items(int mt) const { return static_cast<int64_t>(mb / mt) * chunks * cols; }  // threads' work
};

Split split_of(const DirectConv& d, const DirectConfig& c) {
  Split s;
  s.rows = static_cast<int>(ceil_div(d.OH, c.bands));
  s.bands = static_cast<int>(ceil_div(d.OH, s.rows));
  s.mb = static_cast<int>(ceil_div(ceil_div(d.M, c.splits), c.mt) * c.mt);
  s.splits = static_cast<int>(ceil_div(d.M, s.mb));
  s.chunks = static_cast<int>(ceil_div(s.rows, c.pt));
  s.cols = static_cast<int>(d.OW);
  // Rows of a width that is a multiple of 4 are held 16-byte aligned, from column 0 on, so that
  // they are copied 4 floats at a time (load_padded_rows); other rows as they are read. A row
  // is read from image column -PW to OW + K - 2 - PW (W - 1 + PW with symmetric pads; W with
  // the phases' trailing pad).
  const int W = static_cast<int>(d.W), PW = static_cast<int>(d.PW);
  const int span = static_cast<int>(d.OW + d.K - 1) - PW;  // image columns 0 on that a row reads
  s.lead = W % 4 == 0 ? (PW + 3) / 4 * 4 : PW;
  s.cols_in = W % 4 == 0 ? (s.lead + span + 3) / 4 * 4 : PW + span;
  s.rows_in = s.chunks * c.pt + static_cast<int>(d.K) - 1;
  s.taps = static_cast<int>((d.C * d.K * d.K * s.mb + 3) / 4 * 4);
  return s;
}

size_t shared_bytes(const DirectConv& d, const Split& s) {
  return static_cast<size_t>(s.taps + d.C * s.rows_in * s.cols_in) * sizeof(float);
}

// N floats (1 or 4; for 4 both addresses 16-byte aligned) from global to shared memory as an
// asynchronous copy (cp.async on sm_80 and later: no register holds them, so a thread has all
// its copies in flight at once), or zeros when `valid` is false (`src` must then still be a
// global address; nothing is read from it). A block waits for its copies with finish_copies().
template <int N = 1>
__device__ __forceinline__ void copy_or_zero(float* dst, const float* src, bool valid) {
  __pipeline_memcpy_async(dst, src, N * sizeof(float), valid ? 0 : N * sizeof(float));
}

// Waits for this thread's copies, then for the block's threads (the copies of every thread are
// visible after the barrier).
__device__ __forceinline__ void finish_copies() {
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
}

// A flat index i = hi * n + lo held as its two digits while i advances by a fixed step (a copy
// loop's stride): a copy loop divides twice per thread, not twice per element (the divisions by
// values known only at run time were most of a block's instructions before its sums began).
struct Digits {
  int hi, lo, n, dhi, dlo;
  __device__ Digits(int i, int step, int base)
      : hi(i / base), lo(i % base), n(base), dhi(step / base), dlo(step % base) {}
  // i += step; returns how far hi moved.
  __device__ int next() {
    int moved = dhi;
    lo += dlo;
    if (lo >= n) lo -= n, ++moved;
    hi += moved;
    return moved;
  }
};

// outer * m + inner advanced by `by` (inner < m before and after).
__device__ __forceinline__ void carry(int& outer, int& inner, int by, int m) {
  inner += by;
  if (inner < m) return;
  if (inner < 2 * m) {
    inner -= m, ++outer;
  } else {
    outer += inner / m, inner %= m;
  }
}

// dst[c * plane + j * pitch + col] = src[c * stride + j * width + col] for c < count, j < lines,
// col < width: `lines` runs of `width` floats from each of `count` planes, every one inside the
// tensor (no padding, so no bound checks); offsets from src below 2^31. A warp takes a run, its
// lanes 32 floats apart along it (4 bytes a copy), so a thread finds its place once a run, not
// once a float. The tiled backward filter's rows of x and of dY. Asynchronous copies:
// finish_copies() before reading.
__device__ void copy_lines(const float* __restrict__ src, int count, int stride, int lines, int width, float* dst,
                           int plane, int pitch) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  int c = warp / lines, j = warp - c * lines;  // run = c * lines + j, blockDim.x / 32 runs a step
  for (; c < count; carry(c, j, static_cast<int>(blockDim.x / 32), lines)) {
    const float* from = src + (c * stride + j * width);
    float* to = dst + (c * plane + j * pitch);
    for (int col = lane; col < width; col += 32) copy_or_zero(to + col, from + col, true);
  }
}

// The filter row (or column) that phase a of dX's rows (columns) takes at offset u of its
// window of two rows of dY (stride 2, pads 1): row 1 at u = 0 for the even rows; rows 2 and 0
// at u = 0 and 1 for the odd ones; -1 for none (a zero tap).
__device__ __forceinline__ int phase_tap(int a, int u) { return a == 0 ? (u == 0 ? 1 : -1) : (u == 0 ? 2 : 0); }

// taps[(c * K * K + k) * mb + m - m0] = the tap of output channel m in [m0, m0 + mb) and input
// channel c at k = kh * K + kw, zero for m >= M. The filters are read in their own order
// (coalesced): forward w (M, C, K, K); turned w (C, M, K, K) at the flipped k. With phases
// (K = 2), channel m = (2 a + b) C' + c' (C' = M / 4) takes w (C, C', 3, 3) at row
// phase_tap(a, kh) and column phase_tap(b, kw), zero where either is none. Asynchronous
// copies: finish_copies() before reading.
template <int K>
__device__ void load_block_taps(const float* __restrict__ w, const DirectConv& d, int m0, int mb, float* taps) {
  constexpr int KK = K * K;
  const int C = static_cast<int>(d.C), M = static_cast<int>(d.M);
  if constexpr (K == 2) {
    Digits at(threadIdx.x, blockDim.x, KK);  // i = (c * mb + m) * KK + k
    int c = at.hi / mb, m = at.hi - c * mb;
    for (; at.hi < C * mb; carry(c, m, at.next(), mb)) {
      const int k = at.lo, mm = m0 + m, phase = mm / (M / 4);
      const int kh = phase_tap(phase >> 1, k / K), kw = phase_tap(phase & 1, k % K);
      const bool in = mm < M && kh >= 0 && kw >= 0;
      const int64_t from = ((static_cast<int64_t>(c) * (M / 4) + mm % (M / 4)) * 3 + kh) * 3 + kw;
      copy_or_zero(taps + (c * KK + k) * mb + m, in ? w + from : w, in);
    }
    return;
  }
  Digits at(threadIdx.x, blockDim.x, KK);  // i = q * KK + k
  const int B = d.turned ? mb : C;         // q = a * B + b: (c, m) turned, (m, c) forward
  int a = at.hi / B, b = at.hi - a * B;
  for (; at.hi < C * mb; carry(a, b, at.next(), B)) {  // i < C * mb * KK
    const int k = at.lo, c = d.turned ? a : b, m = d.turned ? b : a;
    const bool in = m0 + m < M;
    const int64_t from =
        d.turned ? (static_cast<int64_t>(c) * M + m0 + m) * KK + k : (static_cast<int64_t>(m0 + m) * C + c) * KK + k;
    copy_or_zero(taps + (c * KK + (d.turned ? KK - 1 - k : k)) * mb + m, in ? w + from : w, in);
  }
}

// xs[c * plane + row * cols_in + col] = image[c][h0 + row][col - lead] for rows_in rows and
// cols_in columns, zero outside the image (the padding): the input rows a block convolves.
// image: (C, H, W), at most 2^31 floats; plane: at least rows_in * cols_in (more keeps channels
// off each other's banks). Where image, xs, plane, cols_in, lead and W allow 16-byte copies, each
// copies 4 floats, which lie all inside the image or all outside. Asynchronous copies:
// finish_copies() before reading.
__device__ void load_padded_rows(const float* __restrict__ image, const DirectConv& d, int h0, int rows_in, int cols_in,
                                 int lead, float* xs, int plane = 0) {
  const int C = static_cast<int>(d.C), H = static_cast<int>(d.H), W = static_cast<int>(d.W);
  const int area = rows_in * cols_in;
  if (plane == 0) plane = area;
  const bool by4 = (plane | cols_in | lead | W) % 4 == 0 &&
                   (reinterpret_cast<uintptr_t>(image) | reinterpret_cast<uintptr_t>(xs)) % 16 == 0;
  const int width = by4 ? 4 : 1;
  Digits at(threadIdx.x, blockDim.x, cols_in / width);  // i = line * pieces a row + piece
  int c = at.hi / rows_in, row = at.hi - c * rows_in;   // line = c * rows_in + row
  for (; at.hi < C * rows_in; carry(c, row, at.next(), rows_in)) {
    const int h = h0 + row, col = at.lo * width, x = col - lead;
    const bool in = h >= 0 && h < H && x >= 0 && x < W;
    const float* from = in ? image + ((c * H + h) * W + x) : image;
    float* to = xs + (c * plane + row * cols_in + col);
    if (by4)
      copy_or_zero<4>(to, from, in);
    else
      copy_or_zero(to, from, in);
  }
}

// MT taps from shared memory (16-byte aligned when MT is a multiple of 4).
template <int MT>
__device__ __forceinline__ void load_taps(const float* t, float (&v)[MT]) {
  if constexpr (MT % 4 == 0) {
#pragma unroll
    for (int j = 0; j < MT; j += 4) {
      const float4 q = *reinterpret_cast<const float4*>(t + j);
      v[j] = q.x, v[j + 1] = q.y, v[j + 2] = q.z, v[j + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < MT; ++j) v[j] = t[j];
  }
}

// in: (N, C, H, W), w: see DirectConv, bias: (M) or null -> out: (N, M, OH, OW); with phases
// (K = 2) out is dX, each channel written to its phase (no bias, no Relu), and a thread whose
// channels all lie in even-row (even-column) phases skips their window row (column) 1, whose
// taps are zeros (7 of the 16 taps of a channel's four phases).
// Block (band, n, split) computes output rows [band * rows, +rows) of channels
// [split * mb, +mb) of image n. Shared memory: the block's taps as [(c, kh, kw)][m] (zeros
// beyond M), then its input rows as [c][row][col] (zeros in the padding). Each thread sums
// MT channels at PT outputs of a column: per (c, kw) it reads PT + K - 1 inputs and K * MT
// taps for K * PT * MT products; the threads of a warp read adjacent columns (no bank
// conflicts). Every output sums over (c, kw, kh) in that order.
template <int K, int MT, int PT>
__global__ void __launch_bounds__(256)
    direct_conv_kernel(const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ bias,
                       float* __restrict__ out, DirectConv d, Split s, bool relu) {
  extern __shared__ __align__(16) float smem[];
  const int C = static_cast<int>(d.C), M = static_cast<int>(d.M), OW = static_cast<int>(d.OW);
  const int H = static_cast<int>(d.H), W = static_cast<int>(d.W), mb = s.mb;
  const int oh0 = blockIdx.x * s.rows, m0 = blockIdx.z * mb;
  const int rows = min(s.rows, static_cast<int>(d.OH) - oh0);
  float* taps = smem;
  float* xs = smem + s.taps;  // 16-byte aligned
  load_block_taps<K>(w, d, m0, mb, taps);
  load_padded_rows(in + static_cast<int64_t>(blockIdx.y) * C * H * W, d, oh0 - static_cast<int>(d.PH), s.rows_in,
                   s.cols_in, s.lead, xs);
  finish_copies();
  const int per_group = s.chunks * OW, groups = mb / MT;
  const int64_t image_out = K == 2 ? (M / 4) * d.XH * d.XW : M * d.OH * OW;
  float* plane0 = out + static_cast<int64_t>(blockIdx.y) * image_out;
  if constexpr (K != 2) plane0 += static_cast<int64_t>(m0) * d.OH * OW + static_cast<int64_t>(oh0) * OW;
  for (int item = threadIdx.x; item < groups * per_group; item += blockDim.x) {
    const int g = item / per_group, rem = item % per_group, row0 = (rem / OW) * PT, col = rem % OW;
    float acc[PT][MT];
#pragma unroll
    for (int p = 0; p < PT; ++p)
#pragma unroll
      for (int j = 0; j < MT; ++j) acc[p][j] = 0.0f;
    bool skip_row = false, skip_col = false;  // with phases: window row (column) 1 has only zero taps
    if constexpr (K == 2) {
      const int lo = m0 + g * MT, hi = max(lo, min(lo + MT, M) - 1), first = lo / (M / 4), last = hi / (M / 4);
      skip_row = last < 2;                         // phases (0, 0) and (0, 1): a = 0
      skip_col = first == last && first % 2 == 0;  // one phase, b = 0
    }
    for (int c = 0; c < C; ++c) {
      const float* x = xs + (c * s.rows_in + row0) * s.cols_in + col + s.lead - static_cast<int>(d.PW);
      const float* t = taps + c * K * K * mb + g * MT;
#pragma unroll
      for (int kw = 0; kw < K; ++kw) {
        if (K == 2 && kw == 1 && skip_col) continue;
        float xv[PT + K - 1];
#pragma unroll
        for (int q = 0; q < PT + K - 1; ++q) xv[q] = x[q * s.cols_in + kw];
#pragma unroll
        for (int kh = 0; kh < K; ++kh) {
          if (K == 2 && kh == 1 && skip_row) continue;
          float tv[MT];
          load_taps<MT>(t + (kh * K + kw) * mb, tv);
#pragma unroll
          for (int p = 0; p < PT; ++p)
#pragma unroll
            for (int j = 0; j < MT; ++j) acc[p][j] = fmaf(xv[p + kh], tv[j], acc[p][j]);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < MT; ++j) {
      const int m = g * MT + j;
      if (m0 + m >= M) break;
      if constexpr (K == 2) {  // phase (a, b) of dX channel c': rows 2 oh + a, columns 2 ow + b
        const int mm = m0 + m, phase = mm / (M / 4), a = phase >> 1, x = 2 * col + (phase & 1);
        const int XH = static_cast<int>(d.XH), XW = static_cast<int>(d.XW);
        float* plane = plane0 + static_cast<int64_t>(mm % (M / 4)) * XH * XW;
#pragma unroll
        for (int p = 0; p < PT; ++p) {
          const int h = 2 * (oh0 + row0 + p) + a;
          if (row0 + p >= rows || h >= XH) break;
          if (x < XW) plane[h * XW + x] = acc[p][j];
        }
        continue;
      }
      const float b = bias ? bias[m0 + m] : 0.0f;
#pragma unroll
      for (int p = 0; p < PT; ++p) {
        if (row0 + p >= rows) break;
        const float v = bias ? acc[p][j] + b : acc[p][j];
        plane0[static_cast<int64_t>(m) * d.OH * OW + (row0 + p) * OW + col] = relu ? relu_of(v) : v;
      }
    }
  }
}

template <int K, int MT, int PT>
bool launch_kernel(cudaStream_t st, const DirectConv& d, const DirectConfig& c, const float* in, const float* w,
                   const float* bias, bool relu, float* out) {
  if (!opted_in_to_max_shared<direct_conv_kernel<K, MT, PT>>()) return false;
  const Split s = split_of(d, c);
  const dim3 grid(static_cast<unsigned>(s.bands), static_cast<unsigned>(d.N), static_cast<unsigned>(s.splits));
  direct_conv_kernel<K, MT, PT><<<grid, c.threads, shared_bytes(d, s), st>>>(in, w, bias, out, d, s, relu);
  return cudaPeekAtLastError() == cudaSuccess;
}

template <int K, int MT>
bool launch_pt(cudaStream_t st, const DirectConv& d, const DirectConfig& c, const float* in, const float* w,
               const float* bias, bool relu, float* out) {
  switch (c.pt) {
    case 1:
      return launch_kernel<K, MT, 1>(st, d, c, in, w, bias, relu, out);
    case 2:
      return launch_kernel<K, MT, 2>(st, d, c, in, w, bias, relu, out);
    case 4:
      return launch_kernel<K, MT, 4>(st, d, c, in, w, bias, relu, out);
    default:
      return false;
  }
}

template <int K>
bool launch_k(cudaStream_t st, const DirectConv& d, const DirectConfig& c, const float* in, const float* w,
              const float* bias, bool relu, float* out) {
  switch (c.mt) {
    case 1:
      return launch_pt<K, 1>(st, d, c, in, w, bias, relu, out);
    case 2:
      return launch_pt<K, 2>(st, d, c, in, w, bias, relu, out);
    case 4:
      return launch_pt<K, 4>(st, d, c, in, w, bias, relu, out);
    case 8:
      return launch_pt<K, 8>(st, d, c, in, w, bias, relu, out);
    case 16:
      return launch_pt<K, 16>(st, d, c, in, w, bias, relu, out);
    default:
      return false;
  }
}

bool launch(cudaStream_t stream, const DirectConv& d, const DirectConfig& cfg, const float* in, const float* w,
            const float* bias, bool relu, float* out) {
  if (d.phases) return !bias && !relu && d.K == 2 && launch_k<2>(stream, d, cfg, in, w, bias, relu, out);
  return d.K == 3   ? launch_k<3>(stream, d, cfg, in, w, bias, relu, out)
         : d.K == 5 ? launch_k<5>(stream, d, cfg, in, w, bias, relu, out)
                    : false;
}

// Backward filter. Block (y, g) sums, for rows [y * rb, (y + 1) * rb) of the list of (m, c, kh)
// and images [g * ipb, +ipb), its share of dW[m][c][kh][kw] over every kw: thread (row, z) takes
// the output rows oh = z, z + Z, ... and slides a window of K inputs along each. Its sums go to
// partial[(g * Z + z) * M*C*K*K + dW index]; wgrad_sum_kernel adds them in that order.
struct WgradSplit {
  int rb = 1;                    // (m, c, kh) rows a block takes
  int blocks = 1;                // blocks along those rows
  int groups = 1;                // blocks along the images
  int m_span = 1;                // output channels whose dY planes a block holds
  int rows_in = 1, cols_in = 1;  // input rows and columns held: OH + K - 1, OW + K - 1
};

WgradSplit wgrad_split_of(const DirectConv& d, const WgradConfig& c) {
  WgradSplit s;
  const int64_t rows = d.M * d.C * d.K;
  s.rb = c.threads / c.z;
  s.blocks = static_cast<int>(ceil_div(rows, s.rb));
  s.groups = static_cast<int>(ceil_div(d.N, c.ipb));
  // The rows of a block span at most this many output channels.
  s.m_span = static_cast<int>(std::min<int64_t>(d.M, ceil_div(s.rb - 1, d.C * d.K) + 1));
  s.rows_in = static_cast<int>(d.OH + d.K - 1);
  s.cols_in = static_cast<int>(d.OW + d.K - 1);
  return s;
}

size_t wgrad_shared_bytes(const DirectConv& d, const WgradSplit& s) {
  return static_cast<size_t>(d.C * s.rows_in * s.cols_in + s.m_span * d.OH * d.OW) * sizeof(float);
}

// x: (N, C, H, W), dy: (N, M, OH, OW) -> partial (see above).
template <int K>
__global__ void __launch_bounds__(256)
    wgrad_partial_kernel(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ partial,
                         DirectConv d, WgradSplit s, int z_count, int ipb) {
  extern __shared__ __align__(16) float smem[];
  const int C = static_cast<int>(d.C), M = static_cast<int>(d.M), H = static_cast<int>(d.H), W = static_cast<int>(d.W);
  const int OH = static_cast<int>(d.OH), OW = static_cast<int>(d.OW);
  const int row0 = blockIdx.x * s.rb, rows = M * C * K, m0 = row0 / (C * K);
  const int m_end = min(M, m0 + s.m_span);
  float* xs = smem;                              // [c][row][col], zeros in the padding
  float* ys = smem + C * s.rows_in * s.cols_in;  // [m - m0][oh][ow]
  const int local = threadIdx.x % s.rb, z = threadIdx.x / s.rb, row = row0 + local;
  const bool active = row < rows && z < z_count;
  const int m = active ? row / (C * K) : m0, c = active ? (row / K) % C : 0, kh = active ? row % K : 0;
  float acc[K];
#pragma unroll
  for (int kw = 0; kw < K; ++kw) acc[kw] = 0.0f;
  const int n_end = min(static_cast<int>(d.N), (static_cast<int>(blockIdx.y) + 1) * ipb);
  for (int n = blockIdx.y * ipb; n < n_end; ++n) {
    __syncthreads();  // the previous image's values are no longer read
    load_padded_rows(x + static_cast<int64_t>(n) * C * H * W, d, -static_cast<int>(d.PH), s.rows_in, s.cols_in,
                     static_cast<int>(d.PW), xs);
    const float* grad = dy + (static_cast<int64_t>(n) * M + m0) * OH * OW;
    for (int i = threadIdx.x; i < (m_end - m0) * OH * OW; i += blockDim.x) copy_or_zero(ys + i, grad + i, true);
    finish_copies();
    if (!active) continue;
    for (int oh = z; oh < OH; oh += z_count) {
      const float* yr = ys + ((m - m0) * OH + oh) * OW;
      const float* xr = xs + (c * s.rows_in + oh + kh) * s.cols_in;
      float win[K];
#pragma unroll
      for (int kw = 0; kw < K - 1; ++kw) win[kw + 1] = xr[kw];
      for (int ow = 0; ow < OW; ++ow) {
#pragma unroll
        for (int kw = 0; kw < K - 1; ++kw) win[kw] = win[kw + 1];
        win[K - 1] = xr[ow + K - 1];
        const float g = yr[ow];
#pragma unroll
        for (int kw = 0; kw < K; ++kw) acc[kw] = fmaf(g, win[kw], acc[kw]);
      }
    }
  }
  if (!active) return;
  float* out = partial + (static_cast<int64_t>(blockIdx.y) * z_count + z) * rows * K + static_cast<int64_t>(row) * K;
#pragma unroll
  for (int kw = 0; kw < K; ++kw) out[kw] = acc[kw];
}

// dw[p] = the sum of partial[i * count + p] over i = 0, 1, ..., parts - 1, in that order.
__global__ void wgrad_sum_kernel(const float* __restrict__ partial, float* __restrict__ dw, int count, int parts) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= count) return;
  float sum = 0.0f;
  for (int i = 0; i < parts; ++i) sum += partial[static_cast<int64_t>(i) * count + p];
  dw[p] = sum;
}

// Enqueues wgrad_sum_kernel over dW of `d` from `parts` partial sums; whether the launches so
// far succeeded.
bool sum_partials(cudaStream_t st, const DirectConv& d, const float* partial, float* dw, int64_t parts) {
  const int count = static_cast<int>(d.M * d.C * d.K * d.K);
  wgrad_sum_kernel<<<static_cast<unsigned>(ceil_div(count, 128)), 128, 0, st>>>(partial, dw, count,
                                                                                static_cast<int>(parts));
  return cudaPeekAtLastError() == cudaSuccess;
}

// The tiled backward filter (WgradConfig::mt > 0). Thread task t = (m / MT) * (C / CT) + c / CT
// sums dW of MT output channels and CT input channels (MT * CT * K * K sums in registers): along
// each output row it slides a K x K window of every input channel one column a step, so that a
// step reads CT * K inputs and MT gradients from shared memory for MT * CT * K * K products. A
// block of `threads` takes tpb consecutive tasks; its threads / tpb thread groups z take the
// rows z, z + Z, ... of its band of rb output rows of each of its `ipb` images, then add their
// sums in the order of z. Block (x, y) writes partial[y * M*C*K*K + dW index], y = the image
// group * bands + the band; wgrad_sum_kernel adds them in that order.
struct TileSplit {
  int tasks = 1, tpb = 1, z = 1, blocks = 1;  // thread tasks, tasks a block, thread groups, blocks of tasks
  int bands = 1, groups = 1;                  // blocks along the rows and along the images
  int m_span = 1;                             // output channels whose dY rows a block holds
  int rows_in = 1, cols_in = 1;               // input rows and columns held: rb + K - 1, OW + K - 1
  int x_plane = 1, y_plane = 1;               // floats between channels in shared memory (odd)
  int64_t parts() const { return static_cast<int64_t>(bands) * groups; }
};

// The next number of floats from `n` that is 1 modulo 32: channels a thread apart fall on
// different banks.
int odd_plane(int n) { return n + ((33 - n % 32) % 32); }

TileSplit tile_split_of(const DirectConv& d, const WgradConfig& c) {
  TileSplit s;
  const int cg = static_cast<int>(d.C / c.ct);
  s.tasks = static_cast<int>(d.M / c.mt) * cg;
  s.tpb = std::min(s.tasks, c.threads);
  s.z = c.threads / s.tpb;
  s.blocks = static_cast<int>(ceil_div(s.tasks, s.tpb));
  s.bands = static_cast<int>(ceil_div(d.OH, c.rb));
  s.groups = static_cast<int>(ceil_div(d.N, c.ipb));
  s.m_span = static_cast<int>(std::min<int64_t>(d.M, (ceil_div(s.tpb - 1, cg) + 1) * c.mt));
  s.rows_in = c.rb + static_cast<int>(d.K) - 1;
  s.cols_in = static_cast<int>(d.OW + d.K - 1);
  s.x_plane = odd_plane(s.rows_in * s.cols_in);
  s.y_plane = odd_plane(c.rb * static_cast<int>(d.OW));
  return s;
}

size_t tile_shared_bytes(const DirectConv& d, const WgradConfig& c, const TileSplit& s) {
  const size_t rows = static_cast<size_t>(d.C * s.x_plane + s.m_span * s.y_plane);
  const size_t sums = s.z > 1 ? static_cast<size_t>(c.threads * c.mt * c.ct * d.K * d.K) : 0;  // adding the groups
  return std::max(rows, sums) * sizeof(float);
}

template <int K, int MT, int CT>
__global__ void __launch_bounds__(256)
    wgrad_tile_kernel(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ partial,
                      DirectConv d, TileSplit s, int rb, int ipb) {
  constexpr int A = MT * CT * K * K;  // sums a thread holds
  extern __shared__ __align__(16) float smem[];
  const int C = static_cast<int>(d.C), M = static_cast<int>(d.M), H = static_cast<int>(d.H), W = static_cast<int>(d.W);
  const int OH = static_cast<int>(d.OH), OW = static_cast<int>(d.OW), cg = C / CT;
  const int local = threadIdx.x % s.tpb, zi = threadIdx.x / s.tpb, task = blockIdx.x * s.tpb + local;
  const bool active = task < s.tasks && zi < s.z;
  const int m = active ? (task / cg) * MT : 0, c = active ? (task % cg) * CT : 0;
  const int m0 = (blockIdx.x * s.tpb / cg) * MT, m_end = min(M, m0 + s.m_span);
  const int band = blockIdx.y % s.bands, group = blockIdx.y / s.bands;
  const int oh0 = band * rb, rows = min(rb, OH - oh0);
  float* xs = smem;                  // [c][row][col] at x_plane per channel, zeros in the padding
  float* ys = smem + C * s.x_plane;  // [m - m0][row][ow] at y_plane per channel
  float acc[MT][CT][K][K] = {};
  // The held input rows r in [r_lo, r_lo + held) lie inside the image (input row h0 + r), at
  // columns PW to PW + W - 1; the rest is padding, the same for every image of the block: zeroed
  // once here, so that each image copies only the inside (no bound checks).
  const int h0 = oh0 - static_cast<int>(d.PH), r_lo = max(0, -h0), held = min(s.rows_in, H - h0) - r_lo;
  for (int i = threadIdx.x; i < C * s.x_plane; i += blockDim.x) xs[i] = 0.f;
  const int n_end = min(static_cast<int>(d.N), (group + 1) * ipb);
  for (int n = group * ipb; n < n_end; ++n) {
    __syncthreads();  // the previous image's rows are no longer read (the zeros are written)
    if (held > 0)
      copy_lines(x + (static_cast<int64_t>(n) * C * H + h0 + r_lo) * W, C, H * W, held, W,
                 xs + r_lo * s.cols_in + static_cast<int>(d.PW), s.x_plane, s.cols_in);
    // dY's band of each output channel: rows * OW floats in a run
    copy_lines(dy + ((static_cast<int64_t>(n) * M + m0) * OH + oh0) * OW, m_end - m0, OH * OW, 1, rows * OW, ys,
               s.y_plane, 0);
    finish_copies();
    if (!active) continue;
    for (int r = zi; r < rows; r += s.z) {
      const float* xr = xs + c * s.x_plane + r * s.cols_in;
      const float* yr = ys + (m - m0) * s.y_plane + r * OW;
      float win[CT][K][K];
#pragma unroll
      for (int j = 0; j < CT; ++j)
#pragma unroll
        for (int kh = 0; kh < K; ++kh)
#pragma unroll
          for (int kw = 0; kw < K - 1; ++kw) win[j][kh][kw + 1] = xr[j * s.x_plane + kh * s.cols_in + kw];
#pragma unroll 3
      for (int ow = 0; ow < OW; ++ow) {
#pragma unroll
        for (int j = 0; j < CT; ++j)
#pragma unroll
          for (int kh = 0; kh < K; ++kh) {
#pragma unroll
            for (int kw = 0; kw < K - 1; ++kw) win[j][kh][kw] = win[j][kh][kw + 1];
            win[j][kh][K - 1] = xr[j * s.x_plane + kh * s.cols_in + ow + K - 1];
          }
        float g[MT];
#pragma unroll
        for (int i = 0; i < MT; ++i) g[i] = yr[i * s.y_plane + ow];
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int j = 0; j < CT; ++j)
#pragma unroll
            for (int kh = 0; kh < K; ++kh)
#pragma unroll
              for (int kw = 0; kw < K; ++kw) acc[i][j][kh][kw] = fmaf(g[i], win[j][kh][kw], acc[i][j][kh][kw]);
      }
    }
  }
  float* flat = &acc[0][0][0][0];
  float* out = partial + static_cast<int64_t>(blockIdx.y) * M * C * K * K;
  if (s.z > 1) {
    // Group z's sums go to smem[(z * tpb + local) * A + a]; then every thread of the block adds
    // some of them over the groups in the order of z and writes them (one warp added them all
    // before, the others idle; same order, same sums).
    __syncthreads();
    if (active)
#pragma unroll
      for (int a = 0; a < A; ++a) smem[(zi * s.tpb + local) * A + a] = flat[a];
    __syncthreads();
    for (int e = threadIdx.x; e < s.tpb * A; e += blockDim.x) {
      const int l = e / A, a = e - l * A, t = blockIdx.x * s.tpb + l;
      if (t >= s.tasks) break;
      float sum = smem[e];
      for (int z = 1; z < s.z; ++z) sum += smem[z * s.tpb * A + e];
      const int i = a / (CT * K * K), j = (a / (K * K)) % CT, k = a % (K * K);
      out[((static_cast<int64_t>((t / cg) * MT + i) * C + (t % cg) * CT + j) * K * K) + k] = sum;
    }
    return;
  }
  if (!active) return;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < CT; ++j)
#pragma unroll
      for (int k = 0; k < K * K; ++k)
        out[((static_cast<int64_t>(m + i) * C + c + j) * K * K) + k] = flat[((i * CT + j) * K * K) + k];
}

template <int K, int MT, int CT>
bool launch_wgrad_tile(cudaStream_t st, const DirectConv& d, const WgradConfig& c, const float* x, const float* dy,
                       float* partial, float* dw) {
  if (!opted_in_to_max_shared<wgrad_tile_kernel<K, MT, CT>>()) return false;
  const TileSplit s = tile_split_of(d, c);
  wgrad_tile_kernel<K, MT, CT><<<dim3(static_cast<unsigned>(s.blocks), static_cast<unsigned>(s.parts())), c.threads,
                                 tile_shared_bytes(d, c, s), st>>>(x, dy, partial, d, s, c.rb, c.ipb);
  return sum_partials(st, d, partial, dw, s.parts());
}

// The tiles compiled: (MT, CT) = (1, 1), (2, 1), (2, 2) and (4, 2) for 3 x 3 filters; (1, 1) and
// (2, 1) for 5 x 5 ones.
bool tile_compiled(int K, int mt, int ct) {
  if (K == 3) return (mt == 1 && ct == 1) || (mt == 2 && ct <= 2) || (mt == 4 && ct == 2);
  return K == 5 && ct == 1 && (mt == 1 || mt == 2);
}

bool launch_tile(cudaStream_t st, const DirectConv& d, const WgradConfig& c, const float* x, const float* dy,
                 float* partial, float* dw) {
  if (!tile_compiled(static_cast<int>(d.K), c.mt, c.ct)) return false;
  if (d.K == 5)
    return c.mt == 1 ? launch_wgrad_tile<5, 1, 1>(st, d, c, x, dy, partial, dw)
                     : launch_wgrad_tile<5, 2, 1>(st, d, c, x, dy, partial, dw);
  if (c.mt == 1) return launch_wgrad_tile<3, 1, 1>(st, d, c, x, dy, partial, dw);
  if (c.mt == 4) return launch_wgrad_tile<3, 4, 2>(st, d, c, x, dy, partial, dw);
  return c.ct == 1 ? launch_wgrad_tile<3, 2, 1>(st, d, c, x, dy, partial, dw)
                   : launch_wgrad_tile<3, 2, 2>(st, d, c, x, dy, partial, dw);
}

template <int K>
bool launch_wgrad_k(cudaStream_t st, const DirectConv& d, const WgradConfig& c, const float* x, const float* dy,
                    float* partial, float* dw) {
  if (!opted_in_to_max_shared<wgrad_partial_kernel<K>>()) return false;
  const WgradSplit s = wgrad_split_of(d, c);
  wgrad_partial_kernel<K><<<dim3(static_cast<unsigned>(s.blocks), static_cast<unsigned>(s.groups)), c.threads,
                            wgrad_shared_bytes(d, s), st>>>(x, dy, partial, d, s, c.z, c.ipb);
  return sum_partials(st, d, partial, dw, static_cast<int64_t>(s.groups) * c.z);
}

bool launch_wgrad(cudaStream_t st, const DirectConv& d, const WgradConfig& c, const float* x, const float* dy,
                  float* partial, float* dw) {
  if (c.mt > 0) return launch_tile(st, d, c, x, dy, partial, dw);
  return d.K == 3   ? launch_wgrad_k<3>(st, d, c, x, dy, partial, dw)
         : d.K == 5 ? launch_wgrad_k<5>(st, d, c, x, dy, partial, dw)
                    : false;
}

}  // namespace

std::string DirectConfig::str() const {
  return "mt" + std::to_string(mt) + "/pt" + std::to_string(pt) + "/bands" + std::to_string(bands) + "/splits" +
         std::to_string(splits) + "/t" + std::to_string(threads);
}

size_t direct_shared_bytes(const DirectConv& d, const DirectConfig& c) { return shared_bytes(d, split_of(d, c)); }

DirectConv stride2_data_form(int64_t N, int64_t C_x, int64_t XH, int64_t XW, int64_t C) {
  DirectConv d;
  d.N = N, d.C = C, d.H = d.OH = (XH + 1) / 2, d.W = d.OW = (XW + 1) / 2, d.M = 4 * C_x, d.K = 2;
  d.turned = d.phases = true, d.XH = XH, d.XW = XW;
  return d;
}

int64_t direct_filter_floats(const DirectConv& d) { return d.phases ? d.C * (d.M / 4) * 9 : d.M * d.C * d.K * d.K; }

int64_t direct_out_floats(const DirectConv& d) {
  return d.phases ? d.N * (d.M / 4) * d.XH * d.XW : d.N * d.M * d.OH * d.OW;
}

bool direct_supported(const DirectConv& d) {
  constexpr int64_t kInt = int64_t{1} << 31;  // an image's offsets are 32-bit
  const bool common = d.N >= 1 && d.N <= 65535 && d.C >= 1 && d.M >= 1 && d.M <= 65535 && d.H >= 1 && d.W >= 1 &&
                      d.PH >= 0 && d.PW >= 0 && d.PH < d.K && d.PW < d.K && d.C * d.K * d.K <= 4096 &&
                      d.C * d.H * d.W < kInt;
  const bool shapes = d.phases
                          ? d.turned && d.K == 2 && d.PH == 0 && d.PW == 0 && d.M % 4 == 0 && d.XH >= 1 && d.XW >= 1 &&
                                d.H == (d.XH + 1) / 2 && d.W == (d.XW + 1) / 2 && d.OH == d.H && d.OW == d.W &&
                                d.M / 4 * d.XH * d.XW < kInt
                          : (d.K == 3 || d.K == 5) && d.XH == 0 && d.XW == 0 && d.OH == d.H + 2 * d.PH - d.K + 1 &&
                                d.OW == d.W + 2 * d.PW - d.K + 1 && d.OH >= 1 && d.OW >= 1 && d.M * d.OH * d.OW < kInt;
  if (!common || !shapes) return false;
  // The smallest footprint: one channel and one output a thread, eight bands, eight splits.
  return shared_bytes(d, split_of(d, DirectConfig{1, 1, 8, 8, 128})) <= kMaxSharedBytes;
}

std::vector<DirectConfig> direct_configs(const DirectConv& d) {
  std::vector<DirectConfig> out;
  if (!direct_supported(d)) return out;
  for (int mt : {1, 2, 4, 8, 16}) {
    if (mt > 1 && mt / 2 >= d.M) continue;  // half or more of its sums would be padding
    for (int pt : {1, 2, 4}) {
      if (pt > 1 && pt / 2 >= d.OH) continue;
      for (int splits : {1, 2, 4, 8}) {
        for (int bands : {1, 2, 4, 8}) {
          DirectConfig c{mt, pt, bands, splits, 256};
          const Split s = split_of(d, c);
          if (s.bands != bands || s.splits != splits) continue;  // the same as a smaller count
          const int64_t items = s.items(mt);
          if (items < 32 || items > 1024 || shared_bytes(d, s) > kMaxSharedBytes) continue;
          c.threads = items <= 128 ? 128 : 256;
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

bool direct_conv(cudaStream_t stream, const DirectConv& d, const DirectConfig& cfg, const float* in, const float* w,
                 const float* bias, bool relu, float* out) {
  const bool ok = launch(stream, d, cfg, in, w, bias, relu, out);
  if (ok) g_direct_runs.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

std::optional<DirectChoice> choose_direct(cudaStream_t stream, const DirectConv& d, int copies, SearchPhases* phases,
                                          float bar_ms) {
  const std::vector<DirectConfig> configs = direct_configs(d);
  if (configs.empty()) return std::nullopt;
  const size_t n = static_cast<size_t>(std::clamp(copies, 1, 16));
  const size_t in_count = static_cast<size_t>(d.N * d.C * d.H * d.W);
  const size_t w_count = static_cast<size_t>(direct_filter_floats(d)),
               out_count = static_cast<size_t>(direct_out_floats(d));
  DeviceBuffer in(in_count * sizeof(float)), w(w_count * sizeof(float)), bias(static_cast<size_t>(d.M) * sizeof(float));
  if (!in.p || !w.p || !bias.p) return std::nullopt;
  in.fill_random(in_count, 1);
  w.fill_random(w_count, 2);
  bias.fill_random(static_cast<size_t>(d.M), 3);
  const auto outs = timing_buffers(n, out_count * sizeof(float));
  if (outs.empty()) return std::nullopt;
  lap(phases, "buffers");
  Streams side(n);
  lap(phases, "streams");
  return fastest_config(stream, side, configs, phases, bar_ms,
                        [&](const DirectConfig& cfg, size_t copy, cudaStream_t s) {
                          return launch(s, d, cfg, static_cast<const float*>(in.p), static_cast<const float*>(w.p),
                                        d.phases ? nullptr : static_cast<const float*>(bias.p), false,
                                        static_cast<float*>(outs[copy]->p));
                        });
}

std::string WgradConfig::str() const {
  if (mt > 0)
    return "tile/m" + std::to_string(mt) + "c" + std::to_string(ct) + "/rb" + std::to_string(rb) + "/ipb" +
           std::to_string(ipb) + "/t" + std::to_string(threads);
  return "t" + std::to_string(threads) + "/z" + std::to_string(z) + "/ipb" + std::to_string(ipb);
}

size_t direct_wgrad_partial_bytes(const DirectConv& d, const WgradConfig& c) {
  const int64_t parts = c.mt > 0 ? tile_split_of(d, c).parts() : wgrad_split_of(d, c).groups * c.z;
  return static_cast<size_t>(parts * d.M * d.C * d.K * d.K) * sizeof(float);
}

std::vector<WgradConfig> direct_wgrad_configs(const DirectConv& d, size_t workspace_budget) {
  std::vector<WgradConfig> out;
  if (d.turned || !direct_supported(d)) return out;
  for (int threads : {64, 128, 256})
    for (int z : {1, 2, 4, 8}) {
      if (z > d.OH || threads / z > 2 * d.M * d.C * d.K) continue;  // no split row without work
      for (int ipb : {1, 2, 4, 8}) {
        const WgradConfig c{threads, z, ipb};
        if (ipb > d.N || wgrad_shared_bytes(d, wgrad_split_of(d, c)) > kMaxSharedBytes ||
            direct_wgrad_partial_bytes(d, c) > workspace_budget)
          continue;
        out.push_back(c);
      }
    }
  // The tiled kernel: every compiled tile that divides the channels, bands of 4, 8, 16 rows
  // or the whole image, 1, 2 or 4 images a block.
  constexpr std::pair<int, int> kTiles[] = {{1, 1}, {2, 1}, {2, 2}, {4, 2}};
  for (const auto& [mt, ct] : kTiles) {
    if (!tile_compiled(static_cast<int>(d.K), mt, ct) || d.M % mt != 0 || d.C % ct != 0) continue;
    for (int threads : {128, 256})
      for (int rb : {4, 8, 16, 0}) {
        if (rb == 0)
          rb = static_cast<int>(d.OH);
        else if (rb >= d.OH)
          continue;  // the whole image, which rb = 0 stands for
        for (int ipb : {1, 2, 4}) {
          WgradConfig c{threads, 1, ipb};
          c.mt = mt, c.ct = ct, c.rb = rb;
          if (ipb > d.N) continue;
          const TileSplit s = tile_split_of(d, c);
          if (s.tpb < 32 && threads > 128) continue;  // more groups than rows to share
          if (s.parts() > 65535) continue;            // more blocks along y than a grid takes
          if (tile_shared_bytes(d, c, s) > kMaxSharedBytes || direct_wgrad_partial_bytes(d, c) > workspace_budget)
            continue;
          out.push_back(c);
        }
      }
  }
  return out;
}

bool direct_wgrad(cudaStream_t stream, const DirectConv& d, const WgradConfig& cfg, const float* x, const float* dy,
                  float* partial, float* dw) {
  const bool ok = launch_wgrad(stream, d, cfg, x, dy, partial, dw);
  if (ok) g_direct_runs.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

std::optional<WgradChoice> choose_direct_wgrad(cudaStream_t stream, const DirectConv& d, int copies,
                                               size_t workspace_budget, SearchPhases* phases, float bar_ms) {
  const std::vector<WgradConfig> configs = direct_wgrad_configs(d, workspace_budget);
  if (configs.empty()) return std::nullopt;
  const size_t n = static_cast<size_t>(std::clamp(copies, 1, 16));
  const size_t x_count = static_cast<size_t>(d.N * d.C * d.H * d.W),
               dy_count = static_cast<size_t>(d.N * d.M * d.OH * d.OW);
  const size_t dw_count = static_cast<size_t>(d.M * d.C * d.K * d.K);
  size_t partial_bytes = 0;
  for (const WgradConfig& c : configs) partial_bytes = std::max(partial_bytes, direct_wgrad_partial_bytes(d, c));
  DeviceBuffer x(x_count * sizeof(float)), dy(dy_count * sizeof(float));
  if (!x.p || !dy.p) return std::nullopt;
  x.fill_random(x_count, 1);
  dy.fill_random(dy_count, 3);
  const auto outs = timing_buffers(n, dw_count * sizeof(float)), partials = timing_buffers(n, partial_bytes);
  if (outs.empty() || partials.empty()) return std::nullopt;
  lap(phases, "buffers");
  Streams side(n);
  lap(phases, "streams");
  return fastest_config(
      stream, side, configs, phases, bar_ms, [&](const WgradConfig& cfg, size_t copy, cudaStream_t s) {
        return launch_wgrad(s, d, cfg, static_cast<const float*>(x.p), static_cast<const float*>(dy.p),
                            static_cast<float*>(partials[copy]->p), static_cast<float*>(outs[copy]->p));
      });
}

DirectMode direct_mode() {
  const char* v = std::getenv("CBT_CONV_DIRECT");
  const std::string s = v ? v : "";
  return s == "off" ? DirectMode::Off : s == "always" ? DirectMode::Always : DirectMode::Timed;
}

uint64_t direct_runs() { return g_direct_runs.load(std::memory_order_relaxed); }

}  // namespace cbt::cuda
