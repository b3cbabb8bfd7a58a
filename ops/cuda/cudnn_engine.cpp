// cuDNN's backend API for one convolution op: operation graph, heuristics, engine choice by
// timing, execution plans.
#include "ops/cuda/cudnn_engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "ops/cuda/algo_choice.h"
#include "ops/cuda/channels_last.h"
#include "ops/cuda/copy_timing.h"
#include "ops/cuda/cuda_context.h"
#include "ops/start_costs.h"

namespace cbt::cuda {
namespace {

// Owner of one backend descriptor.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) { CBT_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_)); }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Desc& operator=(Desc&& o) noexcept {
    std::swap(d_, o.d_);
    return *this;
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t* ptr() { return &d_; }

  template <class T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values, int64_t count = 1) {
    CBT_CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values));
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t name, const Desc& d) {
    cudnnBackendDescriptor_t raw = d.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw);
  }
  void finalize() { CBT_CUDNN_CHECK(cudnnBackendFinalize(d_)); }
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(d_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

std::atomic<uint64_t> g_engine_runs{0};
std::array<std::atomic<uint64_t>, 17> g_engine_searches{};  // by copies timed at once (1 to 16)

// Tensor unique ids by role.
constexpr int64_t kImage = 1, kFilter = 2, kGrid = 3;

// A tensor of logical dimensions (N, C, H, W) (a filter's (M, C/G, KH, KW)), stored in that
// order or, channels-last, as (N, H, W, C).
Desc tensor(int64_t uid, const int64_t (&dims)[4], ConvStorage storage) {
  const bool last = storage == ConvStorage::BFloat16Nhwc;
  const int64_t c = dims[1], h = dims[2], w = dims[3];
  const int64_t strides[4] = {c * h * w, last ? 1 : h * w, last ? w * c : w, last ? c : 1};
  const cudnnDataType_t type = last ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  const int64_t align = static_cast<int64_t>(kEngineAlignment);
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims, 4)
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides, 4)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align);
  t.finalize();
  return t;
}

}  // namespace

// The operation graph of one convolution op and everything it refers to.
struct EnginePlan::Parts {
  Desc image{CUDNN_BACKEND_TENSOR_DESCRIPTOR}, filter{CUDNN_BACKEND_TENSOR_DESCRIPTOR},
      grid{CUDNN_BACKEND_TENSOR_DESCRIPTOR};
  Desc conv{CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR};
  Desc op{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR};
  Desc graph{CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR};
  Desc engine{CUDNN_BACKEND_ENGINE_DESCRIPTOR};
  std::vector<Desc> knobs;
  Desc config{CUDNN_BACKEND_ENGINECFG_DESCRIPTOR};
  Desc plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  // Variant packs by their pointers (image, filter, grid, workspace), the last used at the back.
  struct Binding {
    std::array<const void*, 4> ptrs;
    Desc pack;
  };
  std::vector<Binding> bindings;
};

namespace {

using Parts = EnginePlan::Parts;

// The descriptor type of each convolution op and the attributes that name its tensors (by
// role: image, filter, grid), convolution and scaling factors.
struct OpAttrs {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t image, filter, grid, conv, alpha, beta;
};

OpAttrs attrs_of(ConvOp op) {
  switch (op) {
    case ConvOp::Forward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case ConvOp::BackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvOp::BackwardFilter:
      break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
}

// Fills the tensors, convolution, op and operation graph of `p` for `op` on `handle`.
void build_graph(Parts& p, cudnnHandle_t handle, const EngineConv& c, ConvOp op) {
  p.image = tensor(kImage, c.image, c.storage);
  p.filter = tensor(kFilter, c.filter, c.storage);
  p.grid = tensor(kGrid, c.grid, c.storage);
  const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t dims = 2;
  p.conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &dims)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, c.dilation, 2)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, c.stride, 2)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, c.pad, 2)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, c.pad, 2);
  p.conv.finalize();
  const float alpha = 1.0f, beta = 0.0f;
  const OpAttrs a = attrs_of(op);
  p.op = Desc(a.type);
  p.op.set_desc(a.image, p.image)
      .set_desc(a.filter, p.filter)
      .set_desc(a.grid, p.grid)
      .set_desc(a.conv, p.conv)
      .set(a.alpha, CUDNN_TYPE_FLOAT, &alpha)
      .set(a.beta, CUDNN_TYPE_FLOAT, &beta);
  p.op.finalize();
  p.graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle)
      .set_desc(CUDNN_ATTR_OPERATIONGRAPH_OPS, p.op);
  p.graph.finalize();
}

