// Augmentation: flag parsing, per-epoch random choices, the CPU crop and flip.
#include "runtime/augment.h"

#include <random>
#include <sstream>

#include "graph/errors.h"

namespace cbt {

Augmentation parse_augmentation(const std::string& spec) {
  Augmentation a;
  if (spec.empty() || spec == "none") return a;
  std::stringstream ss(spec);
  std::string item;
  const std::string usage = " (--augment takes crop:PAD, flip or both, e.g. crop:4,flip)";
  if (spec.back() == ',') throw UserError("--augment '" + spec + "' ends in a comma" + usage);
  while (std::getline(ss, item, ',')) {
    if (item == "flip") {
      a.flip = true;
    } else if (item.rfind("crop:", 0) == 0) {
      try {
        size_t used = 0;
        int pad = std::stoi(item.substr(5), &used);
        if (used != item.size() - 5 || pad < 1 || pad > 64) throw std::invalid_argument(item);
        a.pad = pad;
      } catch (const std::exception&) {
        throw UserError("--augment: '" + item + "' needs a padding from 1 to 64, e.g. crop:4");
      }
    } else {
      throw UserError("--augment: unknown augmentation '" + item + "'" + usage);
    }
  }
  if (!a.enabled()) throw UserError("--augment '" + spec + "' names no augmentation" + usage);
  return a;
}

std::vector<int32_t> epoch_augmentation(const Dataset& d, uint64_t seed, int64_t epoch) {
  if (!d.augment.enabled()) return {};
  const int64_t n = d.size();
  std::vector<int32_t> out(static_cast<size_t>(3 * n), 0);
  // Its own stream: not the one of epoch_order, so the order stays as without augmentation.
  std::mt19937_64 rng((seed ^ 0xA5A5A5A5DEADBEEFull) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch));
  const int32_t pad = d.augment.pad;
  std::uniform_int_distribution<int32_t> offset(-pad, pad), coin(0, 1);
  for (int64_t p = 0; p < n; ++p) {
    if (pad > 0) {
      out[3 * p] = offset(rng);
      out[3 * p + 1] = offset(rng);
    }
    if (d.augment.flip) out[3 * p + 2] = coin(rng);
  }
  return out;
}

void augment_sample(const float* src, float* dst, const ImageLayout& l, const int32_t* choice) {
  const int64_t C = l.channels, H = l.height, W = l.width;
  const int64_t dy = choice[0], dx = choice[1];
  const bool flip = choice[2] != 0;
  // Strides of (c, y, x) in either layout.
  const bool nhwc = l.layout == Layout::NHWC;
  const int64_t sc = nhwc ? 1 : H * W, sy = nhwc ? W * C : W, sx = nhwc ? C : 1;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) {
        const int64_t ys = y + dy, xs = (flip ? W - 1 - x : x) + dx;
        const bool inside = ys >= 0 && ys < H && xs >= 0 && xs < W;
        dst[c * sc + y * sy + x * sx] = inside ? src[c * sc + ys * sy + xs * sx] : 0.0f;
      }
}

}  // namespace cbt
