// Conv and ConvTranspose CPU kernels, forward and backward: im2col/col2im + gemm over chunks
// of the batch, so that one gemm sees many images at once. OpenBLAS threads the gemms;
// OpenMP only spreads the images of im2col/col2im, outside any gemm.
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/cpu/blas.h"
#include "ops/cpu/fused_relu.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// One convolution in 2-D form (a 1-D one has H = KH = OH = 1): an "image" of C channels
// (H, W) and a grid (OH, OW) of kernel positions over it. Conv reads X as the image and
// writes Y on the grid; ConvTranspose reads X on the grid and scatters into Y, the image.
struct Geom {
  int64_t C = 0, H = 1, W = 1, KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PH = 0, PW = 0, OH = 1, OW = 1;
  int64_t rows() const { return C * KH * KW; }
  int64_t img() const { return H * W; }
  int64_t cols() const { return OH * OW; }
};

Geom make_geom(const Node& node, int64_t channels, const Shape& img, const Shape& grid, const Shape& w,
               bool transpose) {
  size_t nd = w.size() - 2;
  std::vector<int64_t> ones(nd, 1), zeros(nd, 0);
  auto s = node.attrs.get_ints("strides", ones);
  auto d = node.attrs.get_ints("dilations", ones);
  auto pads = node.attrs.get_ints("pads", std::vector<int64_t>(2 * nd, 0));
  auto out_pad = transpose ? node.attrs.get_ints("output_padding", zeros) : zeros;
  std::string ap = node.attrs.get_string("auto_pad", "NOTSET");
  bool derive = ap == "SAME_UPPER" || ap == "SAME_LOWER" || (transpose && node.attrs.has("output_shape"));
  std::vector<int64_t> pb(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    int64_t eff = (w[2 + i] - 1) * d[i] + 1;
    if (derive) {
      // The padding that makes the grid and the image sizes (already inferred) agree.
      int64_t total = std::max<int64_t>(0, (grid[2 + i] - 1) * s[i] + out_pad[i] + eff - img[2 + i]);
      pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (ap != "VALID") {
      pb[i] = pads[i];
    }
  }
  Geom g;
  g.C = channels;
  size_t o = nd == 2 ? 1 : 0;  // index of the W axis among the spatial dims
  if (nd == 2) {
    g.H = img[2], g.KH = w[2], g.SH = s[0], g.DH = d[0], g.PH = pb[0], g.OH = grid[2];
  }
  g.W = img[2 + o], g.KW = w[2 + o], g.SW = s[o], g.DW = d[o], g.PW = pb[o], g.OW = grid[2 + o];
  return g;
}

// The output columns [lo, hi) whose input column ow * SW - PW + kw * DW lies inside [0, W):
// outside them a kernel column reads padding.
struct ColumnRange {
  int64_t lo, hi, off;  // input column of output column ow: ow * SW + off
};
inline ColumnRange column_range(const Geom& g, int64_t kw) {
  const int64_t off = kw * g.DW - g.PW;
  // ow * SW + off >= 0  <=>  ow >= ceil(-off / SW);  ow * SW + off <= W - 1  <=>  ow <= floor((W - 1 - off) / SW)
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t lo = std::clamp<int64_t>(ceil_div(-off, g.SW), 0, g.OW);
  const int64_t hi = std::clamp<int64_t>(floor_div(g.W - 1 - off, g.SW) + 1, lo, g.OW);
  return {lo, hi, off};
}

// col: (C*KH*KW, ld), columns [0, OH*OW) of it; x: (C, H, W).
template <class T>
void im2col(const Geom& g, const T* x, T* col, int64_t ld) {
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        T* dst = col + ((c * g.KH + kh) * g.KW + kw) * ld;
        const ColumnRange r = column_range(g, kw);
        for (int64_t oh = 0; oh < g.OH; ++oh, dst += g.OW) {
          int64_t ih = oh * g.SH - g.PH + kh * g.DH;
          if (ih < 0 || ih >= g.H) {
            std::fill(dst, dst + g.OW, T(0));
            continue;
          }
          const T* row = x + (c * g.H + ih) * g.W;
          std::fill(dst, dst + r.lo, T(0));
          if (g.SW == 1) {
            std::copy(row + r.lo + r.off, row + r.hi + r.off, dst + r.lo);
          } else {
            for (int64_t ow = r.lo; ow < r.hi; ++ow) dst[ow] = row[ow * g.SW + r.off];
          }
          std::fill(dst + r.hi, dst + g.OW, T(0));
        }
      }
}

