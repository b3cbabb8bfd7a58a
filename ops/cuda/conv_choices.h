// The convolution choices of a process, and their file.
//
// A choice is made once per convolution op, geometry and setting, and serves every learner
// and every GPU of the same model in the process (conv.cu searches on a miss). With
// --conv-choices FILE they also outlive the process: the file is read before the first
// search and written at the end, so that the next run on the same GPU model, cuDNN and CUDA
// searches only what is new (ResNet-20's searches take about 2 s of every start). The file
// itself is read and written by runtime/cuda/conv_choices_file.cpp.
//
// The file is text. Its first line names the format and the cuDNN and CUDA runtime versions
// (conv_choices_header); "device I SIGNATURE" lines name the GPUs its choices were made on
// (device_signature); each "choice" line is one choice (format_choice). A file of another
// version is ignored as a whole, a line that does not parse or names a direct-kernel
// configuration this build no longer offers is skipped: a stale or damaged file costs a
// search, never a wrong kernel.
#pragma once
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/depthwise_conv.h"
#include "ops/cuda/direct_conv.h"

namespace cbt::cuda {

// The algorithm chosen for one convolution op: an engine of cuDNN's backend API, or a legacy
// algorithm (a cuDNN algorithm enum of that op) with the math type it runs in. An engine
// choice keeps the legacy fallback algorithm for a call whose pointers the engine's plan
// cannot take; `ws` covers both. With `direct`, `direct_wgrad` or `depthwise` the op runs on a
// kernel of cbtrain's own instead.
struct DirectPlan {
  DirectConv conv;
  DirectConfig cfg;
};
struct DirectWgradPlan {
  DirectConv conv;
  WgradConfig cfg;
  size_t partial_bytes = 0;  // taken from the op's workspace
};
// A depthwise convolution's kernel for the op of its key (depthwise_conv.h); the backward filter
// takes partial_bytes of the op's workspace (0 for the others).
struct DepthwisePlan {
  DepthwiseConv conv;
  DepthwiseConfig cfg;
  size_t partial_bytes = 0;
};
// An AlgoChoice::algo not chosen yet: a bfloat16 engine's legacy backup, asked of cuDNN's
// heuristics only when a pointer off the engine's alignment needs it (conv.cu).
constexpr int kBackupLater = -1;

struct AlgoChoice {
  int algo = 0;  // the legacy algorithm, or kBackupLater
  cudnnMathType_t math = CUDNN_FMA_MATH;
  size_t ws = 0;
  std::optional<EngineId> engine;
  std::optional<DirectPlan> direct;             // forward or backward data
  std::optional<DirectWgradPlan> direct_wgrad;  // backward filter
  std::optional<DepthwisePlan> depthwise;       // any op
  bool runs_direct() const { return direct || direct_wgrad || depthwise; }
};

// What a choice is kept under (conv.cu's algo_key): the first GPU alike (first_device_alike),
// the op, the settings (TF32, determinism, --cudnn-algos, the copies timed side by side, the
// workspace budget, CBT_CONV_DIRECT), the geometry and the storage (ConvStorage: float32 NCHW
// or bfloat16 NHWC, whose choices differ for the same geometry).
struct AlgoKey {
  std::vector<int64_t> dims;
  bool operator<(const AlgoKey& o) const { return dims < o.dims; }
};
constexpr size_t kKeyDevice = 0, kKeyOp = 1, kKeyBudget = 6, kKeyGeometry = 8, kKeyStorage = 25, kKeyDims = 26;

// The process's choices; hold the mutex while using the map.
std::mutex& conv_choices_mutex();
std::map<AlgoKey, AlgoChoice>& conv_choices();

// One choice as a line of text ("choice ..."), and back: nullopt for a line that is not one
// (wrong field count, a value out of range, trailing text, a kernel of cbtrain's own for a
// bfloat16 convolution).
std::string format_choice(const AlgoKey& key, const AlgoChoice& c);
std::optional<std::pair<AlgoKey, AlgoChoice>> parse_choice(const std::string& line);

// Whether the direct or depthwise kernel's configuration a choice names (if any) is one this
// build offers for its convolution, with the partial-sum bytes this build computes for it.
bool choice_still_offered(const AlgoKey& key, const AlgoChoice& c);

// The first line of a file for this process: the format, cuDNN's and the CUDA runtime's
// versions.
std::string conv_choices_header();

// Adds the choices of a file read from `in` that the process does not know yet, for the GPUs
// `local(signature)` maps to this process's device index (-1: none here), and returns how
// many. A first line other than `header` reads nothing and says so in *why, as does a file
// whose GPUs are none of this process's.
size_t read_conv_choices(std::istream& in, const std::string& header,
                         const std::function<int(const std::string& signature)>& local, std::string* why);
// Writes the header, then every choice of the process with its GPU's signature; returns how
// many choices it wrote.
size_t write_conv_choices(std::ostream& out, const std::string& header,
                          const std::function<std::string(int device)>& signature);

// Forgets every choice of the process (tests).
void forget_conv_choices();

}  // namespace cbt::cuda
