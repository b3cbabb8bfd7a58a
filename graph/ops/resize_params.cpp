// Resize's attributes, output shape and the blocks its kernels resample (resize_params.h).
#include "graph/ops/resize_params.h"

#include <string>

#include "graph/errors.h"
#include "graph/shape_utils.h"

namespace cbt {

ResizeMode parse_resize_mode(const Attributes& a) {
  ResizeMode m;
  const std::string mode = a.get_string("mode", "nearest");
  CBT_MODEL_CHECK(mode == "nearest" || mode == "linear", "mode '", mode,
                  "' is not supported (cbtrain resizes with nearest and linear)");
  m.linear = mode == "linear";
  const std::string coord = a.get_string("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel")
    m.coord = ResizeCoord::HalfPixel;
  else if (coord == "pytorch_half_pixel")
    m.coord = ResizeCoord::PytorchHalfPixel;
  else if (coord == "align_corners")
    m.coord = ResizeCoord::AlignCorners;
  else if (coord == "asymmetric")
    m.coord = ResizeCoord::Asymmetric;
  else if (coord == "tf_half_pixel_for_nn")
    m.coord = ResizeCoord::TfHalfPixelForNn;
  else if (coord == "half_pixel_symmetric")
    m.coord = ResizeCoord::HalfPixelSymmetric;
  else
    throw ModelError("coordinate_transformation_mode '" + coord + "' is not supported");
  const std::string round = a.get_string("nearest_mode", "round_prefer_floor");
  if (round == "round_prefer_floor")
    m.round = ResizeRound::RoundPreferFloor;
  else if (round == "round_prefer_ceil")
    m.round = ResizeRound::RoundPreferCeil;
  else if (round == "floor")
    m.round = ResizeRound::Floor;
  else if (round == "ceil")
    m.round = ResizeRound::Ceil;
  else if (round == "simple")  // Upsample and opset-10 Resize, upgraded (graph/legacy_ops.h)
    m.round = ResizeRound::Simple;
  else
    throw ModelError("nearest_mode '" + round + "' is not supported");
  CBT_MODEL_CHECK(a.get_int("antialias", 0) == 0, "antialias=1 is not supported");
  const std::string policy = a.get_string("keep_aspect_ratio_policy", "stretch");
  CBT_MODEL_CHECK(policy == "stretch", "keep_aspect_ratio_policy '", policy, "' is not supported (only stretch)");
  return m;
}

ResizeTarget resize_target(const Shape& in, const std::vector<float>& scales, const std::vector<int64_t>& sizes,
                           const std::vector<int64_t>& axes) {
  const auto rank = static_cast<int64_t>(in.size());
  CBT_MODEL_CHECK(scales.empty() != sizes.empty(), "exactly one of scales and sizes must be given");
  std::vector<int64_t> on = axes.empty() ? std::vector<int64_t>{} : normalize_axes(axes, rank);
  if (on.empty())
    for (int64_t d = 0; d < rank; ++d) on.push_back(d);
  const size_t given = scales.empty() ? sizes.size() : scales.size();
  CBT_MODEL_CHECK(given == on.size(), scales.empty() ? "sizes" : "scales", " has ", given, " values for ", on.size(),
                  " axes of X ", shape_str(in));
  ResizeTarget t{std::vector<float>(in.size(), 1.0f), in};
  for (size_t k = 0; k < on.size(); ++k) {
    const int64_t d = on[k];
    CBT_MODEL_CHECK(in[d] > 0, "axis ", d, " of X ", shape_str(in), " is empty");
    if (!scales.empty()) {
      CBT_MODEL_CHECK(scales[k] > 0.0f && std::isfinite(scales[k]), "scale ", scales[k], " of axis ", d,
                      " is not a positive number");
      const float out = std::floor(static_cast<float>(in[d]) * scales[k]);
      CBT_MODEL_CHECK(out <= float(int64_t{1} << 40), "scale ", scales[k], " of axis ", d, " makes ", in[d],
                      " elements ", out);
      t.scales[d] = scales[k];
      t.out[d] = static_cast<int64_t>(out);
    } else {
      CBT_MODEL_CHECK(sizes[k] > 0, "size ", sizes[k], " of axis ", d, " is not positive");
      t.out[d] = sizes[k];
      t.scales[d] = static_cast<float>(sizes[k]) / static_cast<float>(in[d]);
    }
    CBT_MODEL_CHECK(t.out[d] > 0, "axis ", d, " of X ", shape_str(in), " would resize to ", t.out[d], " elements");
  }
  return t;
}

namespace {

// Whether the axis copies its input: the same length, and output o reads input o alone.
bool copies(const ResizeAxis& a) {
  if (a.in != a.out) return false;
  for (int64_t o = 0; o < a.out; ++o) {
    const ResizeTaps t = resize_taps(o, a);
    if (resize_weight(t, o) != 1.0f || (t.i0 != o && t.w0 != 0.0f) || (t.i1 != o && t.w1 != 0.0f)) return false;
  }
  return true;
}

}  // namespace

ResizeGeom resize_geom(const Shape& in, const ResizeTarget& t, const ResizeMode& m) {
  const auto rank = static_cast<int64_t>(in.size());
  ResizeGeom g;
  for (int64_t d = 0; d < rank; ++d) {
    ResizeAxis a{in[d], t.out[d], t.scales[d], m};
    const int64_t slot = d - (rank - 3);
    if (slot >= 0) {
      g.ax[slot] = a;
    } else {
      CBT_MODEL_CHECK(copies(a), "Resize changes axis ", d, " of X ", shape_str(in),
                      "; cbtrain resamples only the last three axes");
      g.planes *= in[d];
    }
  }
  return g;
}

}  // namespace cbt