// Adds col: (C*KH*KW, ld) back into x: (C, H, W) (the adjoint of im2col).
template <class T>
void col2im(const Geom& g, const T* col, int64_t ld, T* x) {
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        const T* src = col + ((c * g.KH + kh) * g.KW + kw) * ld;
        const ColumnRange r = column_range(g, kw);
        for (int64_t oh = 0; oh < g.OH; ++oh, src += g.OW) {
          int64_t ih = oh * g.SH - g.PH + kh * g.DH;
          if (ih < 0 || ih >= g.H) continue;
          T* row = x + (c * g.H + ih) * g.W;
          for (int64_t ow = r.lo; ow < r.hi; ++ow) row[ow * g.SW + r.off] += src[ow];
        }
      }
}

// im2col / col2im of images [0, b) of a chunk, one image per thread when it pays (each image
// has its own columns and its own output: no two threads write the same value).
constexpr int64_t kParallelValues = int64_t{1} << 15;
template <class T>
void im2col_images(const Geom& g, const T* x, int64_t image_stride, int64_t b, T* col, int64_t P, int64_t ld) {
#pragma omp parallel for schedule(static) if (b > 1 && b * g.rows() * P >= kParallelValues)
  for (int64_t i = 0; i < b; ++i) im2col(g, x + i * image_stride, col + i * P, ld);
}
template <class T>
void col2im_images(const Geom& g, const T* col, int64_t P, int64_t ld, int64_t b, T* x, int64_t image_stride) {
#pragma omp parallel for schedule(static) if (b > 1 && b * g.rows() * P >= kParallelValues)
  for (int64_t i = 0; i < b; ++i) col2im(g, col + i * P, ld, x + i * image_stride);
}

// Reused per-thread buffers: im2col matrices are the only large temporaries.
template <class T>
T* scratch(int slot, int64_t n) {
  thread_local std::vector<T> buf[3];
  if (static_cast<int64_t>(buf[slot].size()) < n) buf[slot].resize(n);
  return buf[slot].data();
}

// Images per chunk: as many as keep one im2col matrix under 16 MB of floats, or under 256 KB
// when the kernels run on one thread: the matrix then stays in the core's L2 cache between
// im2col and the product (LeNet-5 b=32 on one thread 10.9k -> 13.3k img/s, a 1x28x28 ResNet-20
// 170 -> 197 img/s). With more threads the small chunks leave the product too little to share
// (LeNet-5 on two threads 14.1k -> 4.7-6.1k img/s), so they keep the large ones.
int64_t chunk_size(int64_t n, int64_t per_image) {
  const int64_t budget = omp_get_max_threads() == 1 ? int64_t{1} << 16 : int64_t{1} << 22;
  return std::clamp<int64_t>(budget / std::max<int64_t>(per_image, 1), 1, std::max<int64_t>(n, 1));
}

// Channel block [c0, c0+cn) of images [n0, n0+b) of t: (N, ctot, P) <-> m: (cn, b*P).
template <class T>
void pack(const T* t, int64_t ctot, int64_t c0, int64_t cn, int64_t P, int64_t n0, int64_t b, T* m) {
  for (int64_t i = 0; i < b; ++i)
    for (int64_t c = 0; c < cn; ++c) std::copy_n(t + ((n0 + i) * ctot + c0 + c) * P, P, m + c * b * P + i * P);
}
template <class T>
void unpack(const T* m, int64_t ctot, int64_t c0, int64_t cn, int64_t P, int64_t n0, int64_t b, T* t) {
  for (int64_t i = 0; i < b; ++i)
    for (int64_t c = 0; c < cn; ++c) std::copy_n(m + c * b * P + i * P, P, t + ((n0 + i) * ctot + c0 + c) * P);
}

// y: (N, M, P) += bias: (M)
template <class T>
void add_bias(T* y, const T* bias, int64_t N, int64_t M, int64_t P) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      T* row = y + (n * M + m) * P;
      for (int64_t p = 0; p < P; ++p) row[p] += bias[m];
    }
}

// dB: (M) = sum of dY: (N, M, P) over N and P.
template <class T>
void bias_grad(const T* dy, int64_t N, int64_t M, int64_t P, T* db) {
  for (int64_t m = 0; m < M; ++m) {
    double acc = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* row = dy + (n * M + m) * P;
      for (int64_t p = 0; p < P; ++p) acc += row[p];
    }
    db[m] = static_cast<T>(acc);
  }
}

