// MaxPool, AveragePool and GlobalAveragePool CUDA kernels, forward and backward. Own kernels
// rather than cuDNN: ceil_mode, dilations, count_include_pad and Indices follow the CPU
// kernels exactly, and the backward ones gather per input element (no atomics) in the CPU's
// summation order, so they are deterministic and bit-identical to the CPU.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ops/cuda/dense_util.cuh"
#include "ops/pool_geometry.h"

namespace cbt::cuda {
namespace {

// Flat index (within one (H, W) plane) of the first maximum of window (oh, ow); -1 if empty.
__device__ int64_t window_argmax(const PoolGeom& g, const float* x, int64_t oh, int64_t ow) {
  int64_t best = -1;
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    int64_t ih = oh * g.SH - g.PH + kh * g.DH;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      int64_t iw = ow * g.SW - g.PW + kw * g.DW;
      if (iw < 0 || iw >= g.W) continue;
      int64_t i = ih * g.W + iw;
      if (best < 0 || x[i] > x[best]) best = i;
    }
  }
  return best;
}

// Divisor of window (oh, ow): positions inside the input, or inside the padded extent when
// count_include_pad is set (a ceil_mode window past the end pads is still clipped).
__device__ int64_t axis_count(int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi) {
  int64_t c = 0;
  for (int64_t i = 0; i < k; ++i) c += (start + i * d >= lo && start + i * d < hi);
  return c;
}
__device__ int64_t window_count(const PoolGeom& g, int64_t oh, int64_t ow, bool include_pad) {
  int64_t h0 = oh * g.SH - g.PH, w0 = ow * g.SW - g.PW;
  if (include_pad)
    return axis_count(h0, g.KH, g.DH, -g.PH, g.H + g.PEH) * axis_count(w0, g.KW, g.DW, -g.PW, g.W + g.PEW);
  return axis_count(h0, g.KH, g.DH, 0, g.H) * axis_count(w0, g.KW, g.DW, 0, g.W);
}

// Output coordinates of the windows that hold input (ih, iw), in increasing order: the CPU's
// order of accumulation. f(oh, ow) is called for each.
template <class F>
__device__ void for_windows_holding(const PoolGeom& g, int64_t ih, int64_t iw, F&& f) {
  for (int64_t kh = g.KH - 1; kh >= 0; --kh) {  // oh grows as kh shrinks
    int64_t th = ih + g.PH - kh * g.DH;
    if (th < 0 || th % g.SH != 0) continue;
    int64_t oh = th / g.SH;
    if (oh >= g.OH) break;
    for (int64_t kw = g.KW - 1; kw >= 0; --kw) {
      int64_t tw = iw + g.PW - kw * g.DW;
      if (tw < 0 || tw % g.SW != 0) continue;
      int64_t ow = tw / g.SW;
      if (ow >= g.OW) break;
      f(oh, ow);
    }
  }
}

// The max-pool backward's bands (max_pool_band_bwd_kernel below).
struct PoolBands {
  int64_t rows = 1, bands = 1, window_rows = 1;  // input rows per band; bands per plane; shared rows
};

// Whether a plane's coordinates, padded, and its flat indices fit the 32-bit kernels (PoolGeom32).
bool plane_fits_32(const PoolGeom& g) {
  const int64_t reach = std::max(
      {g.H + g.PH + g.PEH, g.W + g.PW + g.PEW, g.KH * g.DH, g.KW * g.DW, g.OH * g.SH, g.OW * g.SW, g.OH * g.OW});
  return fits_32(g.H * g.W) && fits_32(4 * reach);
}

// Bands of about 512 inputs, when a band's windows fit in 48 KB of shared memory and a plane's
// coordinates in 32 bits (a 1-D pooling over a very long row does not: the general kernel runs it).
std::optional<PoolBands> pool_bands(const PoolGeom& g) {
  PoolBands b;
  b.rows = std::clamp<int64_t>(512 / std::max<int64_t>(g.W, 1), 1, g.H);
  b.bands = (g.H + b.rows - 1) / b.rows;
  b.window_rows = (b.rows - 1 + (g.KH - 1) * g.DH) / g.SH + 2;
  if (!plane_fits_32(g) || b.window_rows * g.OW * 4 > 48 * 1024 || !fits_32(g.NC * b.bands)) return std::nullopt;
  return b;
}

