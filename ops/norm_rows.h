// The views of a normalisation's input shared by the CPU and CUDA kernels, so that both read
// it the same way: LayerNormalization's and RMSNorm's (rows, inner) around their axis, and
// Instance/GroupNormalization's groups of channels.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "graph/shape_utils.h"
#include "graph/tensor.h"

namespace cbt {

struct NormRows {
  int64_t rows = 1, inner = 1;
  NormRows(const Tensor& x, int64_t axis) {
    if (axis < 0) axis += static_cast<int64_t>(x.rank());
    inner = dims_product(x.shape(), axis, x.rank());
    rows = x.numel() / std::max<int64_t>(inner, 1);
  }
};

// Where LayerNormalization and RMSNorm (LayerNormalization without the mean and the bias, made
// by fuse_rms_norm, graph/fusion.h) keep their optional inputs and outputs, and whether rows
// are centred: both ops, and their gradients, run the same kernels. -1: the op has none.
struct RowNormForm {
  bool centered = true;
  int bias_in = 2, mean_out = 1, invstd_out = 2;  // the forward's
  int mean_in = 3, invstd_in = 4;                 // the backward's (after dY, X and the scale)
  static RowNormForm of(const std::string& op_type) {
    if (op_type == "RMSNorm" || op_type == "RMSNormGrad") return RowNormForm{false, -1, -1, 1, -1, 3};
    return RowNormForm{};
  }
};

// X (N, C, S...) in `groups` groups of channels: row r = n * groups + g holds the `inner` =
// (C / groups) * S contiguous values of sample n's group g. The scale and bias are per
// channel, or per group (`per_group`: GroupNormalization before opset 21) when the scale
// has `groups` values and those are not the channels.
struct GroupRows {
  int64_t n = 1, c = 1, s = 1, groups = 1, channels_per_group = 1, rows = 1, inner = 1;
  bool per_group = false;
  GroupRows(const Tensor& x, int64_t num_groups, int64_t scale_size) : n(x.dim(0)), c(x.dim(1)), groups(num_groups) {
    s = x.numel() / std::max<int64_t>(n * c, 1);
    channels_per_group = c / std::max<int64_t>(groups, 1);
    rows = n * groups;
    inner = channels_per_group * s;
    per_group = scale_size != c;
  }
  // The scale/bias index of value j of row r.
  constexpr int64_t param(int64_t r, int64_t j) const {
    int64_t g = r % groups;
    return per_group ? g : g * channels_per_group + j / s;
  }
};

}  // namespace cbt