bool needed(const KernelContext& ctx, size_t k) {
  auto mask = ctx.node.attrs.get_ints("outputs_needed", {1, 1, 1});
  return ctx.has_out(k) && (k >= mask.size() || mask[k] != 0);
}

// x: (N, C, spatial), w: (M, C/G, k...), b: (M) -> y: (N, M, out spatial); with relu=1
// (fused, graph/fusion.h) y = max(that, 0).
template <class T>
void conv_forward(KernelContext& ctx) {
  const Tensor &X = ctx.in(0), &Wt = ctx.in(1);
  Tensor& Y = ctx.out(0);
  int64_t G = ctx.node.attrs.get_int("group", 1), N = X.dim(0), C = X.dim(1), M = Wt.dim(0);
  int64_t Mg = M / G;
  Geom g = make_geom(ctx.node, C / G, X.shape(), Y.shape(), Wt.shape(), false);
  const T* x = X.ptr<T>();
  const T* w = Wt.ptr<T>();
  T* y = Y.ptr<T>();
  int64_t K = g.rows(), P = g.cols(), chunk = chunk_size(N, K * P);
  T* col = scratch<T>(0, K * chunk * P);
  T* tmp = scratch<T>(1, Mg * chunk * P);
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    int64_t b = std::min(chunk, N - n0), ld = b * P;
    for (int64_t grp = 0; grp < G; ++grp) {
      im2col_images(g, x + (n0 * C + grp * g.C) * g.img(), C * g.img(), b, col, P, ld);
      gemm(Trans::No, Trans::No, Mg, ld, K, T(1), w + grp * Mg * K, K, col, ld, T(0), tmp, ld);
      unpack(tmp, M, grp * Mg, Mg, P, n0, b, y);
    }
  }
  if (ctx.has_in(2)) add_bias(y, ctx.in(2).ptr<T>(), N, M, P);
  if (ctx.node.attrs.get_int("relu", 0)) relu_in_place(y, Y.numel());
}

// dy: (N, M, OH, OW), x: (N, C, H, W), w: (M, C/G, KH, KW) -> dX, dW, dB: (M); with relu=1,
// dy where the fused output y (input 3) > 0.
template <class T>
void conv_backward(KernelContext& ctx) {
  const Tensor &dY = ctx.in(0), &X = ctx.in(1), &Wt = ctx.in(2);
  int64_t G = ctx.node.attrs.get_int("group", 1), N = X.dim(0), C = X.dim(1), M = Wt.dim(0);
  int64_t Mg = M / G;
  Geom g = make_geom(ctx.node, C / G, X.shape(), dY.shape(), Wt.shape(), false);
  bool want_dx = needed(ctx, 0), want_dw = needed(ctx, 1);
  const T* dy = fused_relu_grad<T>(ctx, 3, 3);
  if (needed(ctx, 2)) bias_grad(dy, N, M, g.cols(), ctx.out(2).ptr<T>());
  if (!want_dx && !want_dw) return;
  const T* x = X.ptr<T>();
  const T* w = Wt.ptr<T>();
  T* dx = want_dx ? ctx.out(0).ptr<T>() : nullptr;
  T* dw = want_dw ? ctx.out(1).ptr<T>() : nullptr;
  if (dx) std::fill_n(dx, ctx.out(0).numel(), T(0));
  if (dw) std::fill_n(dw, ctx.out(1).numel(), T(0));
  int64_t K = g.rows(), P = g.cols(), chunk = chunk_size(N, K * P);
  T* col = scratch<T>(0, K * chunk * P);
  T* tmp = scratch<T>(1, Mg * chunk * P);
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    int64_t b = std::min(chunk, N - n0), ld = b * P;
    for (int64_t grp = 0; grp < G; ++grp) {
      pack(dy, M, grp * Mg, Mg, P, n0, b, tmp);
      if (dw) {
        im2col_images(g, x + (n0 * C + grp * g.C) * g.img(), C * g.img(), b, col, P, ld);
        gemm(Trans::No, Trans::Yes, Mg, K, ld, T(1), tmp, ld, col, ld, T(1), dw + grp * Mg * K, K);
      }
      if (dx) {
        gemm(Trans::Yes, Trans::No, K, ld, Mg, T(1), w + grp * Mg * K, K, tmp, ld, T(0), col, ld);
        col2im_images(g, col, P, ld, b, dx + (n0 * C + grp * g.C) * g.img(), C * g.img());
      }
    }
  }
}

