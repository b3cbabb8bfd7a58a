// Conv and ConvTranspose CUDA kernels, forward and backward, over cuDNN and, where they are
// faster, cbtrain's direct and depthwise kernels (own_conv_choice.h; a channels_last=1 node is
// bfloat16 NHWC and cuDNN's alone: conv_bf16.h). Descriptors are cached per node, the choices per
// geometry and storage (measured once per process, or read with --conv-choices: conv_choices.h);
// padding cuDNN cannot express is applied by padding the image explicitly into the workspace.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ops/cuda/algo_choice.h"
#include "ops/cuda/conv_bf16.h"
#include "ops/cuda/conv_choices.h"
#include "ops/cuda/conv_geom.h"
#include "ops/cuda/copy_timing.h"
#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/cudnn_util.h"
#include "ops/cuda/dense_util.cuh"
#include "ops/cuda/fused_relu.cuh"
#include "ops/cuda/own_conv_choice.h"
#include "ops/env_switch.h"
#include "ops/start_costs.h"

namespace cbt::cuda {
namespace {

ConvGeom make_geom(const Node& node, const Shape& img, const Shape& grid, const Shape& w, bool transpose) {
  size_t nd = w.size() - 2;
  std::vector<int64_t> ones(nd, 1), zeros(nd, 0);
  auto s = node.attrs.get_ints("strides", ones);
  auto d = node.attrs.get_ints("dilations", ones);
  auto pads = node.attrs.get_ints("pads", std::vector<int64_t>(2 * nd, 0));
  auto out_pad = transpose ? node.attrs.get_ints("output_padding", zeros) : zeros;
  std::string ap = node.attrs.get_string("auto_pad", "NOTSET");
  bool derive = ap == "SAME_UPPER" || ap == "SAME_LOWER" || (transpose && node.attrs.has("output_shape"));
  std::vector<int64_t> pb(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    int64_t eff = (w[2 + i] - 1) * d[i] + 1;
    if (derive) {
      int64_t total = std::max<int64_t>(0, (grid[2 + i] - 1) * s[i] + out_pad[i] + eff - img[2 + i]);
      pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (ap != "VALID") {
      pb[i] = pads[i];
    }
  }
  ConvGeom g;
  g.N = img[0], g.Ci = img[1], g.Cg = grid[1], g.G = node.attrs.get_int("group", 1);
  size_t o = nd == 2 ? 1 : 0;  // index of the W axis among the spatial dims
  if (nd == 2) g.H = img[2], g.KH = w[2], g.SH = s[0], g.DH = d[0], g.PH = pb[0], g.OH = grid[2];
  g.W = img[2 + o], g.KW = w[2 + o], g.SW = s[o], g.DW = d[o], g.PW = pb[o], g.OW = grid[2 + o];
  auto fits = [](int64_t in, int64_t k, int64_t st, int64_t dil, int64_t p, int64_t out) {
    int64_t span = in + 2 * p - ((k - 1) * dil + 1);
    return span >= 0 && span / st + 1 == out;
  };
  g.explicit_pad = !fits(g.H, g.KH, g.SH, g.DH, g.PH, g.OH) || !fits(g.W, g.KW, g.SW, g.DW, g.PW, g.OW);
  g.HP = (g.OH - 1) * g.SH + (g.KH - 1) * g.DH + 1;
  g.WP = (g.OW - 1) * g.SW + (g.KW - 1) * g.DW + 1;
  g.storage = conv_storage(node, transpose);
  return g;
}

// Per-node cuDNN state: descriptors and one algorithm per convolution op the node runs (with
// its execution plan on this node's handle when it is an engine, shared with the context's other
// nodes of the same geometry).
struct ConvPlan {
  ConvGeom g;
  TensorDesc image, grid;  // image: the padded extent when g.explicit_pad
  FilterDesc filter;
  ConvDesc conv;
  AlgoChoice algo[3];  // by ConvOp
  std::shared_ptr<EnginePlan> engine[3];
  std::shared_ptr<void> arrivals;  // the bias gradient's channel_reduce counters
  const AlgoChoice& of(ConvOp op) const { return algo[static_cast<int>(op)]; }
  EnginePlan* engine_of(ConvOp op) const { return engine[static_cast<int>(op)].get(); }
  size_t algo_ws() const { return std::max({algo[0].ws, algo[1].ws, algo[2].ws}); }
  size_t pad_bytes() const { return g.explicit_pad ? Scratch::aligned(g.padded_numel() * sizeof(float)) : 0; }
};

// FFT and non-fused Winograd trade accuracy for speed: their float32 error reaches ~5e-4 of
// the output's scale (seen against the CPU on a LeNet-size filter gradient), far from FMA
// rounding, so cbtrain does not use them.
bool accurate(cudnnConvolutionFwdAlgo_t a) {
  return a != CUDNN_CONVOLUTION_FWD_ALGO_FFT && a != CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool accurate(cudnnConvolutionBwdDataAlgo_t a) {
  return a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT && a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool accurate(cudnnConvolutionBwdFilterAlgo_t a) {
  return a != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT && a != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// Whether cuDNN's candidate `p` may be used: successful, accurate, of an allowed math type
// (conv_math_allowed), deterministic under --deterministic, within the workspace `budget` (its
// size from `ws_size`, which needs the candidate's math type set on the descriptor).
template <class Perf, class WsFn>
bool usable(const Perf& p, const ConvPlan& plan, const CudaContext& cc, size_t budget, WsFn ws_size, size_t& need) {
  if (p.status != CUDNN_STATUS_SUCCESS || !conv_math_allowed(p.mathType, plan.g, cc.tf32)) return false;
  if (!accurate(p.algo)) return false;
  if (cc.deterministic && p.determinism != CUDNN_DETERMINISTIC) return false;
  CBT_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv, p.mathType));
  need = 0;
  return ws_size(p.algo, &need) == CUDNN_STATUS_SUCCESS && need <= budget;
}

template <class Algo, class WsFn>
AlgoChoice fallback_choice(const ConvPlan& plan, size_t budget, WsFn ws_size, Algo fallback, const char* what);

// The algorithm for one convolution op out of cuDNN's ranking `perf`, by choose_candidate
// (measured or heuristic order, deterministic_slack()). When no candidate qualifies,
// `fallback` (an implicit-GEMM algorithm, deterministic and supported for every float32
// convolution) with FMA math.
template <class Perf, class Algo, class WsFn>
AlgoChoice pick_algo(const Perf* perf, int n, bool measured, const ConvPlan& plan, const CudaContext& cc, size_t budget,
                     WsFn ws_size, Algo fallback, const char* what) {
  std::vector<AlgoCandidate> cands(static_cast<size_t>(n));
  std::vector<size_t> ws_need(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    cands[i].usable = usable(perf[i], plan, cc, budget, ws_size, ws_need[i]);
    cands[i].deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
    cands[i].ms = perf[i].time;
  }
  const int chosen = choose_candidate(cands, measured, deterministic_slack());
  if (chosen >= 0) return {static_cast<int>(perf[chosen].algo), perf[chosen].mathType, ws_need[chosen]};
  return fallback_choice(plan, budget, ws_size, fallback, what);
}

// The legacy `fallback` algorithm with FMA math (bfloat16: tensor cores allowed), or a model
// error when its workspace does not fit `budget`.
template <class Algo, class WsFn>
AlgoChoice fallback_choice(const ConvPlan& plan, size_t budget, WsFn ws_size, Algo fallback, const char* what) {
  const cudnnMathType_t math = conv_default_math(plan.g, false);
  CBT_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv, math));
  size_t need = 0;
  bool ok = ws_size(fallback, &need) == CUDNN_STATUS_SUCCESS && need <= budget;
  CBT_MODEL_CHECK(ok, "cuDNN offers no ", what, " algorithm for a convolution of image (", plan.g.N, ", ", plan.g.Ci,
                  ", ", plan.g.H, ", ", plan.g.W, ") within ", budget, " bytes of workspace");
  return {static_cast<int>(fallback), math, need};
}

// cuDNN's calls for one convolution op: its candidates (timed by Find, or the heuristic
// ranking), an algorithm's workspace size, and the fallback (an implicit-GEMM algorithm,
// deterministic and supported for every float32 convolution).
template <ConvOp op>
struct OpCalls;
template <>
struct OpCalls<ConvOp::Forward> {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr Algo kFallback = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  static constexpr const char* kName = "forward";
  static cudnnStatus_t rank(cudnnHandle_t h, const ConvPlan& p, bool measure, Perf* perf, int* n) {
    return measure ? cudnnFindConvolutionForwardAlgorithm(h, p.image, p.filter, p.conv, p.grid, 16, n, perf)
                   : cudnnGetConvolutionForwardAlgorithm_v7(h, p.image, p.filter, p.conv, p.grid, 16, n, perf);
  }
  static cudnnStatus_t ws(cudnnHandle_t h, const ConvPlan& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, p.image, p.filter, p.conv, p.grid, a, bytes);
  }
};
template <>
struct OpCalls<ConvOp::BackwardData> {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr Algo kFallback = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  static constexpr const char* kName = "backward-data";
  static cudnnStatus_t rank(cudnnHandle_t h, const ConvPlan& p, bool measure, Perf* perf, int* n) {
    return measure ? cudnnFindConvolutionBackwardDataAlgorithm(h, p.filter, p.grid, p.conv, p.image, 16, n, perf)
                   : cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.filter, p.grid, p.conv, p.image, 16, n, perf);
  }
  static cudnnStatus_t ws(cudnnHandle_t h, const ConvPlan& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.filter, p.grid, p.conv, p.image, a, bytes);
  }
};
template <>
struct OpCalls<ConvOp::BackwardFilter> {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static constexpr Algo kFallback = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  static constexpr const char* kName = "backward-filter";
  static cudnnStatus_t rank(cudnnHandle_t h, const ConvPlan& p, bool measure, Perf* perf, int* n) {
    return measure ? cudnnFindConvolutionBackwardFilterAlgorithm(h, p.image, p.grid, p.conv, p.filter, 16, n, perf)
                   : cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p.image, p.grid, p.conv, p.filter, 16, n, perf);
  }
  static cudnnStatus_t ws(cudnnHandle_t h, const ConvPlan& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.image, p.grid, p.conv, p.filter, a, bytes);
  }
};

