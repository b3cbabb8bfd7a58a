// Timing a kernel as the learners of a GPU run it: several copies side by side, each on a
// stream of its own, captured in one CUDA graph; and the buffers such a timing runs on.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ops/cuda/search_phases.h"

namespace cbt::cuda {

// Device memory for timing, freed on every path; `p` is null when the allocation failed.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // `count` floats in [-1, 1), made on the device from `seed` (counter-based, so the same
  // values every time): inputs whose products tell kernels apart. Waits for the device.
  void fill_random(size_t count, uint64_t seed);
  // The same values rounded to bfloat16 (nearest even), `count` of them.
  void fill_random_bf16(size_t count, uint64_t seed);
  std::vector<float> download(size_t count) const;
};

// Non-blocking streams, destroyed on every path.
struct Streams {
  std::vector<cudaStream_t> s;
  explicit Streams(size_t n);
  ~Streams();
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
};

// Milliseconds per run when `side.s.size()` copies run side by side: `launch(copy, stream)`
// enqueues one run of copy `copy` on `stream`; each copy runs `reps` times on its own stream,
// all captured into one CUDA graph on `stream` (so that the host's launch cost does not count,
// as in a replayed step) and replayed twice, the second replay timed. Negative when a launch,
// the capture or a replay fails. Must not run inside another capture.
float time_side_by_side(cudaStream_t stream, const Streams& side, int reps,
                        const std::function<bool(size_t copy, cudaStream_t s)>& launch);

// How time_each_side_by_side runs: `replays` (WarmUpThenTimed: replayed twice, the second
// replay timed; One: uploaded and replayed once, that replay timed, half the time, for a first
// rough round of a search whose close candidates are timed again); `first_alone`: each
// configuration first runs once alone on the timing stream (a kernel's first launch may set
// itself up, and a launch that fails is found), which a search's second round, whose
// configurations all ran in its first, leaves out; `phases`, when given, gets the laps
// "alone", "capture", "instantiate" and "replays" ("alone1" ... "replay1" with Replays::One).
enum class Replays { One, WarmUpThenTimed };
struct TimingRuns {
  Replays replays = Replays::WarmUpThenTimed;
  bool first_alone = true;
  SearchPhases* phases = nullptr;
};

// Milliseconds per run of each of `count` configurations, each timed as time_side_by_side times
// one (side.s.size() copies side by side, `reps` runs each), but all captured into one CUDA graph,
// one configuration after another with a timing event between them: a search instantiates one
// graph instead of one per configuration. `launch(index, copy, stream)` enqueues one run of
// configuration `index`. An entry is negative when its first run failed. When the one graph
// cannot be captured or run, each configuration is timed by time_side_by_side.
using IndexedLaunch = std::function<bool(size_t index, size_t copy, cudaStream_t s)>;
std::vector<float> time_each_side_by_side(cudaStream_t stream, const Streams& side, int reps, size_t count,
                                          const IndexedLaunch& launch, const TimingRuns& runs = {});

// A search's timing in two rounds (most of its time would be the slow configurations' runs):
// every configuration runs once a copy in one replay (Replays::One, each first alone unless
// `first_alone` is false), then those within `within` times that round's best (at most `most`,
// fastest first) are timed again with `reps` runs a copy after a warm-up replay. Returns each
// configuration's milliseconds of the second round; negative for those that failed or were left
// out after the first.
struct Shortlist {
  float within = 1.5f;
  size_t most = 16;
  bool first_alone = true;
};
std::vector<float> time_shortlisted(cudaStream_t stream, const Streams& side, int reps, size_t count,
                                    const IndexedLaunch& launch, const Shortlist& shortlist,
                                    SearchPhases* phases = nullptr);

// time_shortlisted with a first look against a competitor: every `stride`-th configuration (a
// sample spread over the list, at least `least` of them) runs its first round before the others,
// and when the fastest of them takes more than `give_up` times `bar_ms` (the competitor's time for
// the same work, e.g. cuDNN's chosen engine), the search ends there: the rest are never timed,
// which is most of a search's time where the competitor wins by far. Without a bar (bar_ms <= 0),
// or with too few configurations for a sample, it is time_shortlisted.
struct FirstLook {
  float bar_ms = -1;
  float give_up = 2.0f;
  size_t stride = 5;
  size_t least = 4;
};
struct LookedTimes {
  std::vector<float> ms;  // as time_shortlisted's; after a give-up, the sample's first-round times
  size_t looked = 0;      // configurations in the first look (0: none was taken)
  bool gave_up = false;   // the search ended after the first look
};
LookedTimes time_after_first_look(cudaStream_t stream, const Streams& side, int reps, size_t count,
                                  const IndexedLaunch& launch, const Shortlist& shortlist, const FirstLook& look,
                                  SearchPhases* phases = nullptr);

// The largest difference between the first `count` floats of `got` and of `ref`, relative to
// ref's largest magnitude; computed on the device after the work queued on `stream`. A NaN
// or an infinity in either makes it infinite or NaN, which no tolerance accepts. `scratch`
// (at least relative_error_scratch_bytes) holds the two maxima; a search comparing many
// candidates passes one, otherwise one is allocated for the call.
constexpr size_t relative_error_scratch_bytes = 2 * sizeof(unsigned long long);
double relative_error(const DeviceBuffer& got, const DeviceBuffer& ref, size_t count, cudaStream_t stream,
                      DeviceBuffer* scratch = nullptr);

}  // namespace cbt::cuda
