// One convolution op through cuDNN's backend (graph) API: the engines its heuristics offer,
// each built into an execution plan and timed, one chosen; then the chosen engine rebuilt for
// each learner's handle and run. The legacy API (cudnnFind*) reaches only the algorithms of
// its enum; the engines include the implicit-GEMM kernels that PyTorch gets through this API.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ops/cuda/conv_geom.h"

namespace cbt::cuda {

enum class ConvOp : uint8_t { Forward, BackwardData, BackwardFilter };

// A 2-D convolution in cuDNN's terms: the image (N, C, H, W) convolved with the filter
// (M, C/G, KH, KW) gives the grid (N, M, OH, OW); symmetric padding. The dimensions are the
// logical ones; `storage` gives the type and the order in memory (and so the strides).
struct EngineConv {
  int64_t image[4] = {1, 1, 1, 1}, filter[4] = {1, 1, 1, 1}, grid[4] = {1, 1, 1, 1};
  int64_t pad[2] = {0, 0}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  ConvStorage storage = ConvStorage::Float32Nchw;
};

// Which engine: its global index and knob settings (what rebuilds it on another handle),
// the workspace it needs and whether cuDNN marks it non-deterministic.
struct EngineId {
  int64_t global_index = -1;
  std::vector<std::pair<int64_t, int64_t>> knobs;  // (cudnnBackendKnobType_t, value)
  size_t workspace = 0;
  bool deterministic = true;
  bool tensor_core = false;  // cuDNN notes it runs on tensor cores (TF32: only with --precision tf32)
  float ms = -1;             // milliseconds per copy as the search timed it
  bool operator==(const EngineId& o) const { return global_index == o.global_index && knobs == o.knobs; }
};

// Under ConvStorage::BFloat16Nhwc the search takes bfloat16's rules (EnginePrecision in
// algo_choice.h) whatever `tf32` says.
struct EngineSearch {
  bool tf32 = false;           // tensor-core (TF32) engines allowed
  bool deterministic = false;  // only engines cuDNN does not mark non-deterministic
  size_t workspace_budget = 0;
  double det_slack = 0.25;  // choose_candidate's slack for a deterministic engine
  int concurrency = 1;      // copies timed side by side (timing_concurrency; at most 16)
  bool log = false;         // every candidate and the choice to stderr
};

// Times the usable engines of cuDNN's heuristics (mode A's first eight, then the plain
// implicit-GEMM engine of its fallback list, the reference of the accuracy check) for `op` with
// buffers of its own, `search.concurrency` copies side by side in CUDA graphs (an engine that is
// fastest alone is not always fastest among many learners; time_shortlisted: all once, then those
// near the best three times), and returns the one choose_candidate takes; nullopt when none can be
// built or run (the caller then uses the legacy API). The returned id carries its measured time.
// Must not run inside a CUDA-graph capture.
std::optional<EngineId> choose_engine(cudnnHandle_t handle, cudaStream_t stream, const EngineConv& conv, ConvOp op,
                                      const EngineSearch& search);

// Loads what cuDNN's backend API loads on first use (its sub-libraries, the heuristics of each
// op, float32 and bfloat16) by building small operation graphs, asking the heuristics and
// building a plan, nothing run: library_warm_up.h calls it while the data set is read. Returns
// how many of the six (three ops, two storages) gave a plan; throws on a cuDNN error.
int warm_up_engines(cudnnHandle_t handle);

// The chosen engine's execution plan on one handle. run() binds the image, filter and grid
// (by their roles in `op`: Forward writes the grid, BackwardData the image, BackwardFilter
// the filter) and the workspace; the bindings of the last kBindings sets of pointers are kept,
// so that a step run again does not rebuild them, also where the convolution nodes of a
// program that share a geometry share one plan (conv.cu).
class EnginePlan {
 public:
  EnginePlan(cudnnHandle_t handle, const EngineConv& conv, ConvOp op, const EngineId& id);
  ~EnginePlan();
  EnginePlan(const EnginePlan&) = delete;
  EnginePlan& operator=(const EnginePlan&) = delete;
  void run(cudnnHandle_t handle, const void* image, const void* filter, const void* grid, void* workspace);
  size_t workspace() const { return workspace_; }

  struct Parts;  // the descriptors that the plan refers to

 private:
  static constexpr size_t kBindings = 32;
  std::unique_ptr<Parts> parts_;
  size_t workspace_ = 0;
};

// How many times run() has run a plan in this process (tests check that the convolutions
// take this path).
uint64_t engine_runs();
// How many engine searches (choose_engine) have timed `copies` copies side by side in this
// process (tests check that evaluation times its convolutions alone).
uint64_t engine_searches(int copies);

// Alignment in bytes that the plans assume of every pointer run() is given.
constexpr uintptr_t kEngineAlignment = 16;

}  // namespace cbt::cuda
