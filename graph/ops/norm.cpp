// BatchNormalization (inference and training forms), LayerNormalization, RMSNorm,
// InstanceNormalization and GroupNormalization schemas, their backward ops and gradient rules.
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/ops/norm_groups.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// X (N, C, ...), scale, B, mean, var (C) -> Y; opset 14+ training_mode adds running stats.
std::vector<ValueType> infer_batch_norm(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_floating(x.dtype)) ctx.fail("input must be a float tensor");
  if (x.shape.size() < 2) ctx.fail("input must be (N, C, ...), got " + shape_str(x.shape));
  for (size_t i = 1; i < 5; ++i) {
    const ValueType& p = ctx.input(i);
    if (p.shape != Shape{x.shape[1]} || p.dtype != x.dtype)
      ctx.fail("input " + std::to_string(i) + " must be (" + std::to_string(x.shape[1]) + ") " + dtype_name(x.dtype) +
               ", got " + shape_str(p.shape) + " " + dtype_name(p.dtype));
  }
  ValueType stat{x.dtype, {x.shape[1]}};
  std::vector<ValueType> out{x};
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i) out.push_back(stat);
  return out;
}

// BatchNormTraining: (Y, saved_mean, saved_invstd), always three outputs.
std::vector<ValueType> infer_batch_norm_training(const InferContext& ctx) {
  auto out = infer_batch_norm(ctx);
  out.resize(1);
  out.push_back({out[0].dtype, {out[0].shape[1]}});
  out.push_back(out[1]);
  return out;
}

// BatchNormGrad (dY, X, scale, mean, invstd or var[, Y]) -> (dX, dScale, dBias). With relu=1
// (fused with a Relu, graph/fusion.h) Y is the fused output and dY counts where Y > 0.
std::vector<ValueType> infer_batch_norm_grad(const InferContext& ctx) {
  const ValueType& x = ctx.input(1);
  if (ctx.input(0).shape != x.shape) ctx.fail("dY and X differ in shape");
  if (ctx.node.attrs.get_int("relu", 0) && (!ctx.has(5) || ctx.input(5).shape != x.shape))
    ctx.fail("relu=1 needs the fused output Y (input 5) of X's shape");
  return {x, ctx.input(2), ctx.input(2)};
}

// The training form normalises with batch statistics and updates the running ones in place.
void batch_norm_training_rewrite(Node& n, GradEmitter& g) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    CBT_MODEL_CHECK(n.outputs[i].empty(), "node ", n.describe(),
                    ": BatchNormalization exported in training mode (running-statistics "
                    "outputs) is not supported; export the model in eval mode");
  n.op_type = "BatchNormTraining";
  n.domain = kCbtDomain;
  n.outputs.resize(1);
  n.outputs.push_back(g.fresh(n.name + "_saved_mean"));
  n.outputs.push_back(g.fresh(n.name + "_saved_invstd"));
  n.attrs.erase("training_mode");
}

// Training form: gradient through the batch statistics. Inference form (frozen statistics):
// a per-channel affine map.
std::vector<std::string> batch_norm_grad(GradContext& c) {
  const Node& n = c.node;
  std::vector<std::string> grads(n.inputs.size(), "");
  if (c.dY.empty() || c.dY[0].empty()) return grads;
  bool training = n.op_type == "BatchNormTraining";
  Attributes a;
  a.set("epsilon", n.attrs.get_float("epsilon", 1e-5f));
  a.set("frozen_stats", int64_t{training ? 0 : 1});
  a.set("outputs_needed", std::vector<int64_t>{c.wants[0], c.wants[1], c.wants[2]});
  std::vector<std::string> in{c.dY[0], n.inputs[0], n.inputs[1]};
  in.push_back(training ? n.outputs[1] : n.inputs[3]);
  in.push_back(training ? n.outputs[2] : n.inputs[4]);
  if (n.attrs.get_int("relu", 0)) {  // fused with a Relu: the gradient counts where Y > 0
    a.set("relu", int64_t{1});
    in.push_back(n.outputs[0]);
  }
  auto d = c.g.emit("BatchNormGrad", kCbtDomain, in, 3, a, "d_" + n.name);
  for (size_t i = 0; i < 3; ++i) grads[i] = c.wants[i] ? d[i] : "";
  return grads;
}

