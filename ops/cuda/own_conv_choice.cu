// Which convolutions run on cbtrain's own kernels (direct_conv.h, depthwise_conv.h) instead of
// cuDNN's: the forms those kernels take, the timed choice against the chosen cuDNN engine, and
// whether a choice read from a --conv-choices file still holds for this build.
#include "ops/cuda/own_conv_choice.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ops/cuda/search_phases.h"

namespace cbt::cuda {
namespace {

// The convolution op as a direct kernel runs it, when the kernels can: 2-D, one group, stride
// and dilation 1, a square filter, cuDNN's symmetric pads; or the backward data of a stride-2
// 3 x 3 convolution with pads 1, as four phases (DirectConv::phases). The backward filter's
// form is the forward convolution's.
std::optional<DirectConv> direct_form(const ConvGeom& g, ConvOp op) {
  if (g.G != 1 || g.DH != 1 || g.DW != 1 || g.KH != g.KW || g.explicit_pad) return std::nullopt;
  if (op == ConvOp::BackwardData && g.SH == 2 && g.SW == 2 && g.KH == 3 && g.PH == 1 && g.PW == 1) {
    // The image (x) is dX; the grid's size is ceil(x's / 2) with these pads (not explicit_pad).
    const DirectConv d = stride2_data_form(g.N, g.Ci, g.H, g.W, g.Cg);
    if (d.H != g.OH || d.W != g.OW || !direct_supported(d)) return std::nullopt;
    return d;
  }
  if (g.SH != 1 || g.SW != 1) return std::nullopt;
  DirectConv d;
  d.N = g.N, d.K = g.KH;
  if (op != ConvOp::BackwardData) {
    d.C = g.Ci, d.H = g.H, d.W = g.W, d.M = g.Cg, d.OH = g.OH, d.OW = g.OW, d.PH = g.PH, d.PW = g.PW;
  } else {  // dX = the convolution of dY with the filters transposed and turned
    d.C = g.Cg, d.H = g.OH, d.W = g.OW, d.M = g.Ci, d.OH = g.H, d.OW = g.W;
    d.PH = g.KH - 1 - g.PH, d.PW = g.KW - 1 - g.PW, d.turned = true;
  }
  if (!direct_supported(d)) return std::nullopt;
  return d;
}

// The convolution op as the depthwise kernels run it, when they can: 2-D, as many groups as
// image and grid channels (two or more: one group is direct_form's), dilation 1, square filters
// and strides. The kernels take any leading pads, but the image they are given is the padded
// one where cuDNN's is (explicit_pad), so that form is the padded image's without pads.
std::optional<DepthwiseConv> depthwise_form(const ConvGeom& g) {
  if (g.G < 2 || g.Ci != g.G || g.Cg != g.G || g.DH != 1 || g.DW != 1 || g.KH != g.KW || g.SH != g.SW)
    return std::nullopt;
  DepthwiseConv d;
  d.N = g.N, d.C = g.G, d.OH = g.OH, d.OW = g.OW, d.K = g.KH, d.S = g.SH;
  d.H = g.explicit_pad ? g.HP : g.H, d.W = g.explicit_pad ? g.WP : g.W;
  d.PH = g.explicit_pad ? 0 : g.PH, d.PW = g.explicit_pad ? 0 : g.PW;
  if (!depthwise_supported(d)) return std::nullopt;
  return d;
}

// The forms as the search's log names them.
std::string form_str(const DirectConv& d) {
  return "in=(" + std::to_string(d.N) + "," + std::to_string(d.C) + "," + std::to_string(d.H) + "," +
         std::to_string(d.W) + ") M=" + std::to_string(d.M) + " k=" + std::to_string(d.K) +
         (d.phases ? " (stride-2 phases)" : "");
}
std::string form_str(const DepthwiseConv& d) {
  return "depthwise in=(" + std::to_string(d.N) + "," + std::to_string(d.C) + "," + std::to_string(d.H) + "," +
         std::to_string(d.W) + ") k=" + std::to_string(d.K) + " s=" + std::to_string(d.S) +
         " pads=" + std::to_string(d.PH) + "," + std::to_string(d.PW);
}

// The bar of the direct kernels' search: the chosen cuDNN engine's time per copy, which ends the
// search after a first look when no configuration of it comes near (none with CBT_CONV_DIRECT=always).
float direct_bar(float engine_ms) { return direct_mode() == DirectMode::Always ? -1.0f : engine_ms; }

// Whether the fastest direct configuration `best` runs: with CBT_CONV_DIRECT=always whenever
// there is one, else when it timed faster per copy than `engine_ms`, the chosen cuDNN engine's
// time with as many copies at once. Logged with CBT_LOG_CONV_ALGOS=1.
template <class Choice>
std::string looked(const std::optional<Choice>& best) {
  if (!best || best->looked_only == 0) return "";
  return " after a first look at " + std::to_string(best->looked_only) + " of " + std::to_string(best->configs) +
         " configurations, none within " + std::to_string(static_cast<int>(FirstLook{}.give_up)) + "x the engine";
}

template <class Choice, class Form>
bool take_direct(const std::optional<Choice>& best, float engine_ms, const Form& d, const char* what, int copies,
                 const SearchPhases* phases) {
  const bool take = best && (direct_mode() == DirectMode::Always || (engine_ms >= 0 && best->ms < engine_ms));
  if (phases)
    std::fprintf(stderr,
                 "cbtrain conv direct: %s x%d %s: best %s %.4fms, engine %.4fms: %s%s (searched in %.1f ms: %s)\n",
                 what, copies, form_str(d).c_str(), best ? best->cfg.str().c_str() : "none", best ? best->ms : -1.0f,
                 engine_ms, take ? "direct" : "cuDNN", looked(best).c_str(), phases->total_ms(), phases->str().c_str());
  return take;
}

// The geometry a key was made from (algo_key's order), for checking a choice read from a file.
ConvGeom geom_of_key(const AlgoKey& key) {
  const int64_t* k = key.dims.data() + kKeyGeometry;
  ConvGeom g;
  g.N = k[0], g.Ci = k[1], g.Cg = k[2], g.G = k[3], g.H = k[4], g.W = k[5], g.KH = k[6], g.KW = k[7], g.SH = k[8];
  g.SW = k[9], g.DH = k[10], g.DW = k[11], g.PH = k[12], g.PW = k[13], g.OH = k[14], g.OW = k[15];
  g.explicit_pad = k[16] != 0;
  g.HP = (g.OH - 1) * g.SH + (g.KH - 1) * g.DH + 1;
  g.WP = (g.OW - 1) * g.SW + (g.KW - 1) * g.DW + 1;
  return g;
}

}  // namespace

const char* conv_op_name(ConvOp op) {
  return op == ConvOp::Forward ? "forward" : op == ConvOp::BackwardData ? "backward-data" : "backward-filter";
}

// The direct kernel for a forward or backward-data op, when one applies and take_direct says so.
std::optional<DirectPlan> choose_direct_plan(const CudaContext& cc, const ConvGeom& g, ConvOp op, float engine_ms,
                                             int copies, bool log) {
  const std::optional<DirectConv> d = direct_mode() == DirectMode::Off ? std::nullopt : direct_form(g, op);
  if (!d) return std::nullopt;
  SearchPhases laps;  // with a "free" lap: the search's buffers and streams going
  SearchPhases* phases = log ? &laps : nullptr;
  const std::optional<DirectChoice> best = choose_direct(cc.stream, *d, copies, phases, direct_bar(engine_ms));
  lap(phases, "free");
  if (!take_direct(best, engine_ms, *d, conv_op_name(op), copies, phases)) return std::nullopt;
  return DirectPlan{*d, best->cfg};
}

// The same for the backward filter, whose partial sums must fit `budget` bytes of workspace.
std::optional<DirectWgradPlan> choose_direct_wgrad_plan(const CudaContext& cc, const ConvGeom& g, float engine_ms,
                                                        int copies, size_t budget, bool log) {
  const std::optional<DirectConv> d =
      direct_mode() == DirectMode::Off ? std::nullopt : direct_form(g, ConvOp::BackwardFilter);
  if (!d) return std::nullopt;
  SearchPhases laps;
  SearchPhases* phases = log ? &laps : nullptr;
  const std::optional<WgradChoice> best =
      choose_direct_wgrad(cc.stream, *d, copies, budget, phases, direct_bar(engine_ms));
  lap(phases, "free");
  if (!take_direct(best, engine_ms, *d, "backward-filter", copies, phases)) return std::nullopt;
  return DirectWgradPlan{*d, best->cfg, direct_wgrad_partial_bytes(*d, best->cfg)};
}

// The depthwise kernel for any op, when one applies and take_direct says so; the backward
// filter's partial sums must fit `budget` bytes of workspace.
std::optional<DepthwisePlan> choose_depthwise_plan(const CudaContext& cc, const ConvGeom& g, ConvOp op, float engine_ms,
                                                   int copies, size_t budget, bool log) {
  const std::optional<DepthwiseConv> d = direct_mode() == DirectMode::Off ? std::nullopt : depthwise_form(g);
  if (!d) return std::nullopt;
  SearchPhases laps;
  SearchPhases* phases = log ? &laps : nullptr;
  const std::optional<DepthwiseChoice> best =
      choose_depthwise(cc.stream, *d, op, copies, budget, phases, direct_bar(engine_ms));
  lap(phases, "free");
  if (!take_direct(best, engine_ms, *d, conv_op_name(op), copies, phases)) return std::nullopt;
  return DepthwisePlan{*d, best->cfg, depthwise_partial_bytes(*d, op, best->cfg)};
}

bool choice_still_offered(const AlgoKey& key, const AlgoChoice& c) {
  if (key.dims.size() != kKeyDims) return false;
  const auto op = static_cast<ConvOp>(key.dims[kKeyOp]);
  const size_t budget = static_cast<size_t>(key.dims[kKeyBudget]);
  const int algos = op == ConvOp::Forward        ? static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
                    : op == ConvOp::BackwardData ? static_cast<int>(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)
                                                 : static_cast<int>(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
  if (c.algo < kBackupLater || c.algo >= algos || c.ws > budget || (c.engine && c.engine->workspace > c.ws))
    return false;
  if (c.direct && op == ConvOp::BackwardFilter) return false;
  if (c.direct_wgrad && op != ConvOp::BackwardFilter) return false;
  if (c.depthwise) {
    // As a direct kernel's: the key's own shapes, a configuration offered for them, this build's
    // partial-sum bytes within the choice's workspace, and no other kernel of cbtrain's own.
    const std::optional<DepthwiseConv> d = depthwise_form(geom_of_key(key));
    const DepthwisePlan& w = *c.depthwise;
    if (c.direct || c.direct_wgrad || !d || !(*d == w.conv)) return false;
    if (w.partial_bytes != depthwise_partial_bytes(*d, op, w.cfg) || w.partial_bytes > c.ws) return false;
    const std::vector<DepthwiseConfig> offered = depthwise_configs(*d, op, budget);
    return std::find(offered.begin(), offered.end(), w.cfg) != offered.end();
  }
  if (!c.direct && !c.direct_wgrad) return true;
  // A direct kernel runs with the shapes it was given: they must be the key's own, and the
  // configuration one this build offers for them.
  const std::optional<DirectConv> d = direct_form(geom_of_key(key), op);
  if (!d) return false;
  if (c.direct) {
    const std::vector<DirectConfig> offered = direct_configs(*d);
    return *d == c.direct->conv && std::find(offered.begin(), offered.end(), c.direct->cfg) != offered.end();
  }
  const DirectWgradPlan& w = *c.direct_wgrad;
  if (!(*d == w.conv) || w.partial_bytes != direct_wgrad_partial_bytes(*d, w.cfg) || w.partial_bytes > c.ws)
    return false;
  const std::vector<WgradConfig> offered = direct_wgrad_configs(*d, budget);
  return std::find(offered.begin(), offered.end(), w.cfg) != offered.end();
}

}  // namespace cbt::cuda
