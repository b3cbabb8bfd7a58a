// The rule that picks a cuDNN algorithm among the candidates.
#include "ops/cuda/algo_choice.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace cbt::cuda {

int choose_candidate(const std::vector<AlgoCandidate>& c, bool measured, double det_slack) {
  int first = -1;
  for (int i = 0; i < static_cast<int>(c.size()); ++i) {
    if (!c[i].usable) continue;
    if (first < 0) first = i;
    if (!c[i].deterministic) continue;
    // The first usable deterministic candidate is the fastest of them (measured order).
    if (!measured || i == first || c[i].ms <= c[first].ms * (1.0 + det_slack)) return i;
    break;
  }
  return first;
}

bool engine_allowed(const EngineNotes& n, EnginePrecision p, bool deterministic) {
  if (n.down_convert || n.reduced_precision || n.fft || n.runtime_compilation) return false;
  if (n.tensor_core && p == EnginePrecision::Float32) return false;
  return !(n.nondeterministic && deterministic);
}

double max_relative_error(EnginePrecision p) {
  return p == EnginePrecision::BFloat16 ? 1.6e-2 : p == EnginePrecision::Tf32 ? 5e-3 : 1e-4;
}

bool accurate_enough(double relative_error, EnginePrecision p) { return relative_error <= max_relative_error(p); }

// Find times each algorithm alone, but learners run many convolutions at once, and there the
// non-deterministic ones (atomic accumulation into the output) lose a margin of that size:
// ResNet-32 at batch 32 with 16 learners ran 7% faster with the deterministic backward-data
// algorithm (docs/bench/h100_fp32_2026-11-25c/ab/).
double deterministic_slack() {
  static const double slack = [] {
    const char* v = std::getenv("CBT_CONV_DET_SLACK");
    if (!v || !*v) return 0.25;
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    return *end == '\0' && x >= 0 ? x : 0.25;
  }();
  return slack;
}

int timing_concurrency(int learners) {
  static const int fixed = [] {
    const char* v = std::getenv("CBT_CONV_CONCURRENCY");
    if (!v || !*v) return 0;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    return *end == '\0' && x >= 1 && x <= 16 ? static_cast<int>(x) : 0;
  }();
  return fixed ? fixed : std::clamp(learners, 1, 8);
}

std::string device_signature(int device) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; later checks must not see it
    return {};
  }
  std::string name = p.name;
  std::replace(name.begin(), name.end(), ' ', '_');
  return name + " sm" + std::to_string(p.major) + "." + std::to_string(p.minor) + " mp" +
         std::to_string(p.multiProcessorCount) + " mem" + std::to_string(p.totalGlobalMem) + " smem" +
         std::to_string(p.sharedMemPerBlockOptin) + "/" + std::to_string(p.sharedMemPerMultiprocessor) + " l2" +
         std::to_string(p.l2CacheSize);
}

int first_device_alike(int device) {
  static std::mutex mutex;
  static std::map<int, int> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(device); it != known.end()) return it->second;
  int alike = device;
  const std::string mine = device_signature(device);
  if (!mine.empty())
    for (int d = 0; d < device; ++d)
      if (device_signature(d) == mine) {
        alike = d;
        break;
      }
  known.emplace(device, alike);
  return alike;
}

}  // namespace cbt::cuda
