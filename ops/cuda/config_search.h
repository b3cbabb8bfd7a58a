// The search that cbtrain's own convolution kernels (direct_conv.h, depthwise_conv.h) run over
// their configurations: each timed as many copies at once as the GPU has learners
// (copy_timing.h), the fastest per copy kept.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ops/cuda/copy_timing.h"
#include "ops/cuda/search_phases.h"

namespace cbt::cuda {

// A configuration with its milliseconds per copy, as a search timed it.
template <class Config>
struct TimedConfig {
  Config cfg;
  float ms = -1;
  size_t configs = 0;      // the configurations the search had
  size_t looked_only = 0;  // when the search ended after a first look at this many (ms is a first-round time)
};

// `n` device buffers of `bytes` each; empty when one cannot be allocated.
inline std::vector<std::unique_ptr<DeviceBuffer>> timing_buffers(size_t n, size_t bytes) {
  std::vector<std::unique_ptr<DeviceBuffer>> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(std::make_unique<DeviceBuffer>(bytes));
    if (!out.back()->p) return {};
  }
  return out;
}

// The fastest of `configs` per copy, launch(cfg, copy, stream) enqueuing one run of copy `copy`,
// timed side.s.size() copies at once in two rounds (time_shortlisted: the configurations within
// 1.5 times the first round's best, at most 16, timed again with 3 runs a copy, which decide),
// after a first look at every fifth against `bar_ms` (time_after_first_look); nullopt when none ran.
template <class Config, class Launch>
std::optional<TimedConfig<Config>> fastest_config(cudaStream_t stream, const Streams& side,
                                                  const std::vector<Config>& configs, SearchPhases* phases,
                                                  float bar_ms, Launch&& launch) {
  const LookedTimes t = time_after_first_look(
      stream, side, 3, configs.size(),
      [&](size_t i, size_t copy, cudaStream_t s) { return launch(configs[i], copy, s); }, Shortlist{},
      FirstLook{bar_ms}, phases);
  std::optional<TimedConfig<Config>> best;
  for (size_t i = 0; i < configs.size(); ++i)
    if (t.ms[i] >= 0 && (!best || t.ms[i] < best->ms))
      best = TimedConfig<Config>{configs[i], t.ms[i], configs.size(), t.gave_up ? t.looked : 0};
  return best;
}

}  // namespace cbt::cuda