// Whether the windows tile the input exactly (kernel = stride, no padding or dilation, no
// rest; 2x2 stride-2 pooling of an even plane): each input element lies in one window, which
// the kernels below use, in 32-bit index arithmetic.
bool tiles(const PoolGeom& g) {
  return g.KH == g.SH && g.KW == g.SW && g.DH == 1 && g.DW == 1 && g.PH == 0 && g.PW == 0 && g.PEH == 0 && g.PEW == 0 &&
         g.OH * g.SH == g.H && g.OW * g.SW == g.W && fits_32(g.NC * g.H * g.W);
}

// The flat index of window o's first maximum (as window_argmax picks it) in a tiled plane.
__device__ __forceinline__ uint32_t tiled_argmax(const float* x, uint32_t o, const PoolGeom& g, uint32_t* base_out) {
  const uint32_t OW = static_cast<uint32_t>(g.OW), OH = static_cast<uint32_t>(g.OH);
  const uint32_t W = static_cast<uint32_t>(g.W), KH = static_cast<uint32_t>(g.KH), KW = static_cast<uint32_t>(g.KW);
  uint32_t ow = o % OW, r = o / OW, oh = r % OH, nc = r / OH;
  uint32_t base = nc * static_cast<uint32_t>(g.H) * W + oh * KH * W + ow * KW, best = base;
  float bv = x[base];
  for (uint32_t kh = 0; kh < KH; ++kh)
    for (uint32_t kw = 0; kw < KW; ++kw) {
      uint32_t i = base + kh * W + kw;
      if (x[i] > bv) best = i, bv = x[i];
    }
  *base_out = base;
  return best;
}

__global__ void max_pool_tiled_fwd_kernel(const float* x, float* y, int64_t* ind, PoolGeom g) {
  const uint32_t total = static_cast<uint32_t>(g.NC * g.OH * g.OW);
  for (uint32_t o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += blockDim.x * gridDim.x) {
    uint32_t base;
    uint32_t best = tiled_argmax(x, o, g, &base);
    y[o] = x[best];
    if (ind) ind[o] = best;
  }
}

// Each window writes its whole tile of dX: dY at the first maximum (0 + dY, as the general
// kernel's sum gives it), 0 elsewhere.
__global__ void max_pool_tiled_bwd_kernel(const float* dy, const float* x, float* dx, PoolGeom g) {
  const uint32_t total = static_cast<uint32_t>(g.NC * g.OH * g.OW);
  const uint32_t W = static_cast<uint32_t>(g.W);
  for (uint32_t o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += blockDim.x * gridDim.x) {
    uint32_t base;
    uint32_t best = tiled_argmax(x, o, g, &base);
    for (uint32_t kh = 0; kh < static_cast<uint32_t>(g.KH); ++kh)
      for (uint32_t kw = 0; kw < static_cast<uint32_t>(g.KW); ++kw) {
        uint32_t i = base + kh * W + kw;
        dx[i] = i == best ? 0.0f + dy[o] : 0.0f;
      }
  }
}

// x: (NC, H, W) -> y: (NC, OH, OW), ind (optional): flat NCHW index of each max
__global__ void max_pool_fwd_kernel(const float* x, float* y, int64_t* ind, PoolGeom g) {
  int64_t oplane = g.OH * g.OW, plane = g.H * g.W;
  CBT_GRID_STRIDE_LOOP(o, g.NC * oplane) {
    int64_t nc = o / oplane, ow = o % g.OW, oh = (o / g.OW) % g.OH;
    int64_t i = window_argmax(g, x + nc * plane, oh, ow);
    y[o] = i < 0 ? -INFINITY : x[nc * plane + i];
    if (ind) ind[o] = i < 0 ? -1 : nc * plane + i;
  }
}

// dy: (NC, OH, OW), x: (NC, H, W) -> dX: each dY goes to its window's first maximum
__global__ void max_pool_bwd_kernel(const float* dy, const float* x, float* dx, PoolGeom g) {
  int64_t oplane = g.OH * g.OW, plane = g.H * g.W;
  CBT_GRID_STRIDE_LOOP(t, g.NC * plane) {
    int64_t nc = t / plane, i = t - nc * plane, ih = i / g.W, iw = i % g.W;
    const float* xp = x + nc * plane;
    float acc = 0.0f;
    for_windows_holding(g, ih, iw, [&](int64_t oh, int64_t ow) {
      if (window_argmax(g, xp, oh, ow) == i) acc += dy[nc * oplane + oh * g.OW + ow];
    });
    dx[t] = acc;
  }
}