// The execution plan of `config` on `handle`, or CUDNN_STATUS_* of the failed finalize.
cudnnStatus_t build_plan(Parts& p, cudnnHandle_t handle, const Desc& config, size_t* workspace) {
  p.plan = Desc(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  p.plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle)
      .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
  cudnnStatus_t st = p.plan.try_finalize();
  if (st != CUDNN_STATUS_SUCCESS) return st;
  int64_t n = 0, bytes = 0;
  st =
      cudnnBackendGetAttribute(p.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &bytes);
  *workspace = static_cast<size_t>(std::max<int64_t>(bytes, 0));
  return st;
}

// The engine of a heuristics result: identity and notes.
struct Candidate {
  EngineId id;
  EngineNotes notes;
  bool fallback = false;  // from the fallback list: the plain implicit-GEMM engines
  Desc config{CUDNN_BACKEND_ENGINECFG_DESCRIPTOR};
  std::optional<Desc> engine;  // the engine of `config` where it was built here (engine_by_index)
};

bool describe(Candidate& c) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t n = 0;
  if (cudnnBackendGetAttribute(c.config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                               engine.ptr()) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                               &c.id.global_index) != CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t nn = 0;
  if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nn, notes) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < nn; ++i) {
    switch (notes[i]) {
      case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
        c.notes.tensor_core = true;
        break;
      case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
        c.notes.down_convert = true;
        break;
      case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
        c.notes.reduced_precision = true;
        break;
      case CUDNN_NUMERICAL_NOTE_FFT:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
        c.notes.fft = true;
        break;
      case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
        c.notes.nondeterministic = true;
        break;
      default:
        break;
    }
  }
  cudnnBackendBehaviorNote_t behaviour[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  int64_t nb = 0;
  if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &nb, behaviour) == CUDNN_STATUS_SUCCESS)
    for (int64_t i = 0; i < nb; ++i)
      if (behaviour[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) c.notes.runtime_compilation = true;
  c.id.deterministic = !c.notes.nondeterministic;
  // The knob settings: how to build the same configuration on another handle.
  std::vector<Desc> knobs;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) knobs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (auto& k : knobs) raw.push_back(k.get());
  int64_t nk = 0;
  if (cudnnBackendGetAttribute(c.config.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               static_cast<int64_t>(raw.size()), &nk, raw.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < nk; ++i) {
    cudnnBackendKnobType_t type{};
    int64_t value = 0, m = 0;
    if (cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &m, &type) !=
            CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &m, &value) !=
            CUDNN_STATUS_SUCCESS)
      return false;
    c.id.knobs.emplace_back(static_cast<int64_t>(type), value);
  }
  return true;
}

// The engine configurations cuDNN's heuristics of `mode` propose, in their order.
std::vector<Candidate> heuristics(const Parts& p, cudnnBackendHeurMode_t mode) {
  std::vector<Candidate> out;
  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, p.graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
  if (heur.try_finalize() != CUDNN_STATUS_SUCCESS) return out;
  int64_t count = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) != CUDNN_STATUS_SUCCESS ||
      count <= 0)
    return out;
  out.resize(static_cast<size_t>(count));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (auto& c : out) raw.push_back(c.config.get());
  int64_t got = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                               raw.data()) != CUDNN_STATUS_SUCCESS)
    return {};
  out.resize(static_cast<size_t>(std::clamp<int64_t>(got, 0, count)));
  return out;
}