// With CBT_LOG_CONV_ALGOS=1 in the environment, every algorithm choice is written to stderr:
// the convolution, cuDNN's candidates in its order (algorithm, milliseconds when measured,
// workspace bytes, math type, determinism) and the one taken.
bool log_conv_algos() {
  static const bool on = env_switch_on("CBT_LOG_CONV_ALGOS");
  return on;
}

template <class Perf>
void log_choice(const char* what, const ConvGeom& g, const Perf* perf, int n, const AlgoChoice& c) {
  std::string line = std::string("cbtrain conv algos: ") + what + " N=" + std::to_string(g.N) +
                     " C=" + std::to_string(g.Ci) + " H=" + std::to_string(g.H) + " W=" + std::to_string(g.W) +
                     " M=" + std::to_string(g.Cg) + " k=" + std::to_string(g.KH) + "x" + std::to_string(g.KW) +
                     " s=" + std::to_string(g.SH) + " G=" + std::to_string(g.G) + " candidates:";
  char buf[96];
  for (int i = 0; i < n; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    std::snprintf(buf, sizeof buf, " %d/%.4fms/%zuB/%s/%s", static_cast<int>(perf[i].algo), perf[i].time,
                  perf[i].memory, perf[i].mathType == CUDNN_FMA_MATH ? "fma" : "tc",
                  perf[i].determinism == CUDNN_DETERMINISTIC ? "det" : "nondet");
    line += buf;
  }
  std::fprintf(stderr, "%s chosen: %d (%zu B)\n", line.c_str(), c.algo, c.ws);
}