// The backward in bands of input rows: a block takes rows [ih0, ih0 + R) of one plane, first
// finds the first maximum of every window touching them once (into shared memory), then
// gathers each input's dY from those windows in the order of max_pool_bwd_kernel (the same
// sums, bit for bit). The general kernel finds a window's maximum again for each of its
// inputs (K^2 window reads per input, 81 for GoogLeNet's 3 x 3 stride-1 pooling) and steps
// through the K^2 taps with 64-bit divisions. This one is in 32-bit arithmetic (pool_bands
// checks that a plane fits) and walks each axis's range of windows directly.
struct PoolGeom32 {
  int H, W, KH, KW, SH, SW, DH, DW, PH, PW, OH, OW;
  explicit PoolGeom32(const PoolGeom& g)
      : H(int(g.H)),
        W(int(g.W)),
        KH(int(g.KH)),
        KW(int(g.KW)),
        SH(int(g.SH)),
        SW(int(g.SW)),
        DH(int(g.DH)),
        DW(int(g.DW)),
        PH(int(g.PH)),
        PW(int(g.PW)),
        OH(int(g.OH)),
        OW(int(g.OW)) {}
};

// The first window along an axis (kernel k, stride s, dilation d) that holds padded position
// p: the least o >= 0 with p - o s <= (k - 1) d.
__device__ __forceinline__ int first_window(int p, int k, int s, int d) {
  const int f = p - (k - 1) * d;
  return f <= 0 ? 0 : (f + s - 1) / s;
}

// window_argmax in 32 bits: the flat index of window (oh, ow)'s first maximum, -1 if empty.
__device__ int window_argmax32(const PoolGeom32& g, const float* x, int oh, int ow) {
  int best = -1;
  float top = 0.0f;
  for (int kh = 0; kh < g.KH; ++kh) {
    const int ih = oh * g.SH - g.PH + kh * g.DH;
    if (ih < 0 || ih >= g.H) continue;
    for (int kw = 0; kw < g.KW; ++kw) {
      const int iw = ow * g.SW - g.PW + kw * g.DW;
      if (iw < 0 || iw >= g.W) continue;
      const int i = ih * g.W + iw;
      const float v = x[i];
      if (best < 0 || v > top) best = i, top = v;
    }
  }
  return best;
}

__global__ void max_pool_band_bwd_kernel(const float* dy, const float* x, float* dx, PoolGeom32 g, int rows,
                                         int bands) {
  extern __shared__ int32_t first_max[];  // per window of the band: its first maximum's index in the plane
  const int64_t nc = blockIdx.x / bands;
  const int ih0 = static_cast<int>(blockIdx.x % bands) * rows, ih1 = min(g.H, ih0 + rows);
  const int64_t plane = int64_t{g.H} * g.W, oplane = int64_t{g.OH} * g.OW;
  const float* xp = x + nc * plane;
  const float* dyp = dy + nc * oplane;
  // The windows' rows touching the band: [lo, hi].
  const int lo = first_window(ih0 + g.PH, g.KH, g.SH, g.DH), hi = min(g.OH - 1, (ih1 - 1 + g.PH) / g.SH);
  const int windows = max(0, hi - lo + 1) * g.OW;
  for (int w = threadIdx.x; w < windows; w += blockDim.x)
    first_max[w] = window_argmax32(g, xp, lo + w / g.OW, w % g.OW);
  __syncthreads();
  for (int e = threadIdx.x; e < (ih1 - ih0) * g.W; e += blockDim.x) {
    const int ih = ih0 + e / g.W, iw = e % g.W, i = ih * g.W + iw;
    const int hp = ih + g.PH, wp = iw + g.PW;
    const int oh_end = min(g.OH - 1, hp / g.SH), ow_first = first_window(wp, g.KW, g.SW, g.DW),
              ow_end = min(g.OW - 1, wp / g.SW);
    float acc = 0.0f;
    for (int oh = first_window(hp, g.KH, g.SH, g.DH); oh <= oh_end; ++oh) {
      if (g.DH != 1 && (hp - oh * g.SH) % g.DH != 0) continue;
      for (int ow = ow_first; ow <= ow_end; ++ow) {
        if (g.DW != 1 && (wp - ow * g.SW) % g.DW != 0) continue;
        if (first_max[(oh - lo) * g.OW + ow] == i) acc += dyp[oh * g.OW + ow];
      }
    }
    dx[nc * plane + i] = acc;
  }
}