struct LayerNormDims {
  int64_t axis;
  Shape stat;  // X.shape[:axis] + [1] * (rank - axis)
};

LayerNormDims layer_norm_dims(const InferContext& ctx, const ValueType& x) {
  if (!is_floating(x.dtype)) ctx.fail("input must be a float tensor");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = ctx.node.attrs.get_int("axis", -1);
  if (axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " out of range for " + shape_str(x.shape));
  if (axis < 0) axis += rank;
  LayerNormDims d{axis, x.shape};
  for (int64_t i = axis; i < rank; ++i) d.stat[i] = 1;
  return d;
}

// X, Scale, B? (normalized shape) -> Y, Mean?, InvStdDev? (X.shape[:axis] + ones)
std::vector<ValueType> infer_layer_norm(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  LayerNormDims d = layer_norm_dims(ctx, x);
  int64_t inner = dims_product(x.shape, d.axis, x.shape.size());
  for (size_t i = 1; i < 3; ++i) {
    if (i == 2 && !ctx.has(2)) continue;
    const ValueType& p = ctx.input(i);
    if (p.dtype != x.dtype || shape_numel(p.shape) != inner)
      ctx.fail("input " + std::to_string(i) + " " + shape_str(p.shape) + " does not match the normalized shape of " +
               shape_str(x.shape));
  }
  std::vector<ValueType> out{x};
  for (size_t i = 1; i < ctx.node.outputs.size() && i < 3; ++i) out.push_back({x.dtype, d.stat});
  return out;
}

// LayerNormGrad (dY, X, scale, mean?, invstd?) -> (dX, dScale, dBias).
std::vector<ValueType> infer_layer_norm_grad(const InferContext& ctx) {
  const ValueType& x = ctx.input(1);
  if (ctx.input(0).shape != x.shape) ctx.fail("dY and X differ in shape");
  layer_norm_dims(ctx, x);
  return {x, ctx.input(2), ctx.input(2)};
}

// In training the forward also writes Mean and InvStdDev (two values a row), which the
// backward reads instead of recomputing them from X.
void layer_norm_training_rewrite(Node& node, GradEmitter& g) {
  if (node.outputs.size() < 3) node.outputs.resize(3);
  if (node.outputs[1].empty()) node.outputs[1] = g.fresh(node.outputs[0] + "_mean");
  if (node.outputs[2].empty()) node.outputs[2] = g.fresh(node.outputs[0] + "_invstd");
}

// Reuses the forward's Mean/InvStdDev outputs (the training rewrite's, or the model's); the
// backward kernel recomputes them where a node has none.
std::vector<std::string> layer_norm_grad(GradContext& c) {
  const Node& n = c.node;
  std::vector<std::string> grads(n.inputs.size(), "");
  if (c.dY.empty() || c.dY[0].empty()) return grads;
  bool want_b = n.has_input(2) && c.wants.size() > 2 && c.wants[2];
  Attributes a;
  a.set("axis", n.attrs.get_int("axis", -1));
  a.set("epsilon", n.attrs.get_float("epsilon", 1e-5f));
  a.set("outputs_needed", std::vector<int64_t>{c.wants[0], c.wants[1], want_b});
  bool saved = n.outputs.size() > 2 && !n.outputs[1].empty() && !n.outputs[2].empty();
  std::vector<std::string> in{c.dY[0], n.inputs[0], n.inputs[1]};
  if (saved) {
    in.push_back(n.outputs[1]);
    in.push_back(n.outputs[2]);
  }
  auto d = c.g.emit("LayerNormGrad", kCbtDomain, in, 3, a, "d_" + n.name);
  grads[0] = c.wants[0] ? d[0] : "";
  grads[1] = c.wants[1] ? d[1] : "";
  if (want_b) grads[2] = d[2];
  return grads;
}