// The legacy algorithm of cuDNN's ranking (timed by Find when `measure`, else the heuristics').
template <ConvOp op>
AlgoChoice legacy_choice(const CudaContext& cc, const ConvPlan& p, size_t budget, bool measure) {
  using Calls = OpCalls<op>;
  auto ws = [&](typename Calls::Algo a, size_t* bytes) { return Calls::ws(cc.cudnn, p, a, bytes); };
  typename Calls::Perf perf[16];
  int n = 0;
  CBT_CUDNN_CHECK(Calls::rank(cc.cudnn, p, measure, perf, &n));
  AlgoChoice c = pick_algo(perf, n, measure, p, cc, budget, ws, Calls::kFallback, Calls::kName);
  if (log_conv_algos()) log_choice(Calls::kName, p.g, perf, n, c);
  return c;
}

// By default the engines of cuDNN's backend API are timed on buffers of their own (the first
// run of a step program, never inside a CUDA-graph capture); when none can run, or with
// --cudnn-algos find, Find runs every legacy algorithm once on cuDNN's own buffers; with
// --cudnn-algos heuristic the legacy ranking decides without timing.
template <ConvOp op>
AlgoChoice choose_algo(const CudaContext& cc, const ConvPlan& p, size_t budget) {
  using Calls = OpCalls<op>;
  auto ws = [&](typename Calls::Algo a, size_t* bytes) { return Calls::ws(cc.cudnn, p, a, bytes); };
  const bool own_kernels = p.g.storage == ConvStorage::Float32Nchw;  // cbtrain's kernels: float32 NCHW only
  if (cc.conv_algos == ConvAlgos::Engines) {
    EngineSearch search{
        cc.tf32,         cc.deterministic, budget, deterministic_slack(), timing_concurrency(cc.conv_concurrency),
        log_conv_algos()};
    if (auto id = choose_engine(cc.cudnn, cc.stream, engine_conv(p.g), op, search)) {
      // The legacy backup for misaligned pointers: float32's the fallback algorithm; bfloat16's
      // from the heuristics, asked only when a pointer needs it (ConvRunner::use; 2 ms a search).
      std::optional<StartCost> cost(std::in_place, "legacy backups");
      AlgoChoice c = own_kernels ? fallback_choice(p, budget, ws, Calls::kFallback, Calls::kName)
                                 : AlgoChoice{kBackupLater, conv_default_math(p.g, false), 0};
      cost.emplace("own kernels' searches");
      c.ws = std::max(c.ws, id->workspace);
      if constexpr (op == ConvOp::BackwardFilter) {
        if (own_kernels)
          c.direct_wgrad = choose_direct_wgrad_plan(cc, p.g, id->ms, search.concurrency, budget, search.log);
        if (c.direct_wgrad) c.ws = std::max(c.ws, c.direct_wgrad->partial_bytes);
      } else if (own_kernels) {
        c.direct = choose_direct_plan(cc, p.g, op, id->ms, search.concurrency, search.log);
      }
      // Exclusive with the direct kernels: depthwise_form takes two groups or more, direct_form one.
      if (own_kernels) c.depthwise = choose_depthwise_plan(cc, p.g, op, id->ms, search.concurrency, budget, search.log);
      if (c.depthwise) c.ws = std::max(c.ws, c.depthwise->partial_bytes);
      c.engine = std::move(id);
      return c;
    }
  }
  return legacy_choice<op>(cc, p, budget, cc.conv_algos != ConvAlgos::Heuristic);
}

