// Direct convolution kernels of cbtrain's own for small stride-1 convolutions (forward, backward
// data and backward filter) and for the backward data of stride-2 3 x 3 ones, where cuDNN's
// kernels cost a learner more than their arithmetic (LeNet-5's convolutions took 15 of a
// 24.5 µs step in cuDNN's kernels at batch 32 with 16 learners). Each is timed against the
// cuDNN engine chosen for the same convolution, as many copies at once as the GPU has
// learners, and runs only where it is faster. They sum in a fixed order (deterministic) in
// float32 FMA arithmetic.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/cuda/config_search.h"
#include "ops/cuda/search_phases.h"

namespace cbt::cuda {

// One stride-1 convolution as the kernel runs it: in (N, C, H, W) convolved with K x K
// filters and leading pads (PH, PW) gives out (N, M, OH, OW), OH = H + 2 PH - K + 1.
// Forward: the filters are w (M, C, K, K). Backward data of a convolution with filters
// (C', M', K, K) is one too: in = dY, out = dX, w read as (C', M') transposed and turned by
// 180°, pads K - 1 - P (`turned`).
// Backward data of a stride-2 3 x 3 convolution with pads 1 (`phases`, also `turned`): each of
// dX's four phases (even or odd rows by even or odd columns) is a stride-1 convolution of dY
// with 1, 2 or 4 of the filters' taps, no leading pads and one trailing one. The kernel runs
// the four as one with K = 2, in = dY (N, C, H, W), OH = H, OW = W and M = 4 C' channels, of
// which channel (2 a + b) C' + c is written to out[n][c][2 oh + a][2 ow + b] where that lies in
// out = dX (N, C', XH, XW) (H = ceil(XH / 2)); w is the forward filters (C, C', 3, 3), the taps
// a phase does not use read as zeros (and not multiplied where a thread's channels share them).
struct DirectConv {
  int64_t N = 1, C = 1, H = 1, W = 1, M = 1, OH = 1, OW = 1, K = 1, PH = 0, PW = 0;
  bool turned = false;
  bool phases = false;
  int64_t XH = 0, XW = 0;  // dX's rows and columns with `phases`
  bool operator==(const DirectConv&) const = default;
};

// How one launch splits the work: each thread sums `mt` output channels at `pt` adjacent
// outputs of a column; an image's output rows are cut into `bands` and its channels into
// `splits`, one block of `threads` each.
struct DirectConfig {
  int mt = 1, pt = 1, bands = 1, splits = 1, threads = 256;
  std::string str() const;
  bool operator==(const DirectConfig&) const = default;
};

// The phases form (above) of the backward data of a stride-2 3 x 3 convolution with pads 1 of
// x (N, C', XH, XW) into C channels: dY (N, C, ceil(XH / 2), ceil(XW / 2)) in, dX out.
DirectConv stride2_data_form(int64_t N, int64_t C_x, int64_t XH, int64_t XW, int64_t C);

// Whether the kernels can run `d` at all (filter size, shapes, shared memory).
bool direct_supported(const DirectConv& d);

// The configurations worth timing for `d` (empty when unsupported).
std::vector<DirectConfig> direct_configs(const DirectConv& d);
// The dynamic shared memory a launch of `cfg` takes (beyond 48 KB the kernel opts in, per device).
size_t direct_shared_bytes(const DirectConv& d, const DirectConfig& cfg);

// Floats of the filters w and of out as `d` reads and writes them.
int64_t direct_filter_floats(const DirectConv& d);
int64_t direct_out_floats(const DirectConv& d);

// out = conv(in, w) (+ bias[m], then max(., 0) with `relu`) on `stream`; bias may be null.
// Returns false when the launch failed (the CUDA error is left to the caller).
bool direct_conv(cudaStream_t stream, const DirectConv& d, const DirectConfig& cfg, const float* in, const float* w,
                 const float* bias, bool relu, float* out);

using DirectChoice = TimedConfig<DirectConfig>;

// The fastest configuration for `d` timed `copies` at a time (time_side_by_side) on buffers
// of its own; nullopt when none ran. Must not run inside a CUDA-graph capture. `phases`, when
// given, gets laps "buffers", "streams" and those of time_each_side_by_side. With `bar_ms` > 0
// (the time per copy of cuDNN's choice), the search ends after a first look at a sample of the
// configurations when none of them comes within twice that (time_after_first_look).
std::optional<DirectChoice> choose_direct(cudaStream_t stream, const DirectConv& d, int copies,
                                          SearchPhases* phases = nullptr, float bar_ms = -1);

// Backward filter: dW (M, C, K, K) of the forward convolution `d` (not turned) from its input x
// (N, C, H, W) and dY (N, M, OH, OW). Each block of `threads` sums the products of `ipb` images
// for threads / z of the (m, c, kh) rows, a row's output rows split `z` ways; a second launch
// adds those partial sums in a fixed order (deterministic), from a buffer of
// direct_wgrad_partial_bytes().
// With mt > 0 the tiled kernel runs instead: each thread sums mt output channels by ct input
// channels over bands of rb output rows of ipb images (see wgrad_tile_kernel); z is unused.
struct WgradConfig {
  int threads = 128, z = 1, ipb = 1;
  int mt = 0, ct = 0, rb = 0;
  std::string str() const;
  bool operator==(const WgradConfig&) const = default;
};
size_t direct_wgrad_partial_bytes(const DirectConv& d, const WgradConfig& c);
// The configurations worth timing for `d` whose partial sums fit `workspace_budget` bytes.
std::vector<WgradConfig> direct_wgrad_configs(const DirectConv& d, size_t workspace_budget);
bool direct_wgrad(cudaStream_t stream, const DirectConv& d, const WgradConfig& cfg, const float* x, const float* dy,
                  float* partial, float* dw);
using WgradChoice = TimedConfig<WgradConfig>;
std::optional<WgradChoice> choose_direct_wgrad(cudaStream_t stream, const DirectConv& d, int copies,
                                               size_t workspace_budget, SearchPhases* phases = nullptr,
                                               float bar_ms = -1);

// Whether the direct kernels take part (CBT_CONV_DIRECT in the environment, read at each
// choice): Timed (unset; run where faster than cuDNN's choice), Off, or Always (wherever
// they apply; for tests and comparisons).
enum class DirectMode : uint8_t { Timed, Off, Always };
DirectMode direct_mode();

// How many direct convolutions have run in this process (tests check the path is taken).
uint64_t direct_runs();

}  // namespace cbt::cuda
