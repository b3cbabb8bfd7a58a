// Resize's parameters and sampling, shared by its schema and its CPU and CUDA kernels (one
// truth for the output shape and for which input elements each output element reads).
//
// Resize is separable: along each resized axis, output element o reads input elements i0 and
// i1 with weights w0 and w1 (resize_taps; nearest: one element, weight 1). The taps move
// forward with o, so the outputs that read input element i form one range (resize_readers),
// which lets the backward pass gather instead of scatter: deterministic on every device.
// Coordinates are computed in float, as onnxruntime's CPU kernels compute them.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/tensor.h"

#ifdef __CUDACC__
#define CBT_RESIZE_HD __host__ __device__
#else
#define CBT_RESIZE_HD
#endif

namespace cbt {

enum class ResizeCoord : int32_t {
  HalfPixel,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNn,
  HalfPixelSymmetric
};
// Simple: opset 10's and Upsample's nearest (graph/legacy_ops.h), floor when enlarging and
// ceiling when shrinking.
enum class ResizeRound : int32_t { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

struct ResizeMode {
  bool linear = false;  // else nearest
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeRound round = ResizeRound::RoundPreferFloor;
};

// The attributes as a ResizeMode; throws ModelError naming an attribute value cbtrain does not
// support (mode cubic, tf_crop_and_resize, antialias, a keep_aspect_ratio_policy other than
// stretch).
ResizeMode parse_resize_mode(const Attributes& a);

// One axis: `in` elements resampled to `out` with the scale factor the coordinates use.
struct ResizeAxis {
  int64_t in = 1, out = 1;
  float scale = 1.0f;
  ResizeMode mode;
};

// What Resize's inputs say: per axis of X, the scale factor, and the output shape. `scales`
// and `sizes` are the values of the inputs (empty when not given; exactly one is), for the
// axes of `axes` (opset 18; all when empty). Throws ModelError on a mismatch.
struct ResizeTarget {
  std::vector<float> scales;
  Shape out;
};
ResizeTarget resize_target(const Shape& in, const std::vector<float>& scales, const std::vector<int64_t>& sizes,
                           const std::vector<int64_t>& axes);

// X (.., D, H, W) as `planes` independent blocks of the last three axes (missing ones of
// length 1): the axes before those must not be resampled.
struct ResizeGeom {
  int64_t planes = 1;
  ResizeAxis ax[3];
  CBT_RESIZE_HD int64_t in_plane() const { return ax[0].in * ax[1].in * ax[2].in; }
  CBT_RESIZE_HD int64_t out_plane() const { return ax[0].out * ax[1].out * ax[2].out; }
};
// Throws ModelError when an axis before the last three changes.
ResizeGeom resize_geom(const Shape& in, const ResizeTarget& t, const ResizeMode& m);

// Output element o's coordinate in the input along axis a.
CBT_RESIZE_HD inline float resize_source(int64_t o, const ResizeAxis& a) {
  const float x = static_cast<float>(o), s = a.scale, len_in = static_cast<float>(a.in);
  switch (a.mode.coord) {
    case ResizeCoord::PytorchHalfPixel:
      return a.out > 1 ? (x + 0.5f) / s - 0.5f : 0.0f;
    case ResizeCoord::AlignCorners:
      return a.out == 1 ? 0.0f : x * (len_in - 1.0f) / static_cast<float>(a.out - 1);
    case ResizeCoord::Asymmetric:
      return x / s;
    case ResizeCoord::TfHalfPixelForNn:
      return (x + 0.5f) / s;
    case ResizeCoord::HalfPixelSymmetric: {
      const float adjustment = static_cast<float>(a.out) / (s * len_in), center = len_in / 2.0f;
      return center * (1.0f - adjustment) + (x + 0.5f) / s - 0.5f;
    }
    case ResizeCoord::HalfPixel:
    default:
      return (x + 0.5f) / s - 0.5f;
  }
}

struct ResizeTaps {
  int64_t i0 = 0, i1 = 0;
  float w0 = 1.0f, w1 = 0.0f;
};

CBT_RESIZE_HD inline ResizeTaps resize_taps(int64_t o, const ResizeAxis& a) {
  float x = resize_source(o, a);
  const int64_t last = a.in - 1;
  ResizeTaps t;
  if (a.mode.linear) {
    x = fminf(fmaxf(x, 0.0f), static_cast<float>(last));
    t.i0 = static_cast<int64_t>(x);
    if (t.i0 > last) t.i0 = last;
    t.i1 = t.i0 + 1 > last ? last : t.i0 + 1;
    t.w1 = x - static_cast<float>(t.i0);
    t.w0 = 1.0f - t.w1;
    return t;
  }
  float r;
  switch (a.mode.round) {
    case ResizeRound::Floor:
      r = floorf(x);
      break;
    case ResizeRound::Ceil:
      r = ceilf(x);
      break;
    case ResizeRound::Simple:
      r = a.scale < 1.0f ? ceilf(x) : floorf(x);
      break;
    case ResizeRound::RoundPreferCeil:
      r = floorf(x) + 0.5f == x ? ceilf(x) : roundf(x);
      break;
    case ResizeRound::RoundPreferFloor:
    default:
      r = floorf(x) + 0.5f == x ? floorf(x) : roundf(x);
      break;
  }
  int64_t i = r < 0.0f ? 0 : (r > static_cast<float>(last) ? last : static_cast<int64_t>(r));
  t.i0 = t.i1 = i;
  return t;
}

// Input element i's weight in output element o (0 when o does not read it).
CBT_RESIZE_HD inline float resize_weight(const ResizeTaps& t, int64_t i) {
  return (t.i0 == i ? t.w0 : 0.0f) + (t.i1 == i && t.w1 != 0.0f ? t.w1 : 0.0f);
}

// The outputs [*lo, *hi) along axis a whose taps include input element i.
CBT_RESIZE_HD inline void resize_readers(int64_t i, const ResizeAxis& a, int64_t* lo, int64_t* hi) {
  int64_t l = 0, h = a.out;  // first o with i1(o) >= i
  while (l < h) {
    const int64_t m = l + (h - l) / 2;
    if (resize_taps(m, a).i1 >= i)
      h = m;
    else
      l = m + 1;
  }
  *lo = l;
  h = a.out;  // first o with i0(o) > i
  while (l < h) {
    const int64_t m = l + (h - l) / 2;
    if (resize_taps(m, a).i0 > i)
      h = m;
    else
      l = m + 1;
  }
  *hi = l;
}

// Output element (a, b, c) of one plane: its taps in x (the plane's in_plane() values) weighted.
// Zero weights are skipped, so that a NaN or infinity beside a sample does not reach it.
template <class T>
CBT_RESIZE_HD inline double resize_output(const T* x, const ResizeGeom& g, int64_t a, int64_t b, int64_t c) {
  const ResizeAxis &A = g.ax[0], &B = g.ax[1], &C = g.ax[2];
  const ResizeTaps ta = resize_taps(a, A), tb = resize_taps(b, B), tc = resize_taps(c, C);
  double sum = 0;
  for (int ka = 0; ka < 2; ++ka) {
    const float wa = ka ? ta.w1 : ta.w0;
    if (wa == 0.0f) continue;
    for (int kb = 0; kb < 2; ++kb) {
      const float wb = kb ? tb.w1 : tb.w0;
      if (wb == 0.0f) continue;
      for (int kc = 0; kc < 2; ++kc) {
        const float wc = kc ? tc.w1 : tc.w0;
        if (wc == 0.0f) continue;
        const int64_t ia = ka ? ta.i1 : ta.i0, ib = kb ? tb.i1 : tb.i0, ic = kc ? tc.i1 : tc.i0;
        sum += double(wa) * wb * wc * x[(ia * B.in + ib) * C.in + ic];
      }
    }
  }
  return sum;
}

// Input element (a, b, c)'s gradient in one plane: the gradients dy (the plane's out_plane()
// values) of the outputs that read it, weighted, in a fixed order.
template <class T>
CBT_RESIZE_HD inline double resize_input_grad(const T* dy, const ResizeGeom& g, int64_t a, int64_t b, int64_t c) {
  const ResizeAxis &A = g.ax[0], &B = g.ax[1], &C = g.ax[2];
  int64_t a_lo, a_hi, b_lo, b_hi, c_lo, c_hi;
  resize_readers(a, A, &a_lo, &a_hi);
  resize_readers(b, B, &b_lo, &b_hi);
  resize_readers(c, C, &c_lo, &c_hi);
  double sum = 0;
  for (int64_t oa = a_lo; oa < a_hi; ++oa) {
    const float wa = resize_weight(resize_taps(oa, A), a);
    for (int64_t ob = b_lo; ob < b_hi; ++ob) {
      const float wb = resize_weight(resize_taps(ob, B), b);
      for (int64_t oc = c_lo; oc < c_hi; ++oc) {
        const float wc = resize_weight(resize_taps(oc, C), c);
        sum += double(wa) * wb * wc * dy[(oa * B.out + ob) * C.out + oc];
      }
    }
  }
  return sum;
}

}  // namespace cbt