// x: (N, C, in spatial), w: (C, M/G, k...), b: (M) -> y: (N, M, out spatial)
template <class T>
void conv_transpose_forward(KernelContext& ctx) {
  const Tensor &X = ctx.in(0), &Wt = ctx.in(1);
  Tensor& Y = ctx.out(0);
  int64_t G = ctx.node.attrs.get_int("group", 1), N = X.dim(0), C = X.dim(1), M = Y.dim(1);
  int64_t Cg = C / G;
  Geom g = make_geom(ctx.node, M / G, Y.shape(), X.shape(), Wt.shape(), true);
  const T* x = X.ptr<T>();
  const T* w = Wt.ptr<T>();
  T* y = Y.ptr<T>();
  std::fill_n(y, Y.numel(), T(0));
  int64_t K = g.rows(), P = g.cols(), chunk = chunk_size(N, K * P);
  T* col = scratch<T>(0, K * chunk * P);
  T* tmp = scratch<T>(1, Cg * chunk * P);
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    int64_t b = std::min(chunk, N - n0), ld = b * P;
    for (int64_t grp = 0; grp < G; ++grp) {
      pack(x, C, grp * Cg, Cg, P, n0, b, tmp);
      gemm(Trans::Yes, Trans::No, K, ld, Cg, T(1), w + grp * Cg * K, K, tmp, ld, T(0), col, ld);
      col2im_images(g, col, P, ld, b, y + (n0 * M + grp * g.C) * g.img(), M * g.img());
    }
  }
  if (ctx.has_in(2)) add_bias(y, ctx.in(2).ptr<T>(), N, M, g.img());
}

// dy: (N, M, out spatial), x: (N, C, in spatial), w: (C, M/G, k...) -> dX, dW, dB: (M)
template <class T>
void conv_transpose_backward(KernelContext& ctx) {
  const Tensor &dY = ctx.in(0), &X = ctx.in(1), &Wt = ctx.in(2);
  int64_t G = ctx.node.attrs.get_int("group", 1), N = X.dim(0), C = X.dim(1), M = dY.dim(1);
  int64_t Cg = C / G;
  Geom g = make_geom(ctx.node, M / G, dY.shape(), X.shape(), Wt.shape(), true);
  bool want_dx = needed(ctx, 0), want_dw = needed(ctx, 1);
  const T* dy = dY.ptr<T>();
  if (needed(ctx, 2)) bias_grad(dy, N, M, g.img(), ctx.out(2).ptr<T>());
  if (!want_dx && !want_dw) return;
  const T* x = X.ptr<T>();
  const T* w = Wt.ptr<T>();
  T* dx = want_dx ? ctx.out(0).ptr<T>() : nullptr;
  T* dw = want_dw ? ctx.out(1).ptr<T>() : nullptr;
  if (dw) std::fill_n(dw, ctx.out(1).numel(), T(0));
  int64_t K = g.rows(), P = g.cols(), chunk = chunk_size(N, K * P);
  T* col = scratch<T>(0, K * chunk * P);
  T* tmp = scratch<T>(1, Cg * chunk * P);
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    int64_t b = std::min(chunk, N - n0), ld = b * P;
    for (int64_t grp = 0; grp < G; ++grp) {
      im2col_images(g, dy + (n0 * M + grp * g.C) * g.img(), M * g.img(), b, col, P, ld);
      if (dx) {
        gemm(Trans::No, Trans::No, Cg, ld, K, T(1), w + grp * Cg * K, K, col, ld, T(0), tmp, ld);
        unpack(tmp, C, grp * Cg, Cg, P, n0, b, dx);
      }
      if (dw) {
        pack(x, C, grp * Cg, Cg, P, n0, b, tmp);
        gemm(Trans::No, Trans::Yes, Cg, K, ld, T(1), tmp, ld, col, ld, T(1), dw + grp * Cg * K, K);
      }
    }
  }
}

}  // namespace

CBT_REGISTER_KERNEL("", "Conv", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { conv_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "ConvGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { conv_backward<T>(ctx); });
});
CBT_REGISTER_KERNEL("", "ConvTranspose", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { conv_transpose_forward<T>(ctx); });
});
CBT_REGISTER_KERNEL(kCbtDomain, "ConvTransposeGrad", DeviceKind::CPU, [](KernelContext& ctx) {
  dispatch_float(ctx.in(0).dtype(), [&]<class T>() { conv_transpose_backward<T>(ctx); });
});

}  // namespace cbt::cpu