// Engine `index` of the operation graph with its default knobs, as the fallback list would give
// it; nullopt when cuDNN does not offer it for this graph.
std::optional<Candidate> engine_by_index(const Parts& p, int64_t index) {
  Candidate c;
  Desc& engine = c.engine.emplace(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  engine.set_desc(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, p.graph)
      .set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, &index);
  if (engine.try_finalize() != CUDNN_STATUS_SUCCESS) return std::nullopt;
  c.config.set_desc(CUDNN_ATTR_ENGINECFG_ENGINE, engine);
  if (c.config.try_finalize() != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return c;
}

size_t numel_of(const int64_t (&d)[4]) { return static_cast<size_t>(d[0] * d[1] * d[2] * d[3]); }

Desc variant_pack(const void* image, const void* filter, const void* grid, void* ws) {
  const int64_t uids[3] = {kImage, kFilter, kGrid};
  void* ptrs[3] = {const_cast<void*>(image), const_cast<void*>(filter), const_cast<void*>(grid)};
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, 3)
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs, 3)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &ws);
  pack.finalize();
  return pack;
}

const char* op_name(ConvOp op) {
  return op == ConvOp::Forward ? "forward" : op == ConvOp::BackwardData ? "backward-data" : "backward-filter";
}

}  // namespace