// The key of a choice (conv_choices.h; geom_of_key reads the geometry back from it).
AlgoKey algo_key(const CudaContext& cc, const ConvGeom& g, ConvOp op, size_t budget) {
  // Only the engines are timed with the learners' concurrency: a legacy choice holds for any.
  const int64_t concurrency = cc.conv_algos == ConvAlgos::Engines ? timing_concurrency(cc.conv_concurrency) : 1;
  // One search serves every GPU of the same model (first_device_alike).
  return {{first_device_alike(cc.device),
           static_cast<int64_t>(op),
           cc.tf32,
           cc.deterministic,
           static_cast<int64_t>(cc.conv_algos),
           concurrency,
           static_cast<int64_t>(budget),
           static_cast<int64_t>(direct_mode()),
           g.N,
           g.Ci,
           g.Cg,
           g.G,
           g.H,
           g.W,
           g.KH,
           g.KW,
           g.SH,
           g.SW,
           g.DH,
           g.DW,
           g.PH,
           g.PW,
           g.OH,
           g.OW,
           g.explicit_pad,
           static_cast<int64_t>(g.storage)}};
}

}  // namespace

// A context's execution plans by the key of their choice (algo_key): ResNet-20's 21
// convolutions have 7 geometries, so a learner builds 23 plans instead of 60 (ops/cuda/cuda_context.h).
struct EnginePlanCache {
  std::map<AlgoKey, std::shared_ptr<EnginePlan>> plans;
};

namespace {

// The chosen engine's execution plan on this context's handle; null (the legacy fallback
// algorithm runs) if it cannot be built there.
std::shared_ptr<EnginePlan> engine_plan(const CudaContext& cc, const ConvGeom& g, ConvOp op, const AlgoChoice& c) {
  try {
    auto plan = std::make_shared<EnginePlan>(cc.cudnn, engine_conv(g), op, *c.engine);
    if (plan->workspace() <= c.ws) return plan;
  } catch (const std::exception& e) {
    if (log_conv_algos())
      std::fprintf(stderr, "cbtrain conv engines: engine %lld not built: %s\n",
                   static_cast<long long>(c.engine->global_index), e.what());
  }
  return nullptr;
}

std::shared_ptr<ConvPlan> make_plan(const CudaContext& cc, const ConvGeom& geom, const std::vector<ConvOp>& ops) {
  auto plan = std::make_shared<ConvPlan>();
  ConvPlan& p = *plan;
  const ConvGeom& g = p.g = geom;
  CBT_MODEL_CHECK(g.G >= 1 && g.Ci % g.G == 0 && g.Cg % g.G == 0, "bad group count ", g.G);
  set_conv_descriptors(p.image, p.grid, p.filter, g);
  int ph = g.explicit_pad ? 0 : cudnn_dim(g.PH), pw = g.explicit_pad ? 0 : cudnn_dim(g.PW);
  CBT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(p.conv, ph, pw, cudnn_dim(g.SH), cudnn_dim(g.SW), cudnn_dim(g.DH),
                                                  cudnn_dim(g.DW), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CBT_CUDNN_CHECK(cudnnSetConvolutionGroupCount(p.conv, cudnn_dim(g.G)));
  // FMA math keeps float32 convolutions bit-honest; TF32 tensor cores only when asked for.
  CBT_CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, conv_default_math(g, cc.tf32)));
  int n = 0, c = 0, h = 0, w = 0;
  CBT_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(p.conv, p.image, p.filter, &n, &c, &h, &w));
  CBT_CHECK(n == g.N && c == g.Cg && h == g.OH && w == g.OW, "cuDNN convolution output (", n, ", ", c, ", ", h, ", ", w,
            ") differs from the inferred grid (", g.N, ", ", g.Cg, ", ", g.OH, ", ", g.OW, ")");
  CBT_MODEL_CHECK(p.pad_bytes() <= cc.workspace_bytes, "CUDA workspace too small for padding a ", "convolution input (",
                  p.pad_bytes(), " bytes needed)");
  size_t budget = cc.workspace_bytes - p.pad_bytes();
  std::lock_guard lock(conv_choices_mutex());
  for (ConvOp op : ops) {
    AlgoKey key = algo_key(cc, g, op, budget);
    auto hit = conv_choices().find(key);
    AlgoChoice choice;
    if (hit != conv_choices().end()) {
      choice = hit->second;
    } else {
      StartCost cost("convolution searches");
      choice = op == ConvOp::Forward        ? choose_algo<ConvOp::Forward>(cc, p, budget)
               : op == ConvOp::BackwardData ? choose_algo<ConvOp::BackwardData>(cc, p, budget)
                                            : choose_algo<ConvOp::BackwardFilter>(cc, p, budget);
    }
    conv_choices().emplace(key, choice);
    p.algo[static_cast<int>(op)] = choice;
    if (choice.engine && !choice.runs_direct()) {
      if (!cc.engine_plans) cc.engine_plans = std::make_shared<EnginePlanCache>();
      auto [at, fresh] = cc.engine_plans->plans.try_emplace(key);
      if (fresh) {
        StartCost cost("convolution plans");
        at->second = engine_plan(cc, g, op, choice);
      }
      p.engine[static_cast<int>(op)] = at->second;
    }
  }
  return plan;
}

