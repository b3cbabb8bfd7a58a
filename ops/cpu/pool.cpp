// MaxPool, AveragePool and GlobalAveragePool CPU kernels, forward and backward.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ops/kernel.h"
#include "ops/pool_geometry.h"

namespace cbt::cpu {
namespace {

// Flat index (within one (H, W) plane) of the maximum of window (oh, ow); -1 if empty.
template <class T>
int64_t window_argmax(const PoolGeom& g, const T* x, int64_t oh, int64_t ow) {
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

// True when every window lies inside the plane (no padding reached, the usual 2x2 / 3x3
// pooling): window_argmax_inside then needs no bounds checks.
bool windows_inside(const PoolGeom& g) {
  return g.PH == 0 && g.PW == 0 && (g.OH - 1) * g.SH + (g.KH - 1) * g.DH < g.H &&
         (g.OW - 1) * g.SW + (g.KW - 1) * g.DW < g.W;
}

// window_argmax for a window inside the plane: the same scan order, so the same (first) maximum.
template <class T>
int64_t window_argmax_inside(const PoolGeom& g, const T* x, int64_t oh, int64_t ow) {
  int64_t best = oh * g.SH * g.W + ow * g.SW;
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    const int64_t row = (oh * g.SH + kh * g.DH) * g.W + ow * g.SW;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t i = row + kw * g.DW;
      if (x[i] > x[best]) best = i;
    }
  }
  return best;
}

// The usual 2x2 window with stride 2, inside the plane: window_argmax_inside unrolled (the same
// scan order and comparisons, so the same maximum).
bool two_by_two(const PoolGeom& g) {
  return windows_inside(g) && g.KH == 2 && g.KW == 2 && g.SH == 2 && g.SW == 2 && g.DH == 1 && g.DW == 1;
}
// Branch-free: the maximum of random data is unpredictable, and mispredicted branches made the
// two pooling scans 29% of a LeNet-5 training step on the CPU.
template <class T>
int64_t argmax_2x2(const T* x, int64_t i, int64_t W) {
  int64_t best = i;
  T v = x[i];
  const int64_t next[3] = {i + 1, i + W, i + W + 1};
  for (int64_t j : next) {
    const int64_t more = x[j] > v;  // 0 or 1: selected by arithmetic, not by a branch
    best += more * (j - best);
    v = std::max(v, x[j]);  // x[j] exactly when x[j] > v
  }
  return best;
}

// Calls f(nc, o, i) with the flat NCHW output index o of every window and the flat in-plane
// index i of its (first) maximum, -1 if the window is empty; planes spread over threads when
// it pays. The one scan that forward and backward share.
template <class T, class F>
void for_each_argmax(const PoolGeom& g, const T* x, F&& f) {
  const int64_t plane = g.H * g.W, oplane = g.OH * g.OW;
  const bool inside = windows_inside(g), fast = two_by_two(g);
#pragma omp parallel for if (g.NC * oplane * g.KH * g.KW > (int64_t{1} << 16))
  for (int64_t nc = 0; nc < g.NC; ++nc) {
    const T* xp = x + nc * plane;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      const int64_t o = nc * oplane + oh * g.OW;
      if (fast) {
        for (int64_t ow = 0; ow < g.OW; ++ow) f(nc, o + ow, argmax_2x2(xp, 2 * oh * g.W + 2 * ow, g.W));
        continue;
      }
      for (int64_t ow = 0; ow < g.OW; ++ow)
        f(nc, o + ow, inside ? window_argmax_inside(g, xp, oh, ow) : window_argmax(g, xp, oh, ow));
    }
  }
}

// x: (N, C, H, W) -> y: (N, C, OH, OW), indices (optional): flat NCHW index of each max
template <class T>
void max_pool_forward(KernelContext& ctx) {
  const Tensor& X = ctx.in(0);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), ctx.out(0).shape());
  const T* x = X.ptr<T>();
  T* y = ctx.out(0).ptr<T>();
  int64_t* ind = ctx.has_out(1) ? ctx.out(1).ptr<int64_t>() : nullptr;
  const int64_t plane = g.H * g.W;
  auto write = [&](int64_t nc, int64_t o, int64_t i) {
    y[o] = i < 0 ? -std::numeric_limits<T>::infinity() : x[nc * plane + i];
    if (ind) ind[o] = i < 0 ? -1 : nc * plane + i;
  };
  for_each_argmax(g, x, write);
}

// dy: (N, C, OH, OW), x: (N, C, H, W) -> dX: each dY goes to its window's (first) maximum
template <class T>
void max_pool_backward(KernelContext& ctx) {
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), dY.shape());
  const T* dy = dY.ptr<T>();
  const T* x = X.ptr<T>();
  T* dx = ctx.out(0).ptr<T>();
  const int64_t plane = g.H * g.W;
  std::fill_n(dx, X.numel(), T(0));
  auto scatter = [&](int64_t nc, int64_t o, int64_t i) {
    if (i >= 0) dx[nc * plane + i] += dy[o];
  };
  for_each_argmax(g, x, scatter);
}