std::optional<EngineId> choose_engine(cudnnHandle_t handle, cudaStream_t stream, const EngineConv& conv, ConvOp op,
                                      const EngineSearch& search) {
  CBT_CUDNN_CHECK(cudnnSetStream(handle, stream));
  const bool bf16 = conv.storage == ConvStorage::BFloat16Nhwc;
  const EnginePrecision precision = bf16 ? EnginePrecision::BFloat16 : float_precision(search.tf32);
  // The phases go to CBT_LOG_START's totals on every path out, and to the log when asked for.
  struct Laps : SearchPhases {
    ~Laps() {
      for (const auto& [name, ms] : laps()) add_start_cost("engine searches' " + name, ms);
    }
  } laps;
  SearchPhases* phases = &laps;
  Parts p;
  build_graph(p, handle, conv, op);
  lap(phases, "graph");
  // The heuristics' first few allowed engines, then the plain implicit-GEMM engine of the
  // legacy algorithms (engine 0, the first of the fallback list, built directly: asking for the
  // whole fallback list took about 8 ms a convolution, half of a search), without repeats. Where
  // engine 0 cannot be built, the fallback list is asked for.
  constexpr size_t kMaxHeuristic = 8;
  std::vector<Candidate> cands;
  // A fallback engine that mode A also gave is marked as one (engine 0 is often both).
  auto add = [&](Candidate& c, bool fallback, bool described) {
    if (!(described || describe(c)) || !engine_allowed(c.notes, precision, search.deterministic)) return;
    auto seen = std::find_if(cands.begin(), cands.end(), [&](const Candidate& o) { return o.id == c.id; });
    if (seen != cands.end()) {
      seen->fallback = seen->fallback || fallback;
      return;
    }
    c.fallback = fallback;
    cands.push_back(std::move(c));
  };
  for (Candidate& c : heuristics(p, CUDNN_HEUR_MODE_A)) {
    if (cands.size() >= kMaxHeuristic) break;
    add(c, false, false);
  }
  lap(phases, "heuristics");
  // The reference of float32 is never a tensor-core engine, so that TF32 engines are measured
  // against float32 sums; bfloat16's may be one (its products are exact, its sums float32).
  auto plain_enough = [&](const Candidate& c) { return c.id.deterministic && (bf16 || !c.notes.tensor_core); };
  if (std::optional<Candidate> plain = engine_by_index(p, 0); plain && describe(*plain) && plain_enough(*plain)) {
    add(*plain, true, true);
  } else {
    for (Candidate& c : heuristics(p, CUDNN_HEUR_MODE_FALLBACK)) add(c, true, false);
  }
  lap(phases, "fallbacks");
  struct Timed {
    size_t index;
    float ms;
    double build_ms;  // of the plan, for the log
    double err;       // relative to the reference's result
  };
  // The plain implicit-GEMM engines of the fallback list first: the first of them that runs is
  // the reference the others' results are compared with (below).
  auto is_plain = [&](size_t i) { return cands[i].fallback && plain_enough(cands[i]); };
  std::vector<size_t> order;
  for (size_t i = 0; i < cands.size(); ++i)
    if (is_plain(i)) order.push_back(i);
  for (size_t i = 0; i < cands.size(); ++i)
    if (!is_plain(i)) order.push_back(i);
  // Every candidate's plan first: the timing below takes them all in one CUDA graph.
  struct Built {
    size_t index;
    Desc plan;
    size_t workspace;
    double build_ms;
  };
  std::vector<Built> built;
  for (size_t i : order) {
    size_t ws = 0;
    const auto t = std::chrono::steady_clock::now();
    if (build_plan(p, handle, cands[i].config, &ws) != CUDNN_STATUS_SUCCESS || ws > search.workspace_budget) continue;
    built.push_back({i, std::move(p.plan), ws,
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count()});
  }
  lap(phases, "plans");
  std::vector<Timed> timed;
  const size_t copies = static_cast<size_t>(std::clamp(search.concurrency, 1, 16));
  {  // the timing's buffers and streams, freed at the end of this block
    // Inputs shared by the copies; an output and a workspace each. The candidates run one after
    // another, so a copy's workspace serves all of them: it is as large as the largest needs, and
    // when that cannot be had, the candidates that need the most are left out.
    // bfloat16 results are compared as floats: `widened` holds the one being checked, and the
    // reference is kept widened.
    const size_t out_count = numel_of(op == ConvOp::Forward        ? conv.grid
                                      : op == ConvOp::BackwardData ? conv.image
                                                                   : conv.filter);
    const size_t elem = conv_element_bytes(conv.storage);
    DeviceBuffer image(numel_of(conv.image) * elem), filter(numel_of(conv.filter) * elem),
        grid(numel_of(conv.grid) * elem), reference(out_count * sizeof(float)),
        widened(bf16 ? out_count * sizeof(float) : 0), error_scratch(relative_error_scratch_bytes);
    if (!image.p || !filter.p || !grid.p || !reference.p || (bf16 && !widened.p) || !error_scratch.p)
      return std::nullopt;
    auto fill = [&](DeviceBuffer& b, const int64_t(&dims)[4], uint64_t seed) {
      if (bf16)
        b.fill_random_bf16(numel_of(dims), seed);
      else
        b.fill_random(numel_of(dims), seed);
    };
    fill(image, conv.image, 1);
    fill(filter, conv.filter, 2);
    fill(grid, conv.grid, 3);
    std::vector<std::unique_ptr<DeviceBuffer>> outs, workspaces;
    for (size_t c = 0; c < copies; ++c) {
      outs.push_back(std::make_unique<DeviceBuffer>(out_count * elem));
      if (!outs.back()->p) return std::nullopt;
    }
    while (!built.empty()) {
      size_t ws = 0;
      for (const Built& b : built) ws = std::max(ws, b.workspace);
      workspaces.clear();
      bool got = true;
      for (size_t c = 0; got && c < copies; ++c) {
        workspaces.push_back(std::make_unique<DeviceBuffer>(ws));
        got = ws == 0 || workspaces.back()->p;
      }
      if (got) break;
      std::erase_if(built, [&](const Built& b) { return b.workspace == ws; });
    }
    if (built.empty()) return std::nullopt;
    std::vector<Desc> packs;
    for (size_t c = 0; c < copies; ++c) {
      void* out = outs[c]->p;
      packs.push_back(variant_pack(op == ConvOp::BackwardData ? out : image.p,
                                   op == ConvOp::BackwardFilter ? out : filter.p, op == ConvOp::Forward ? out : grid.p,
                                   workspaces[c]->p));
    }
    lap(phases, "buffers");
    Streams side(copies);
    lap(phases, "streams");
    g_engine_searches[copies].fetch_add(1, std::memory_order_relaxed);
    // Each plan runs once outside the graph (an engine's first run may set itself up), and its
    // result is compared, on the device, with the reference's: engines whose notes do not say so
    // may still compute in a way far from FMA rounding (a Winograd backward-filter engine was 1%
    // off on LeNet-5's first convolution). The reference is a plain engine (plain_enough). Only
    // the accurate ones are timed.
    std::vector<const Built*> runs;
    std::vector<size_t> timed_of_run;
    bool have_reference = false;
    for (const Built& b : built) {
      if (cudnnBackendExecute(handle, b.plan.get(), packs[0].get()) != CUDNN_STATUS_SUCCESS) {
        (void)cudaGetLastError();
        continue;
      }
      double err = 0;
      const DeviceBuffer* result = outs[0].get();
      if (bf16) {
        widen_bf16(outs[0]->p, widened.p, out_count, stream);
        result = &widened;
      }
      if (!have_reference && is_plain(b.index)) {
        CBT_CUDA_CHECK(
            cudaMemcpyAsync(reference.p, result->p, out_count * sizeof(float), cudaMemcpyDeviceToDevice, stream));
        have_reference = true;
      } else if (have_reference) {
        err = relative_error(*result, reference, out_count, stream, &error_scratch);
      }
      cands[b.index].id.workspace = b.workspace;
      timed.push_back({b.index, -1.0f, b.build_ms, err});
      if (!accurate_enough(err, precision)) continue;
      timed_of_run.push_back(timed.size() - 1);
      runs.push_back(&b);
    }
    lap(phases, "checks");
    if (!have_reference) return std::nullopt;  // nothing to check the others against: the legacy API decides
    // Then timed in CUDA graphs, copies side by side as the learners of a GPU run them: every one
    // once a copy, then those within reach of the best (the deterministic slack included) with 3
    // runs a copy (time_shortlisted).
    const Shortlist shortlist{std::max(1.5f, 1.0f + static_cast<float>(search.det_slack)), 16, false};
    const std::vector<float> ms = time_shortlisted(
        stream, side, 3, runs.size(),
        [&](size_t i, size_t copy, cudaStream_t s) {
          return cudnnSetStream(handle, s) == CUDNN_STATUS_SUCCESS &&
                 cudnnBackendExecute(handle, runs[i]->plan.get(), packs[copy].get()) == CUDNN_STATUS_SUCCESS;
        },
        shortlist, phases);
    CBT_CUDNN_CHECK(cudnnSetStream(handle, stream));
    for (size_t i = 0; i < runs.size(); ++i) timed[timed_of_run[i]].ms = ms[i];
  }
  lap(phases, "free");
  // In the candidates' order again (ties of time keep it).
  std::sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.index < b.index; });
  std::string log;
  std::vector<Timed> accurate;
  for (const Timed& t : timed) {
    const Candidate& c = cands[t.index];
    const bool accurate_ok = accurate_enough(t.err, precision);
    if (accurate_ok && t.ms >= 0) accurate.push_back(t);
    if (search.log) {
      char buf[112];
      std::snprintf(buf, sizeof buf, " e%lld/%zuk/%.4fms/%zuB/%s%s/err%.1e/plan%.1fms%s",
                    static_cast<long long>(c.id.global_index), c.id.knobs.size(), t.ms, c.id.workspace,
                    c.id.deterministic ? "det" : "nondet", c.notes.tensor_core ? "/tc" : "", t.err, t.build_ms,
                    !accurate_ok ? "(rejected)"
                    : t.ms < 0   ? "(left out)"
                                 : "");
      log += buf;
    }
  }
  timed = std::move(accurate);
  if (timed.empty()) return std::nullopt;
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.ms < b.ms; });
  std::vector<AlgoCandidate> ranked;
  for (const Timed& t : timed) ranked.push_back({t.ms, cands[t.index].id.deterministic, true});
  const int chosen = choose_candidate(ranked, true, search.det_slack);
  if (chosen < 0) return std::nullopt;
  Candidate& taken = cands[timed[static_cast<size_t>(chosen)].index];
  EngineId& id = taken.id;
  id.ms = timed[static_cast<size_t>(chosen)].ms;
  id.tensor_core = taken.notes.tensor_core;
  if (search.log)
    std::fprintf(stderr,
                 "cbtrain conv engines: %s%s x%zu image=(%lld,%lld,%lld,%lld) filter=(%lld,%lld,%lld,%lld) s=%lld "
                 "candidates:%s chosen: e%lld (%zu B; searched in %.1f ms: %s)\n",
                 op_name(op), bf16 ? " bf16-nhwc" : "", copies, static_cast<long long>(conv.image[0]),
                 static_cast<long long>(conv.image[1]), static_cast<long long>(conv.image[2]),
                 static_cast<long long>(conv.image[3]), static_cast<long long>(conv.filter[0]),
                 static_cast<long long>(conv.filter[1]), static_cast<long long>(conv.filter[2]),
                 static_cast<long long>(conv.filter[3]), static_cast<long long>(conv.stride[0]), log.c_str(),
                 static_cast<long long>(id.global_index), id.workspace, phases->total_ms(), phases->str().c_str());
  return id;
}