// The node's cached plan, built on first use (shapes never change for a node).
std::shared_ptr<ConvPlan> plan_of(KernelContext& ctx, const CudaContext& cc, const Shape& img, const Shape& grid,
                                  const Shape& w, bool transpose, const std::vector<ConvOp>& ops) {
  if (ctx.state && *ctx.state) return std::static_pointer_cast<ConvPlan>(*ctx.state);
  auto plan = make_plan(cc, make_geom(ctx.node, img, grid, w, transpose), ops);
  if (ctx.state) *ctx.state = plan;
  return plan;
}

// xp: (N*Ci, HP, WP) = x: (N*Ci, H, W) placed at offset (PH, PW), zeros around it.
__global__ void pad_image_kernel(const float* x, float* xp, ConvGeom g) {
  CBT_GRID_STRIDE_LOOP(i, g.padded_numel()) {
    int64_t wp = i % g.WP, hp = (i / g.WP) % g.HP, plane = i / (g.WP * g.HP);
    int64_t h = hp - g.PH, w = wp - g.PW;
    xp[i] = (h >= 0 && h < g.H && w >= 0 && w < g.W) ? x[(plane * g.H + h) * g.W + w] : 0.0f;
  }
}

// x: (N*Ci, H, W) = the window of xp: (N*Ci, HP, WP) at offset (PH, PW); zero beyond xp.
__global__ void crop_image_kernel(const float* xp, float* x, ConvGeom g) {
  CBT_GRID_STRIDE_LOOP(i, g.image_numel()) {
    int64_t w = i % g.W, h = (i / g.W) % g.H, plane = i / (g.W * g.H);
    int64_t hp = h + g.PH, wp = w + g.PW;
    x[i] = (hp < g.HP && wp < g.WP) ? xp[(plane * g.HP + hp) * g.WP + wp] : 0.0f;
  }
}

// y: (N, M, P) += b: (M); with kRelu (a fused Relu, graph/fusion.h) then y = max(y, 0).
template <bool kRelu>
__global__ void add_bias_kernel(float* y, const float* b, int64_t M, int64_t P, int64_t total) {
  CBT_GRID_STRIDE_LOOP(i, total) {
    float v = y[i] + b[(i / P) % M];
    y[i] = kRelu ? relu_of(v) : v;
  }
}

struct ValueOf {
  const float* t;
  __device__ double2 operator()(int64_t i, int64_t) const { return make_double2(t[i], 0.0); }
};

// dY where the fused output Y > 0, also written to `masked` (the reduction reads each element
// once).
struct MaskedValueOf {
  const float* dy;
  const float* y;
  float* masked;
  __device__ double2 operator()(int64_t i, int64_t) const {
    float g = relu_grad_of(dy[i], y[i]);
    masked[i] = g;
    return make_double2(g, 0.0);
  }
};

// dB[c] = the channel's total.
struct BiasFinish {
  float* db;
  __device__ void operator()(int64_t c, double2 t) const { db[c] = static_cast<float>(t.x); }
};

void add_bias(const CudaContext& cc, float* y, const Tensor& b, int64_t N, int64_t M, int64_t P, bool relu = false) {
  int64_t total = N * M * P;
  const auto* bias = static_cast<const float*>(b.data());
  if (relu)
    add_bias_kernel<true><<<blocks_for(total), kThreads, 0, cc.stream>>>(y, bias, M, P, total);
  else
    add_bias_kernel<false><<<blocks_for(total), kThreads, 0, cc.stream>>>(y, bias, M, P, total);
  CBT_CUDA_CHECK_LAUNCH();
}