// RMSNorm (X, scale?) -> Y, InvRms? (X.shape[:axis] + ones): Y = X / sqrt(mean(X^2) + epsilon)
// * scale over the dims from axis, made by fuse_rms_norm (graph/fusion.h) from the chain that
// exporters write.
std::vector<ValueType> infer_rms_norm(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  LayerNormDims d = layer_norm_dims(ctx, x);
  if (ctx.has(1)) {
    const ValueType& p = ctx.input(1);
    if (p.dtype != x.dtype || shape_numel(p.shape) != dims_product(x.shape, d.axis, x.shape.size()))
      ctx.fail("scale " + shape_str(p.shape) + " does not match the normalized shape of " + shape_str(x.shape));
  }
  std::vector<ValueType> out{x};
  if (ctx.node.outputs.size() > 1) out.push_back({x.dtype, d.stat});
  return out;
}

// RMSNormGrad (dY, X, scale?, invrms?) -> (dX, dScale where there is a scale).
std::vector<ValueType> infer_rms_norm_grad(const InferContext& ctx) {
  const ValueType& x = ctx.input(1);
  if (ctx.input(0).shape != x.shape) ctx.fail("dY and X differ in shape");
  layer_norm_dims(ctx, x);
  std::vector<ValueType> out{x};
  if (ctx.has(2)) out.push_back(ctx.input(2));
  return out;
}

// Reads the forward's InvRms output where the node has one (fuse_rms_norm gives it one).
std::vector<std::string> rms_norm_grad(GradContext& c) {
  const Node& n = c.node;
  std::vector<std::string> grads(n.inputs.size(), "");
  if (c.dY.empty() || c.dY[0].empty()) return grads;
  const bool scaled = n.has_input(1), want_scale = scaled && c.wants.size() > 1 && c.wants[1];
  Attributes a;
  a.set("axis", n.attrs.get_int("axis", -1));
  a.set("epsilon", n.attrs.get_float("epsilon", 1e-5f));
  a.set("outputs_needed", std::vector<int64_t>{c.wants[0], want_scale});
  std::vector<std::string> in{c.dY[0], n.inputs[0], scaled ? n.inputs[1] : ""};
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) in.push_back(n.outputs[1]);
  auto d = c.g.emit("RMSNormGrad", kCbtDomain, in, scaled ? 2 : 1, a, "d_" + n.name);
  grads[0] = c.wants[0] ? d[0] : "";
  if (want_scale) grads[1] = d[1];
  return grads;
}

// InstanceNormalization and GroupNormalization normalise each sample's groups of channels
// (one channel a group for InstanceNormalization) over the group's values, then scale and
// shift per channel; GroupNormalization before opset 21 scales and shifts per group.
// GroupNormGrad (dY, X, scale) -> (dX, dScale, dBias) serves both, with num_groups.
int64_t group_count(const InferContext& ctx, const ValueType& x) {
  if (!is_floating(x.dtype)) ctx.fail("input must be a float tensor");
  if (x.shape.size() < 3) ctx.fail("input must be (N, C, D1, ...), got " + shape_str(x.shape));
  const int64_t c = x.shape[1];
  if (ctx.node.op_type != "InstanceNormalization" && !ctx.node.attrs.has("num_groups"))
    ctx.fail("attribute num_groups is required");
  const int64_t g = norm_groups(ctx.node, c);
  if (g <= 0 || c % g != 0)
    ctx.fail("num_groups " + std::to_string(g) + " does not divide the " + std::to_string(c) + " channels");
  return g;
}

