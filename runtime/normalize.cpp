// Normalisation: flag parsing, per-channel statistics, conversion of pixels.
#include "runtime/normalize.h"

#include <cmath>
#include <sstream>

#include "graph/errors.h"

namespace cbt {

namespace {

std::vector<float> parse_list(const std::string& s, const std::string& spec) {
  std::vector<float> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      float v = std::stof(item, &used);
      if (used != item.size() || !std::isfinite(v)) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw UserError("--normalize '" + spec + "': '" + item + "' is not a number");
    }
  }
  if (out.empty() || s.back() == ',')
    throw UserError("--normalize '" + spec + "': a list of numbers is empty or ends in a comma");
  return out;
}

float pick(const std::vector<float>& v, int64_t c) { return v.size() == 1 ? v[0] : v[c]; }

}  // namespace

NormalizeSpec parse_normalization(const std::string& spec) {
  NormalizeSpec out;
  if (spec.empty()) return out;
  if (spec == "none") {
    out.mode = NormalizeSpec::Mode::None;
    return out;
  }
  if (spec == "dataset") {
    out.mode = NormalizeSpec::Mode::Dataset;
    return out;
  }
  const size_t colon = spec.find(':');
  if (colon == std::string::npos || spec.find(':', colon + 1) != std::string::npos)
    throw UserError(
        "--normalize takes 'none', 'dataset' or MEANS:STDS such as "
        "0.49,0.48,0.45:0.25,0.24,0.26, not '" +
        spec + "'");
  out.mode = NormalizeSpec::Mode::Given;
  out.given.mean = parse_list(spec.substr(0, colon), spec);
  out.given.stddev = parse_list(spec.substr(colon + 1), spec);
  for (float s : out.given.stddev)
    if (!(s > 0)) throw UserError("--normalize '" + spec + "': every standard deviation must be > 0");
  return out;
}

void check_normalization(const Normalization& n, int64_t channels) {
  auto ok = [&](const std::vector<float>& v) { return v.size() == 1 || static_cast<int64_t>(v.size()) == channels; };
  if (!ok(n.mean) || !ok(n.stddev))
    throw UserError("--normalize gives " + std::to_string(n.mean.size()) + " mean(s) and " +
                    std::to_string(n.stddev.size()) + " standard deviation(s) but the data have " +
                    std::to_string(channels) + " channel(s); give one value or one per channel");
  for (float s : n.stddev)
    if (!(s > 0)) throw UserError("--normalize: every standard deviation must be > 0");
}

Normalization channel_statistics(const uint8_t* pixels, int64_t n, int64_t channels, int64_t hw) {
  Normalization out;
  out.mean.assign(static_cast<size_t>(channels), 0.0f);
  out.stddev.assign(static_cast<size_t>(channels), 1.0f);
  for (int64_t c = 0; c < channels; ++c) {
    // Integer sums are exact; 2^63 / 255^2 leaves room for any data set that fits in memory.
    uint64_t sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* p = pixels + (i * channels + c) * hw;
      for (int64_t k = 0; k < hw; ++k) {
        sum += p[k];
        sq += uint64_t{p[k]} * p[k];
      }
    }
    const double count = static_cast<double>(n * hw);
    if (count == 0) continue;
    const double mean = static_cast<double>(sum) / count / 255.0;
    const double var = static_cast<double>(sq) / count / (255.0 * 255.0) - mean * mean;
    out.mean[c] = static_cast<float>(mean);
    // A constant channel keeps a standard deviation of 1 rather than dividing by zero.
    out.stddev[c] = var > 1e-12 ? static_cast<float>(std::sqrt(var)) : 1.0f;
  }
  return out;
}

Tensor normalize_pixels(const uint8_t* pixels, const Shape& shape, int64_t channels, int64_t hw,
                        const Normalization& norm) {
  check_normalization(norm, channels);
  Tensor t(DType::Float32, shape);
  float* x = t.ptr<float>();
  const int64_t n = channels * hw != 0 ? t.numel() / (channels * hw) : 0;
  for (int64_t c = 0; c < channels; ++c) {
    const float scale = 1.0f / (255.0f * pick(norm.stddev, c));
    const float shift = pick(norm.mean, c) / pick(norm.stddev, c);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t off = (i * channels + c) * hw;
      for (int64_t k = 0; k < hw; ++k) x[off + k] = pixels[off + k] * scale - shift;
    }
  }
  return t;
}

void normalize_values(float* x, int64_t n, int64_t channels, int64_t hw, const Normalization& norm) {
  check_normalization(norm, channels);
  for (int64_t c = 0; c < channels; ++c) {
    const float m = pick(norm.mean, c), inv = 1.0f / pick(norm.stddev, c);
    for (int64_t i = 0; i < n; ++i) {
      float* p = x + (i * channels + c) * hw;
      for (int64_t k = 0; k < hw; ++k) p[k] = (p[k] - m) * inv;
    }
  }
}

}  // namespace cbt