int warm_up_engines(cudnnHandle_t handle) {
  int plans = 0;
  for (ConvStorage storage : {ConvStorage::Float32Nchw, ConvStorage::BFloat16Nhwc})
    for (ConvOp op : {ConvOp::Forward, ConvOp::BackwardData, ConvOp::BackwardFilter}) {
      EngineConv c;  // 8 images of 8 channels, 8 x 8, a 3 x 3 filter padded by 1
      const int64_t image[4] = {8, 8, 8, 8}, filter[4] = {8, 8, 3, 3};
      std::copy(image, image + 4, c.image);
      std::copy(image, image + 4, c.grid);
      std::copy(filter, filter + 4, c.filter);
      c.pad[0] = c.pad[1] = 1;
      c.storage = storage;
      Parts p;
      build_graph(p, handle, c, op);
      std::vector<Candidate> cands = heuristics(p, CUDNN_HEUR_MODE_A);
      size_t workspace = 0;
      if (!cands.empty() && build_plan(p, handle, cands.front().config, &workspace) == CUDNN_STATUS_SUCCESS) ++plans;
    }
  return plans;
}

EnginePlan::EnginePlan(cudnnHandle_t handle, const EngineConv& conv, ConvOp op, const EngineId& id)
    : parts_(std::make_unique<Parts>()) {
  Parts& p = *parts_;
  build_graph(p, handle, conv, op);
  p.engine.set_desc(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, p.graph)
      .set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, &id.global_index);
  p.engine.finalize();
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const auto& [type, value] : id.knobs) {
    const auto t = static_cast<cudnnBackendKnobType_t>(type);
    Desc& k = p.knobs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    k.set(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, &t)
        .set(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, &value);
    k.finalize();
    raw.push_back(k.get());
  }
  p.config.set_desc(CUDNN_ATTR_ENGINECFG_ENGINE, p.engine);
  if (!raw.empty())
    p.config.set(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw.data(),
                 static_cast<int64_t>(raw.size()));
  p.config.finalize();
  CBT_CUDNN_CHECK(build_plan(p, handle, p.config, &workspace_));
}