// dB: (M) = sum of dY: (N, M, P) over N and P, in one launch (channel_reduce, deterministic);
// `counters` keeps its arrival counters (null: scratch). With `y` (a fused Relu: the fused
// output Y) the sum of dY where Y > 0, written to `masked` on the way.
void bias_grad(const CudaContext& cc, const Tensor& dY, int64_t N, int64_t M, int64_t P, Tensor& dB,
               std::shared_ptr<void>* counters, const float* y = nullptr, float* masked = nullptr) {
  Scratch scratch(cc);
  ChannelSplit split(N, M, P);
  auto* partial = scratch.take<double2>(split.blocks(), "the bias gradient");
  unsigned* arrivals = arrival_counters(counters, cc, scratch, M);
  const auto* dy = static_cast<const float*>(dY.data());
  BiasFinish fin{static_cast<float*>(dB.data())};
  if (y)
    channel_reduce(cc, split, MaskedValueOf{dy, y, masked}, partial, arrivals, fin);
  else
    channel_reduce(cc, split, ValueOf{dy}, partial, arrivals, fin);
}

// The image `src` padded into the workspace when the plan needs it, else `src` itself.
const float* padded_image(const CudaContext& cc, const ConvPlan& p, const void* src, float* pad_buf) {
  if (!p.g.explicit_pad) return static_cast<const float*>(src);
  pad_image_kernel<<<blocks_for(p.g.padded_numel()), kThreads, 0, cc.stream>>>(static_cast<const float*>(src), pad_buf,
                                                                               p.g);
  CBT_CUDA_CHECK_LAUNCH();
  return pad_buf;
}

// Writes the image computed into `pad_buf` back to `dst` when the plan pads explicitly.
void crop_image(const CudaContext& cc, const ConvPlan& p, const float* pad_buf, void* dst) {
  if (!p.g.explicit_pad) return;
  crop_image_kernel<<<blocks_for(p.g.image_numel()), kThreads, 0, cc.stream>>>(pad_buf, static_cast<float*>(dst), p.g);
  CBT_CUDA_CHECK_LAUNCH();
}