// max_pool_fwd_kernel in 32-bit arithmetic within a plane (plane_fits_32).
__global__ void max_pool_fwd32_kernel(const float* x, float* y, int64_t* ind, PoolGeom32 g, int64_t total) {
  const int oplane = g.OH * g.OW;
  const int64_t plane = int64_t{g.H} * g.W;
  CBT_GRID_STRIDE_LOOP(o, total) {
    const int64_t nc = o / oplane;
    const int r = static_cast<int>(o - nc * oplane);
    const int i = window_argmax32(g, x + nc * plane, r / g.OW, r % g.OW);
    y[o] = i < 0 ? -INFINITY : x[nc * plane + i];
    if (ind) ind[o] = i < 0 ? -1 : nc * plane + i;
  }
}

// x: (NC, H, W) -> y: (NC, OH, OW)
__global__ void avg_pool_fwd_kernel(const float* x, float* y, PoolGeom g, bool include_pad) {
  int64_t oplane = g.OH * g.OW, plane = g.H * g.W;
  CBT_GRID_STRIDE_LOOP(o, g.NC * oplane) {
    int64_t nc = o / oplane, ow = o % g.OW, oh = (o / g.OW) % g.OH;
    const float* xp = x + nc * plane;
    float sum = 0.0f;
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      int64_t ih = oh * g.SH - g.PH + kh * g.DH;
      if (ih < 0 || ih >= g.H) continue;
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        int64_t iw = ow * g.SW - g.PW + kw * g.DW;
        if (iw >= 0 && iw < g.W) sum += xp[ih * g.W + iw];
      }
    }
    int64_t n = window_count(g, oh, ow, include_pad);
    y[o] = n > 0 ? sum / static_cast<float>(n) : 0.0f;
  }
}

// dy: (NC, OH, OW) -> dX: (NC, H, W), each window's dY spread evenly over its divisor
__global__ void avg_pool_bwd_kernel(const float* dy, float* dx, PoolGeom g, bool include_pad) {
  int64_t oplane = g.OH * g.OW, plane = g.H * g.W;
  CBT_GRID_STRIDE_LOOP(t, g.NC * plane) {
    int64_t nc = t / plane, i = t - nc * plane, ih = i / g.W, iw = i % g.W;
    float acc = 0.0f;
    for_windows_holding(g, ih, iw, [&](int64_t oh, int64_t ow) {
      int64_t n = window_count(g, oh, ow, include_pad);
      if (n > 0) acc += dy[nc * oplane + oh * g.OW + ow] / static_cast<float>(n);
    });
    dx[t] = acc;
  }
}

// x: (NC, plane) -> y: (NC); one warp per plane, summed in double like the CPU.
__global__ void global_avg_pool_fwd_kernel(const float* x, float* y, int64_t nc, int64_t plane) {
  int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  int lane = threadIdx.x & 31;
  for (int64_t r = warp; r < nc; r += warps) {  // uniform per warp: shuffles stay converged
    double acc = 0;
    for (int64_t p = lane; p < plane; p += 32) acc += x[r * plane + p];
    acc = warp_sum(acc);
    if (lane == 0) y[r] = static_cast<float>(acc / double(plane));
  }
}

// dy: (NC) -> dX: (NC, plane) = dY / plane everywhere
__global__ void global_avg_pool_bwd_kernel(const float* dy, float* dx, int64_t plane, int64_t total) {
  CBT_GRID_STRIDE_LOOP(t, total) dx[t] = dy[t / plane] / static_cast<float>(plane);
}

void check_float(const Tensor& t, const Node& node) { check_float32(t, node, "pools float32 tensors"); }

void max_pool_fwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), ctx.out(0).shape());
  int64_t* ind = ctx.has_out(1) ? static_cast<int64_t*>(ctx.out(1).data()) : nullptr;
  if (tiles(g))
    max_pool_tiled_fwd_kernel<<<blocks_for(ctx.out(0).numel()), kThreads, 0, cc.stream>>>(fptr(X), fptr_out(ctx.out(0)),
                                                                                          ind, g);
  else if (plane_fits_32(g))
    max_pool_fwd32_kernel<<<blocks_for(ctx.out(0).numel()), kThreads, 0, cc.stream>>>(
        fptr(X), fptr_out(ctx.out(0)), ind, PoolGeom32(g), ctx.out(0).numel());
  else
    max_pool_fwd_kernel<<<blocks_for(ctx.out(0).numel()), kThreads, 0, cc.stream>>>(fptr(X), fptr_out(ctx.out(0)), ind,
                                                                                    g);
  CBT_CUDA_CHECK_LAUNCH();
}