EnginePlan::~EnginePlan() = default;

void EnginePlan::run(cudnnHandle_t handle, const void* image, const void* filter, const void* grid, void* workspace) {
  const std::array<const void*, 4> now{image, filter, grid, workspace};
  std::vector<Parts::Binding>& b = parts_->bindings;
  auto hit = std::find_if(b.rbegin(), b.rend(), [&](const Parts::Binding& x) { return x.ptrs == now; });
  if (hit == b.rend()) {
    if (b.size() >= kBindings) b.erase(b.begin());  // the least recently used
    b.push_back({now, variant_pack(image, filter, grid, workspace)});
  } else if (hit != b.rbegin()) {
    std::rotate(hit.base() - 1, hit.base(), b.end());  // to the back
  }
  CBT_CUDNN_CHECK(cudnnBackendExecute(handle, parts_->plan.get(), b.back().pack.get()));
  g_engine_runs.fetch_add(1, std::memory_order_relaxed);
}

uint64_t engine_runs() { return g_engine_runs.load(std::memory_order_relaxed); }

uint64_t engine_searches(int copies) {
  return copies >= 1 && copies <= 16 ? g_engine_searches[static_cast<size_t>(copies)].load(std::memory_order_relaxed)
                                     : 0;
}

}  // namespace cbt::cuda
