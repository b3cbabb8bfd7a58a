// Per-channel normalisation of samples: parsing the flag, the statistics of a training set,
// and 8-bit pixels to normalised float32.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/dataset.h"

namespace cbt {

struct NormalizeSpec {
  // Default: what the format suggests (data_source.h); None: pixels / 255 (float data as
  // they are); Dataset: the training set's own per-channel mean and standard deviation.
  enum class Mode { Default, None, Dataset, Given };
  Mode mode = Mode::Default;
  Normalization given;  // Mode::Given
};

// "", "none", "dataset" or "m1,m2,...:s1,s2,..." (one value, or one per channel); UserError
// on anything else.
NormalizeSpec parse_normalization(const std::string& spec);

// UserError unless mean and stddev hold 1 or `channels` values each and every stddev > 0.
void check_normalization(const Normalization& n, int64_t channels);

// Mean and standard deviation per channel of p / 255 over 8-bit pixels (N, C, HW).
Normalization channel_statistics(const uint8_t* pixels, int64_t n, int64_t channels, int64_t hw);

// Pixels (N, C, HW) -> float32 tensor of `shape` (the same number of elements), normalised.
Tensor normalize_pixels(const uint8_t* pixels, const Shape& shape, int64_t channels, int64_t hw,
                        const Normalization& norm);

// In place on float samples (N, C, HW): x = (x - mean[c]) / stddev[c].
void normalize_values(float* x, int64_t n, int64_t channels, int64_t hw, const Normalization& norm);

}  // namespace cbt
