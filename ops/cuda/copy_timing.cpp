// Side-by-side timing of kernel copies in a CUDA graph, and its buffers.
#include "ops/cuda/copy_timing.h"

#include <algorithm>

#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {

DeviceBuffer::DeviceBuffer(size_t bytes) {
  if (bytes && cudaMalloc(&p, bytes) != cudaSuccess) {
    p = nullptr;
    (void)cudaGetLastError();
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (p) cudaFree(p);
}

std::vector<float> DeviceBuffer::download(size_t count) const {
  std::vector<float> host(count);
  CBT_CUDA_CHECK(cudaMemcpy(host.data(), p, count * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

Streams::Streams(size_t n) : s(n, nullptr) {
  for (auto& x : s) CBT_CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
}

Streams::~Streams() {
  for (auto x : s) cudaStreamDestroy(x);
}

namespace {

struct Events {
  std::vector<cudaEvent_t> e;
  Events(size_t n, bool timed) : e(n, nullptr) {
    for (auto& x : e) CBT_CUDA_CHECK(cudaEventCreateWithFlags(&x, timed ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Events() {
    for (auto x : e) cudaEventDestroy(x);
  }
};

struct Graph {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (g) cudaGraphDestroy(g);
  }
};

}  // namespace

float time_side_by_side(cudaStream_t stream, const Streams& side, int reps,
                        const std::function<bool(size_t copy, cudaStream_t s)>& launch) {
  const size_t n = side.s.size();
  Events fork(1, false), joins(n, false), timing(2, true);
  Graph graph;
  bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
            cudaEventRecord(fork.e[0], stream) == cudaSuccess;
  for (size_t i = 0; ok && i < n; ++i) {
    ok = cudaStreamWaitEvent(side.s[i], fork.e[0], 0) == cudaSuccess;
    for (int r = 0; ok && r < reps; ++r) ok = launch(i, side.s[i]);
    ok = ok && cudaEventRecord(joins.e[i], side.s[i]) == cudaSuccess &&
         cudaStreamWaitEvent(stream, joins.e[i], 0) == cudaSuccess;
  }
  const bool ended = cudaStreamEndCapture(stream, &graph.g) == cudaSuccess;  // always end the capture
  ok = ok && ended && cudaGraphInstantiate(&graph.exec, graph.g, 0) == cudaSuccess &&
       cudaGraphLaunch(graph.exec, stream) == cudaSuccess && cudaEventRecord(timing.e[0], stream) == cudaSuccess &&
       cudaGraphLaunch(graph.exec, stream) == cudaSuccess && cudaEventRecord(timing.e[1], stream) == cudaSuccess &&
       cudaEventSynchronize(timing.e[1]) == cudaSuccess;
  float ms = -1;
  if (ok && cudaEventElapsedTime(&ms, timing.e[0], timing.e[1]) == cudaSuccess)
    ms /= static_cast<float>(reps) * static_cast<float>(n);
  else
    ms = -1;
  (void)cudaGetLastError();
  return ms;
}

std::vector<float> time_each_side_by_side(cudaStream_t stream, const Streams& side, int reps, size_t count,
                                          const IndexedLaunch& launch, const TimingRuns& how) {
  const bool once = how.replays == Replays::One;
  SearchPhases* phases = how.phases;
  std::vector<float> ms(count, -1.0f);
  std::vector<size_t> runs;  // the configurations whose first run succeeded
  for (size_t i = 0; i < count; ++i) {
    if (!how.first_alone || launch(i, 0, stream))
      runs.push_back(i);
    else
      (void)cudaGetLastError();  // a launch refused (its configuration), not a fault: the others go on
  }
  // One wait for all of them: a fault while running would end every later call on this context anyway.
  if (how.first_alone && cudaStreamSynchronize(stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return ms;
  }
  if (how.first_alone) lap(phases, once ? "alone1" : "alone");
  if (runs.empty()) return ms;
  const size_t n = side.s.size();
  Events fork(runs.size(), false), joins(runs.size() * n, false), marks(runs.size() + 1, true);
  Graph graph;
  // External event nodes mark where each configuration's runs begin and end in the replay.
  bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
            cudaEventRecordWithFlags(marks.e[0], stream, cudaEventRecordExternal) == cudaSuccess;
  for (size_t k = 0; ok && k < runs.size(); ++k) {
    ok = cudaEventRecord(fork.e[k], stream) == cudaSuccess;
    for (size_t c = 0; ok && c < n; ++c) {
      ok = cudaStreamWaitEvent(side.s[c], fork.e[k], 0) == cudaSuccess;
      for (int r = 0; ok && r < reps; ++r) ok = launch(runs[k], c, side.s[c]);
      ok = ok && cudaEventRecord(joins.e[k * n + c], side.s[c]) == cudaSuccess &&
           cudaStreamWaitEvent(stream, joins.e[k * n + c], 0) == cudaSuccess;
    }
    ok = ok && cudaEventRecordWithFlags(marks.e[k + 1], stream, cudaEventRecordExternal) == cudaSuccess;
  }
  const bool ended = cudaStreamEndCapture(stream, &graph.g) == cudaSuccess;  // always end the capture
  lap(phases, once ? "capture1" : "capture");
  ok = ok && ended && cudaGraphInstantiate(&graph.exec, graph.g, 0) == cudaSuccess;
  lap(phases, once ? "instantiate1" : "instantiate");
  // Replayed twice, or uploaded first and replayed once; the events hold the last replay's times.
  ok = ok && (once ? cudaGraphUpload(graph.exec, stream) : cudaGraphLaunch(graph.exec, stream)) == cudaSuccess &&
       cudaGraphLaunch(graph.exec, stream) == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess;
  lap(phases, once ? "replay1" : "replays");
  for (size_t k = 0; ok && k < runs.size(); ++k) {
    float t = -1;
    ok = cudaEventElapsedTime(&t, marks.e[k], marks.e[k + 1]) == cudaSuccess;
    ms[runs[k]] = t / (static_cast<float>(reps) * static_cast<float>(n));
  }
  (void)cudaGetLastError();
  if (!ok)
    for (size_t i : runs)
      ms[i] = time_side_by_side(stream, side, reps, [&](size_t copy, cudaStream_t s) { return launch(i, copy, s); });
  return ms;
}

namespace {

// The second round of a search: of the configurations with a first-round time in `first`, those
// within shortlist.within of the fastest (at most shortlist.most) timed again with `reps` runs a
// copy after a warm-up replay; the others negative.
std::vector<float> time_again_the_closest(cudaStream_t stream, const Streams& side, int reps,
                                          const std::vector<float>& first, const IndexedLaunch& launch,
                                          const Shortlist& shortlist, SearchPhases* phases) {
  std::vector<size_t> kept;
  for (size_t i = 0; i < first.size(); ++i)
    if (first[i] >= 0) kept.push_back(i);
  std::vector<float> ms(first.size(), -1.0f);
  if (kept.empty()) return ms;
  std::stable_sort(kept.begin(), kept.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  size_t keep = 1;
  while (keep < kept.size() && keep < shortlist.most && first[kept[keep]] <= shortlist.within * first[kept[0]]) ++keep;
  kept.resize(keep);
  const std::vector<float> second = time_each_side_by_side(
      stream, side, reps, kept.size(), [&](size_t i, size_t copy, cudaStream_t s) { return launch(kept[i], copy, s); },
      {Replays::WarmUpThenTimed, false, phases});
  for (size_t i = 0; i < kept.size(); ++i) ms[kept[i]] = second[i];
  return ms;
}

// The first round (one run a copy, one replay) of the configurations `which`, into `first`.
void time_first_round(cudaStream_t stream, const Streams& side, const std::vector<size_t>& which,
                      const IndexedLaunch& launch, const Shortlist& shortlist, SearchPhases* phases,
                      std::vector<float>& first) {
  const std::vector<float> ms = time_each_side_by_side(
      stream, side, 1, which.size(), [&](size_t i, size_t copy, cudaStream_t s) { return launch(which[i], copy, s); },
      {Replays::One, shortlist.first_alone, phases});
  for (size_t i = 0; i < which.size(); ++i) first[which[i]] = ms[i];
}

}  // namespace

std::vector<float> time_shortlisted(cudaStream_t stream, const Streams& side, int reps, size_t count,
                                    const IndexedLaunch& launch, const Shortlist& shortlist, SearchPhases* phases) {
  const std::vector<float> first =
      time_each_side_by_side(stream, side, 1, count, launch, {Replays::One, shortlist.first_alone, phases});
  return time_again_the_closest(stream, side, reps, first, launch, shortlist, phases);
}

LookedTimes time_after_first_look(cudaStream_t stream, const Streams& side, int reps, size_t count,
                                  const IndexedLaunch& launch, const Shortlist& shortlist, const FirstLook& look,
                                  SearchPhases* phases) {
  const size_t stride = std::max<size_t>(look.stride, 2);
  if (look.bar_ms <= 0 || count < stride * std::max<size_t>(look.least, 1))
    return {time_shortlisted(stream, side, reps, count, launch, shortlist, phases), 0, false};
  std::vector<size_t> sample, rest;
  for (size_t i = 0; i < count; ++i) (i % stride == 0 ? sample : rest).push_back(i);
  LookedTimes out;
  out.looked = sample.size();
  std::vector<float> first(count, -1.0f);
  time_first_round(stream, side, sample, launch, shortlist, phases, first);
  float best = -1;
  for (size_t i : sample)
    if (first[i] >= 0 && (best < 0 || first[i] < best)) best = first[i];
  // None of the sample ran: the others may, so they are timed (a refused launch is a configuration's).
  if (best > look.give_up * look.bar_ms) {
    out.ms = std::move(first);
    out.gave_up = true;
    return out;
  }
  time_first_round(stream, side, rest, launch, shortlist, phases, first);
  out.ms = time_again_the_closest(stream, side, reps, first, launch, shortlist, phases);
  return out;
}

}  // namespace cbt::cuda
