// Which convolutions run on cbtrain's own kernels (direct_conv.h, depthwise_conv.h) instead of
// cuDNN's chosen engine: each chooser times the kernels' configurations that apply to the op (with
// `copies` at once, as the learners run) and returns a plan only when the fastest beats
// `engine_ms`, the engine's time per copy (CBT_CONV_DIRECT=always|off overrides;
// CBT_LOG_CONV_ALGOS=1, `log`, writes each search to stderr). choice_still_offered
// (conv_choices.h), which checks a choice read from a file, is defined here too.
#pragma once
#include <cstddef>
#include <optional>

#include "ops/cuda/conv_choices.h"
#include "ops/cuda/conv_geom.h"
#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {

// "forward", "backward-data" or "backward-filter".
const char* conv_op_name(ConvOp op);

// A direct kernel for a forward or backward-data op.
std::optional<DirectPlan> choose_direct_plan(const CudaContext& cc, const ConvGeom& g, ConvOp op, float engine_ms,
                                             int copies, bool log);

// A direct kernel for the backward filter, whose partial sums must fit `budget` bytes of workspace.
std::optional<DirectWgradPlan> choose_direct_wgrad_plan(const CudaContext& cc, const ConvGeom& g, float engine_ms,
                                                        int copies, size_t budget, bool log);

// A depthwise kernel for any op; the backward filter's partial sums must fit `budget` bytes.
std::optional<DepthwisePlan> choose_depthwise_plan(const CudaContext& cc, const ConvGeom& g, ConvOp op, float engine_ms,
                                                   int copies, size_t budget, bool log);

}  // namespace cbt::cuda