// Scale and bias: (C), or (num_groups) for GroupNormalization before opset 21.
std::vector<ValueType> infer_group_norm(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const int64_t g = group_count(ctx, x);
  const bool per_group = ctx.node.op_type == "GroupNormalization" && ctx.opset < 21;
  const Shape want{per_group ? g : x.shape[1]};
  for (size_t i = 1; i < 3; ++i) {
    const ValueType& p = ctx.input(i);
    if (p.dtype != x.dtype || p.shape != want)
      ctx.fail("input " + std::to_string(i) + " must be " + shape_str(want) + " " + dtype_name(x.dtype) + ", got " +
               shape_str(p.shape) + " " + dtype_name(p.dtype));
  }
  return {x};
}

std::vector<ValueType> infer_group_norm_grad(const InferContext& ctx) {
  const ValueType& x = ctx.input(1);
  if (ctx.input(0).shape != x.shape) ctx.fail("dY and X differ in shape");
  const int64_t g = group_count(ctx, x);
  const ValueType& scale = ctx.input(2);
  if (scale.shape != Shape{g} && scale.shape != Shape{x.shape[1]})
    ctx.fail("scale " + shape_str(scale.shape) + " is neither per channel nor per group");
  return {x, scale, scale};
}

std::vector<std::string> group_norm_grad(GradContext& c) {
  const Node& n = c.node;
  std::vector<std::string> grads(n.inputs.size(), "");
  if (c.dY.empty() || c.dY[0].empty()) return grads;
  const int64_t groups = norm_groups(n, c.g.type(n.inputs[0]).shape.at(1));
  Attributes a;
  a.set("num_groups", groups);
  a.set("epsilon", n.attrs.get_float("epsilon", 1e-5f));
  a.set("outputs_needed", std::vector<int64_t>{c.wants[0], c.wants[1], c.wants[2]});
  auto d = c.g.emit("GroupNormGrad", kCbtDomain, {c.dY[0], n.inputs[0], n.inputs[1]}, 3, a, "d_" + n.name);
  for (size_t i = 0; i < 3; ++i) grads[i] = c.wants[i] ? d[i] : "";
  return grads;
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{"",
                             "BatchNormalization",
                             infer_batch_norm,
                             batch_norm_grad,
                             {0, 1, 2},
                             batch_norm_training_rewrite,
                             "batch norm; batch statistics and running-stat updates in training"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "BatchNormTraining",
                             infer_batch_norm_training,
                             batch_norm_grad,
                             {0, 1, 2},
                             {},
                             "training BatchNormalization: (Y, saved_mean, saved_invstd); "
                             "relu=1: Y = max(BN(X), 0)"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "BatchNormGrad", infer_batch_norm_grad, {}, {}, {}, "backward of batch norm: -> (dX, dScale, dBias)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "LayerNormalization",
                             infer_layer_norm,
                             layer_norm_grad,
                             {0, 1, 2},
                             layer_norm_training_rewrite,
                             "layer norm (axis, epsilon, optional B, Mean, InvStdDev)"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "LayerNormGrad",
                             infer_layer_norm_grad,
                             {},
                             {},
                             {},
                             "backward of LayerNormalization: -> (dX, dScale, dBias)"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "RMSNorm",
                             infer_rms_norm,
                             rms_norm_grad,
                             {0, 1},
                             {},
                             "root-mean-square norm over axis.. (epsilon, optional scale; InvRms): made by fusion"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "RMSNormGrad", infer_rms_norm_grad, {}, {}, {}, "backward of RMSNorm: -> (dX, dScale)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "InstanceNormalization",
                             infer_group_norm,
                             group_norm_grad,
                             {0, 1, 2},
                             {},
                             "instance norm: each channel of each sample over its values (epsilon)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "GroupNormalization",
                             infer_group_norm,
                             group_norm_grad,
                             {0, 1, 2},
                             {},
                             "group norm (num_groups, epsilon); scale and bias per group before opset 21"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "GroupNormGrad",
                             infer_group_norm_grad,
                             {},
                             {},
                             {},
                             "backward of Instance/GroupNormalization: -> (dX, dScale, dBias)"});

}  // namespace cbt