// The three cuDNN products, each with its own algorithm, math type and workspace.
struct ConvRunner {
  const CudaContext& cc;
  ConvPlan& p;
  Scratch& scratch;
  void* ws;
  cudnnHandle_t h;
  float one = 1.0f, zero = 0.0f;
  ConvRunner(const CudaContext& c, ConvPlan& plan, Scratch& s)
      : cc(c), p(plan), scratch(s), ws(s.rest(plan.algo_ws(), "cuDNN convolution")), h(cudnn_on_stream(c)) {}
  // The op's legacy algorithm, with its math type set on the shared convolution descriptor;
  // a backup left for later (kBackupLater) is chosen now, and the workspace grown to it.
  const AlgoChoice& use(ConvOp op) {
    AlgoChoice& c = p.algo[static_cast<int>(op)];
    if (c.algo == kBackupLater) {
      const size_t budget = cc.workspace_bytes - p.pad_bytes();
      const AlgoChoice b = op == ConvOp::Forward        ? legacy_choice<ConvOp::Forward>(cc, p, budget, false)
                           : op == ConvOp::BackwardData ? legacy_choice<ConvOp::BackwardData>(cc, p, budget, false)
                                                        : legacy_choice<ConvOp::BackwardFilter>(cc, p, budget, false);
      c.algo = b.algo, c.math = b.math, c.ws = std::max(c.ws, b.ws);
      ws = scratch.rest(p.algo_ws(), "cuDNN convolution");
    }
    CBT_CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, c.math));
    return c;
  }
  // The op's engine plan, when it has one and every pointer has the plan's alignment.
  EnginePlan* engine(ConvOp op, const void* a, const void* b, const void* c) const {
    EnginePlan* e = p.engine_of(op);
    for (const void* ptr : {a, b, c, static_cast<const void*>(ws)})
      if (reinterpret_cast<uintptr_t>(ptr) % kEngineAlignment != 0) return nullptr;
    return e;
  }
  // out = the op's direct kernel on `in` (with `bias` and a fused Relu), when it has one.
  bool direct(ConvOp op, const void* in, const void* w, void* out, const float* bias = nullptr, bool relu = false) {
    const std::optional<DirectPlan>& d = p.of(op).direct;
    if (!d) return false;
    const bool ok = direct_conv(cc.stream, d->conv, d->cfg, static_cast<const float*>(in), static_cast<const float*>(w),
                                bias, relu, static_cast<float*>(out));
    CBT_CUDA_CHECK_LAUNCH();
    CBT_CHECK(ok, "direct convolution ", d->cfg.str(), " could not be launched");
    return true;
  }
  // Whether a launch of the op's depthwise kernel (`ok`) went.
  static void launched(bool ok, ConvOp op, const DepthwisePlan& d) {
    CBT_CUDA_CHECK_LAUNCH();
    CBT_CHECK(ok, "depthwise ", conv_op_name(op), " convolution ", d.cfg.str(), " could not be launched");
  }
  // grid = conv(image, w); with a direct or depthwise kernel also + bias and the fused Relu
  // (returns whether it applied them).
  bool forward(const float* image, const void* w, void* grid, const float* bias = nullptr, bool relu = false) {
    if (direct(ConvOp::Forward, image, w, grid, bias, relu)) return true;
    if (const std::optional<DepthwisePlan>& d = p.of(ConvOp::Forward).depthwise) {
      launched(depthwise_forward(cc.stream, d->conv, d->cfg, image, static_cast<const float*>(w), bias, relu,
                                 static_cast<float*>(grid)),
               ConvOp::Forward, *d);
      return true;
    }
    if (EnginePlan* e = engine(ConvOp::Forward, image, w, grid)) {
      e->run(h, image, w, grid, ws);
      return false;
    }
    const AlgoChoice& c = use(ConvOp::Forward);
    CBT_CUDNN_CHECK(cudnnConvolutionForward(h, &one, p.image, image, p.filter, w, p.conv,
                                            static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), ws, c.ws, &zero, p.grid,
                                            grid));
    return false;
  }
  // image = conv^T(grid, w)
  void backward_data(const void* w, const void* grid, float* image) {
    if (direct(ConvOp::BackwardData, grid, w, image)) return;
    if (const std::optional<DepthwisePlan>& d = p.of(ConvOp::BackwardData).depthwise) {
      return launched(depthwise_backward_data(cc.stream, d->conv, d->cfg, static_cast<const float*>(grid),
                                              static_cast<const float*>(w), image),
                      ConvOp::BackwardData, *d);
    }
    if (EnginePlan* e = engine(ConvOp::BackwardData, image, w, grid)) return e->run(h, image, w, grid, ws);
    const AlgoChoice& c = use(ConvOp::BackwardData);
    CBT_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &one, p.filter, w, p.grid, grid, p.conv,
                                                 static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), ws, c.ws, &zero,
                                                 p.image, image));
  }
  // dw = correlation of image and grid
  void backward_filter(const float* image, const void* grid, void* dw) {
    if (const std::optional<DirectWgradPlan>& d = p.of(ConvOp::BackwardFilter).direct_wgrad) {
      const bool ok = direct_wgrad(cc.stream, d->conv, d->cfg, image, static_cast<const float*>(grid),
                                   static_cast<float*>(ws), static_cast<float*>(dw));
      CBT_CUDA_CHECK_LAUNCH();
      CBT_CHECK(ok, "direct backward-filter convolution ", d->cfg.str(), " could not be launched");
      return;
    }
    if (const std::optional<DepthwisePlan>& d = p.of(ConvOp::BackwardFilter).depthwise) {
      return launched(depthwise_backward_filter(cc.stream, d->conv, d->cfg, image, static_cast<const float*>(grid),
                                                static_cast<float*>(ws), static_cast<float*>(dw)),
                      ConvOp::BackwardFilter, *d);
    }
    if (EnginePlan* e = engine(ConvOp::BackwardFilter, image, dw, grid)) return e->run(h, image, dw, grid, ws);
    const AlgoChoice& c = use(ConvOp::BackwardFilter);
    CBT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, &one, p.image, image, p.grid, grid, p.conv,
                                                   static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), ws, c.ws,
                                                   &zero, p.filter, dw));
  }
};

void check_float(const Tensor& t, const Node& node) { check_float32(t, node, "runs convolutions in float32"); }

// x: (N, C, spatial), w: (M, C/G, k...), b: (M) -> y: (N, M, out spatial); with relu=1
// (fused, graph/fusion.h) y = max(that, 0), in the bias pass when there is one.
void conv_fwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &X = ctx.in(0), &Wt = ctx.in(1);
  Tensor& Y = ctx.out(0);
  check_conv_tensors(ctx, false);
  auto plan = plan_of(ctx, cc, X.shape(), Y.shape(), Wt.shape(), false, {ConvOp::Forward});
  Scratch scratch(cc);
  float* pad_buf = plan->g.explicit_pad ? scratch.take<float>(plan->g.padded_numel(), "padding") : nullptr;
  ConvRunner run(cc, *plan, scratch);
  const float* bias = ctx.has_in(2) ? static_cast<const float*>(ctx.in(2).data()) : nullptr;
  if (run.forward(padded_image(cc, *plan, X.data(), pad_buf), Wt.data(), Y.data(), bias, fused_relu(ctx))) return;
  const ConvGeom& g = plan->g;
  auto* y = static_cast<float*>(Y.data());
  if (ctx.has_in(2))
    add_bias(cc, y, ctx.in(2), g.N, g.Cg, g.OH * g.OW, fused_relu(ctx));
  else if (fused_relu(ctx))
    relu_in_place(cc, y, Y.numel());
}