// Divisor of window (oh, ow): positions inside the input, or inside the padded extent when
// count_include_pad is set (a ceil_mode window past the end pads is still clipped).
int64_t window_count(const PoolGeom& g, int64_t oh, int64_t ow, bool include_pad) {
  auto count = [&](int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi) {
    int64_t c = 0;
    for (int64_t i = 0; i < k; ++i) c += (start + i * d >= lo && start + i * d < hi);
    return c;
  };
  int64_t h0 = oh * g.SH - g.PH, w0 = ow * g.SW - g.PW;
  if (include_pad) return count(h0, g.KH, g.DH, -g.PH, g.H + g.PEH) * count(w0, g.KW, g.DW, -g.PW, g.W + g.PEW);
  return count(h0, g.KH, g.DH, 0, g.H) * count(w0, g.KW, g.DW, 0, g.W);
}

// Calls f(flat index in the plane) for every input position of window (oh, ow).
template <class F>
void for_window(const PoolGeom& g, int64_t oh, int64_t ow, F&& f) {
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    int64_t ih = oh * g.SH - g.PH + kh * g.DH;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      int64_t iw = ow * g.SW - g.PW + kw * g.DW;
      if (iw >= 0 && iw < g.W) f(ih * g.W + iw);
    }
  }
}

// x: (N, C, H, W) -> y: (N, C, OH, OW)
template <class T>
void avg_pool_forward(KernelContext& ctx) {
  const Tensor& X = ctx.in(0);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), ctx.out(0).shape());
  bool include_pad = ctx.node.attrs.get_int("count_include_pad", 0) != 0;
  const T* x = X.ptr<T>();
  T* y = ctx.out(0).ptr<T>();
  int64_t plane = g.H * g.W, oplane = g.OH * g.OW;
#pragma omp parallel for if (g.NC * oplane * g.KH * g.KW > (int64_t{1} << 16))
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        T sum = 0;
        for_window(g, oh, ow, [&](int64_t i) { sum += x[nc * plane + i]; });
        int64_t n = window_count(g, oh, ow, include_pad);
        y[nc * oplane + oh * g.OW + ow] = n > 0 ? sum / T(n) : T(0);
      }
}

// dy: (N, C, OH, OW), x: (N, C, H, W) (for its shape) -> dX
template <class T>
void avg_pool_backward(KernelContext& ctx) {
  const Tensor &dY = ctx.in(0), &X = ctx.in(1);
  PoolGeom g = make_pool_geom(ctx.node, X.shape(), dY.shape());
  bool include_pad = ctx.node.attrs.get_int("count_include_pad", 0) != 0;
  const T* dy = dY.ptr<T>();
  T* dx = ctx.out(0).ptr<T>();
  int64_t plane = g.H * g.W, oplane = g.OH * g.OW;
  std::fill_n(dx, X.numel(), T(0));
#pragma omp parallel for if (g.NC * oplane * g.KH * g.KW > (int64_t{1} << 16))
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        int64_t n = window_count(g, oh, ow, include_pad);
        if (n == 0) continue;
        T v = dy[nc * oplane + oh * g.OW + ow] / T(n);
        for_window(g, oh, ow, [&](int64_t i) { dx[nc * plane + i] += v; });
      }
}

// x: (N, C, spatial...) -> y: (N, C, 1, ...)
template <class T>
void global_avg_pool_forward(KernelContext& ctx) {
  const Tensor& X = ctx.in(0);
  int64_t nc = X.dim(0) * X.dim(1), plane = X.numel() / std::max<int64_t>(nc, 1);
  const T* x = X.ptr<T>();
  T* y = ctx.out(0).ptr<T>();
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t i = 0; i < nc; ++i) {
    double acc = 0;
    for (int64_t p = 0; p < plane; ++p) acc += x[i * plane + p];
    y[i] = static_cast<T>(acc / plane);
  }
}

// dy: (N, C, 1, ...), x: (N, C, spatial...) -> dX = dY / plane everywhere
template <class T>
void global_avg_pool_backward(KernelContext& ctx) {
  const Tensor& X = ctx.in(1);
  int64_t nc = X.dim(0) * X.dim(1), plane = X.numel() / std::max<int64_t>(nc, 1);
  const T* dy = ctx.in(0).ptr<T>();
  T* dx = ctx.out(0).ptr<T>();
#pragma omp parallel for if (X.numel() > (int64_t{1} << 16))
  for (int64_t i = 0; i < nc; ++i) std::fill_n(dx + i * plane, plane, dy[i] / T(plane));
}

}  // namespace

CBT_REGISTER_KERNEL("", "MaxPool", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { max_pool_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "MaxPoolGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { max_pool_backward<T>(ctx); });
});
CBT_REGISTER_KERNEL("", "AveragePool", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { avg_pool_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "AveragePoolGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { avg_pool_backward<T>(ctx); });
});
CBT_REGISTER_KERNEL("", "GlobalAveragePool", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { global_avg_pool_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "GlobalAveragePoolGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { global_avg_pool_backward<T>(ctx); });
});

}  // namespace cbt::cpu
