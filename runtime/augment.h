// Augmentation of training samples: random crop of the zero-padded image and horizontal
// flip. The random choices of a whole epoch are drawn up front from (seed, epoch), so that
// the CPU gather and the GPU gather (ops/cuda/data.h) apply the same ones.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/dataset.h"

namespace cbt {

// "crop:4,flip", "crop:4", "flip", "none" or ""; UserError on anything else.
Augmentation parse_augmentation(const std::string& spec);

// The choices of one epoch, 3 per position of the epoch order: (dy, dx, flip) with dy, dx
// uniform in [-pad, pad] and flip 0 or 1 (0 unless d.augment.flip). Empty when `d` is not
// augmented. The same (seed, epoch) gives the same choices.
std::vector<int32_t> epoch_augmentation(const Dataset& d, uint64_t seed, int64_t epoch);

// dst = one sample `src` (laid out as `l` says) shifted by (dy, dx) with zeros where it
// leaves the image, then mirrored left-right when flip:
//   dst[c, y, x] = src[c, y + dy, x' + dx] with x' = flip ? W - 1 - x : x   (0 outside)
// The CPU version is the specification of the CUDA kernel.
void augment_sample(const float* src, float* dst, const ImageLayout& l, const int32_t* choice);

}  // namespace cbt