// dy: (N, M, out spatial), x: (N, C, spatial), w: (M, C/G, k...) -> dX, dW, dB: (M); with
// relu=1 the products take dY where the fused output y (input 3) > 0, written to output 3
// (by the bias reduction when there is one).
void conv_bwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1), &Wt = ctx.in(2);
  check_conv_tensors(ctx, true);
  bool want_dx = output_needed(ctx, 0), want_dw = output_needed(ctx, 1);
  std::vector<ConvOp> ops;
  if (want_dx) ops.push_back(ConvOp::BackwardData);
  if (want_dw) ops.push_back(ConvOp::BackwardFilter);
  auto plan = plan_of(ctx, cc, X.shape(), dY.shape(), Wt.shape(), false, ops);
  const ConvGeom& g = plan->g;
  const bool want_db = output_needed(ctx, 2), relu = fused_relu(ctx);
  const float* dy = fused_relu_grad(ctx, 3, 3, !want_db);
  if (want_db)
    bias_grad(cc, dY, g.N, g.Cg, g.OH * g.OW, ctx.out(2), &plan->arrivals,
              relu ? static_cast<const float*>(ctx.in(3).data()) : nullptr,
              relu ? static_cast<float*>(ctx.out(3).data()) : nullptr);
  if (!want_dx && !want_dw) return;
  Scratch scratch(cc);
  float* pad_buf = g.explicit_pad ? scratch.take<float>(g.padded_numel(), "padding") : nullptr;
  ConvRunner run(cc, *plan, scratch);
  if (want_dw) run.backward_filter(padded_image(cc, *plan, X.data(), pad_buf), dy, ctx.out(1).data());
  if (want_dx) {
    // The padded buffer is free again: dW's cuDNN call precedes on the same stream.
    float* dst = g.explicit_pad ? pad_buf : static_cast<float*>(ctx.out(0).data());
    run.backward_data(Wt.data(), dy, dst);
    crop_image(cc, *plan, dst, ctx.out(0).data());
  }
}

// x: (N, C, in spatial), w: (C, M/G, k...), b: (M) -> y: (N, M, out spatial)
void conv_transpose_fwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &X = ctx.in(0), &Wt = ctx.in(1);
  Tensor& Y = ctx.out(0);
  check_float(X, ctx.node);
  auto plan = plan_of(ctx, cc, Y.shape(), X.shape(), Wt.shape(), true, {ConvOp::BackwardData});
  const ConvGeom& g = plan->g;
  Scratch scratch(cc);
  float* pad_buf = g.explicit_pad ? scratch.take<float>(g.padded_numel(), "padding") : nullptr;
  ConvRunner run(cc, *plan, scratch);
  float* dst = g.explicit_pad ? pad_buf : static_cast<float*>(Y.data());
  run.backward_data(Wt.data(), X.data(), dst);
  crop_image(cc, *plan, dst, Y.data());
  if (ctx.has_in(2)) add_bias(cc, static_cast<float*>(Y.data()), ctx.in(2), g.N, g.Ci, g.H * g.W);
}

// dy: (N, M, out spatial), x: (N, C, in spatial), w: (C, M/G, k...) -> dX, dW, dB: (M)
void conv_transpose_bwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &X = ctx.in(1), &Wt = ctx.in(2);
  check_float(X, ctx.node);
  bool want_dx = output_needed(ctx, 0), want_dw = output_needed(ctx, 1);
  std::vector<ConvOp> ops;
  if (want_dx) ops.push_back(ConvOp::Forward);
  if (want_dw) ops.push_back(ConvOp::BackwardFilter);
  auto plan = plan_of(ctx, cc, dY.shape(), X.shape(), Wt.shape(), true, ops);
  const ConvGeom& g = plan->g;
  if (output_needed(ctx, 2)) bias_grad(cc, dY, g.N, g.Ci, g.H * g.W, ctx.out(2), &plan->arrivals);
  if (!want_dx && !want_dw) return;
  Scratch scratch(cc);
  float* pad_buf = g.explicit_pad ? scratch.take<float>(g.padded_numel(), "padding") : nullptr;
  ConvRunner run(cc, *plan, scratch);
  const float* image = padded_image(cc, *plan, dY.data(), pad_buf);
  if (want_dx) run.forward(image, Wt.data(), ctx.out(0).data());
  if (want_dw) run.backward_filter(image, X.data(), ctx.out(1).data());
}

}  // namespace

CBT_REGISTER_KERNEL("", "Conv", DeviceKind::CUDA, conv_fwd);
CBT_REGISTER_KERNEL(kCbtDomain, "ConvGrad", DeviceKind::CUDA, conv_bwd);
CBT_REGISTER_KERNEL("", "ConvTranspose", DeviceKind::CUDA, conv_transpose_fwd);
CBT_REGISTER_KERNEL(kCbtDomain, "ConvTransposeGrad", DeviceKind::CUDA, conv_transpose_bwd);

}  // namespace cbt::cuda