void max_pool_bwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  check_float(X, ctx.node);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), dY.shape());
  if (tiles(g))
    max_pool_tiled_bwd_kernel<<<blocks_for(dY.numel()), kThreads, 0, cc.stream>>>(fptr(dY), fptr(X),
                                                                                  fptr_out(ctx.out(0)), g);
  else if (std::optional<PoolBands> b = pool_bands(g)) {
    const int threads = static_cast<int>(std::min<int64_t>(kThreads, (b->rows * g.W + 31) / 32 * 32));
    max_pool_band_bwd_kernel<<<static_cast<unsigned>(g.NC * b->bands), threads, b->window_rows * g.OW * 4, cc.stream>>>(
        fptr(dY), fptr(X), fptr_out(ctx.out(0)), PoolGeom32(g), static_cast<int>(b->rows), static_cast<int>(b->bands));
  } else
    max_pool_bwd_kernel<<<blocks_for(X.numel()), kThreads, 0, cc.stream>>>(fptr(dY), fptr(X), fptr_out(ctx.out(0)), g);
  CBT_CUDA_CHECK_LAUNCH();
}

void avg_pool_fwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), ctx.out(0).shape());
  bool include_pad = ctx.node.attrs.get_int("count_include_pad", 0) != 0;
  avg_pool_fwd_kernel<<<blocks_for(ctx.out(0).numel()), kThreads, 0, cc.stream>>>(fptr(X), fptr_out(ctx.out(0)), g,
                                                                                  include_pad);
  CBT_CUDA_CHECK_LAUNCH();
}

void avg_pool_bwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  check_float(X, ctx.node);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), dY.shape());
  bool include_pad = ctx.node.attrs.get_int("count_include_pad", 0) != 0;
  avg_pool_bwd_kernel<<<blocks_for(X.numel()), kThreads, 0, cc.stream>>>(fptr(dY), fptr_out(ctx.out(0)), g,
                                                                         include_pad);
  CBT_CUDA_CHECK_LAUNCH();
}

// x: (N, C, spatial...) -> y: (N, C, 1, ...)
void global_avg_pool_fwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  check_float(X, ctx.node);
  int64_t nc = X.dim(0) * X.dim(1), plane = X.numel() / std::max<int64_t>(nc, 1);
  global_avg_pool_fwd_kernel<<<blocks_for(nc * 32), kThreads, 0, cc.stream>>>(fptr(X), fptr_out(ctx.out(0)), nc, plane);
  CBT_CUDA_CHECK_LAUNCH();
}

// dy: (N, C, 1, ...), x: (N, C, spatial...) -> dX
void global_avg_pool_bwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(1);
  check_float(X, ctx.node);
  int64_t nc = X.dim(0) * X.dim(1), plane = X.numel() / std::max<int64_t>(nc, 1);
  global_avg_pool_bwd_kernel<<<blocks_for(X.numel()), kThreads, 0, cc.stream>>>(fptr(ctx.in(0)), fptr_out(ctx.out(0)),
                                                                                plane, X.numel());
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace

CBT_REGISTER_KERNEL("", "MaxPool", DeviceKind::CUDA, max_pool_fwd);
CBT_REGISTER_KERNEL(kCbtDomain, "MaxPoolGrad", DeviceKind::CUDA, max_pool_bwd);
CBT_REGISTER_KERNEL("", "AveragePool", DeviceKind::CUDA, avg_pool_fwd);
CBT_REGISTER_KERNEL(kCbtDomain, "AveragePoolGrad", DeviceKind::CUDA, avg_pool_bwd);
CBT_REGISTER_KERNEL("", "GlobalAveragePool", DeviceKind::CUDA, global_avg_pool_fwd);
CBT_REGISTER_KERNEL(kCbtDomain, "GlobalAveragePoolGrad", DeviceKind::CUDA, global_avg_pool_bwd);

}  // namespace cbt::cuda
