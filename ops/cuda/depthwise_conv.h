// Depthwise convolution kernels of cbtrain's own (forward, backward data and backward filter),
// where cuDNN's grouped kernels cost most of a step: MobileNet, EfficientNet, ShuffleNet and
// ConvNeXt spent more in cuDNN's depthwise kernels than PyTorch's took for the same work (at
// batch 32 on an H200, EfficientNet's filter gradients 212 µs a step against 57). Like the
// direct kernels (direct_conv.h) each is timed against the cuDNN engine chosen for the same
// convolution, as many copies at once as the GPU has learners, and runs only where it is faster
// (CBT_CONV_DIRECT, direct_mode()). They sum in a fixed order (deterministic) in float32 FMA
// arithmetic.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/cuda/config_search.h"
#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/search_phases.h"

namespace cbt::cuda {

// One 2-D depthwise convolution (as many groups as channels, one filter a channel, dilation 1):
// x (N, C, H, W) with filters w (C, 1, K, K), stride S and leading pads (PH, PW) gives
// y (N, C, OH, OW), y[n][c][oh][ow] = the sum over kh, kw of
// w[c][kh][kw] x[n][c][oh S - PH + kh][ow S - PW + kw], zeros outside x. The trailing pads are
// what OH and OW leave (asymmetric pads need nothing more).
struct DepthwiseConv {
  int64_t N = 1, C = 1, H = 1, W = 1, OH = 1, OW = 1, K = 3, S = 1, PH = 0, PW = 0;
  bool operator==(const DepthwiseConv&) const = default;
};

// How one launch splits the work. Forward and backward data: a block computes the rows of a
// band (a plane's output rows cut into `bands`) of `group` consecutive planes (n, c), holding the
// band's inputs (zeros in the padding) and the planes' taps in shared memory; each thread sums
// `pt` outputs of a row (backward data with stride 2: `pt` of one column parity, 2 apart).
// Backward filter: block (c, g) sums channel c's K x K taps over `group` consecutive chunks of
// the N * bands (image, band of output rows), each thread `pt` outputs of a row at a time, then
// the block's threads in a fixed tree; the blocks' sums, ceil(N bands / group) a channel, are
// added in their order by a second launch (none when one block takes a channel's every chunk).
struct DepthwiseConfig {
  int pt = 1, bands = 1, group = 1, threads = 128;
  std::string str() const;
  bool operator==(const DepthwiseConfig&) const = default;
};

// Whether the kernels can run `d` at all: K 3, 5 or 7, stride 1 or 2, pads below K, every
// output's window starting inside x, 32-bit plane offsets.
bool depthwise_supported(const DepthwiseConv& d);

// The configurations worth timing for `op` of `d` (empty when unsupported); the backward
// filter's only those whose partial sums fit `workspace_budget` bytes.
std::vector<DepthwiseConfig> depthwise_configs(const DepthwiseConv& d, ConvOp op, size_t workspace_budget);
// The workspace `op` takes in `cfg`: the backward filter's partial sums, 0 for the others.
size_t depthwise_partial_bytes(const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& cfg);
// The dynamic shared memory a launch of `cfg` takes (at most 48 KB in every configuration offered).
size_t depthwise_shared_bytes(const DepthwiseConv& d, ConvOp op, const DepthwiseConfig& cfg);

// Each on `stream`; false when `d` or `cfg` is not one the kernels take or the launch failed
// (the CUDA error is left to the caller).
// x: (N, C, H, W), w: (C, 1, K, K), bias: (C) or null -> y: (N, C, OH, OW); with `relu`
// y = max(y, 0) after the bias.
bool depthwise_forward(cudaStream_t stream, const DepthwiseConv& d, const DepthwiseConfig& cfg, const float* x,
                       const float* w, const float* bias, bool relu, float* y);
// dy: (N, C, OH, OW), w: (C, 1, K, K) -> dx: (N, C, H, W), every element written.
bool depthwise_backward_data(cudaStream_t stream, const DepthwiseConv& d, const DepthwiseConfig& cfg, const float* dy,
                             const float* w, float* dx);
// x: (N, C, H, W), dy: (N, C, OH, OW) -> dw: (C, 1, K, K); `partial` holds
// depthwise_partial_bytes(d, BackwardFilter, cfg) bytes (may be null when that is 0).
bool depthwise_backward_filter(cudaStream_t stream, const DepthwiseConv& d, const DepthwiseConfig& cfg, const float* x,
                               const float* dy, float* partial, float* dw);

// The fastest configuration for `op` of `d` timed `copies` at a time (time_side_by_side) on
// buffers of its own; nullopt when none ran. Must not run inside a CUDA-graph capture. `phases`
// and `bar_ms` as choose_direct's (direct_conv.h).
using DepthwiseChoice = TimedConfig<DepthwiseConfig>;
std::optional<DepthwiseChoice> choose_depthwise(cudaStream_t stream, const DepthwiseConv& d, ConvOp op, int copies,
                                                size_t workspace_budget, SearchPhases* phases = nullptr,
                                                float bar_ms = -1);

// How many depthwise convolutions have run in this process (tests check the path is taken).
uint64_t depthwise_runs();

}  // namespace cbt::cuda
