// Schemas of cbtrain's losses (softmax cross-entropy, MSE, BCE with logits) and their grads.
#include "graph/op_schema.h"

namespace cbt {
namespace {

const ValueType& float_input(const InferContext& ctx, size_t i) {
  const ValueType& t = ctx.input(i);
  if (t.dtype != DType::Float32 && t.dtype != DType::Float64)
    ctx.fail("input " + std::to_string(i) + " must be float32 or float64, got " + dtype_name(t.dtype));
  return t;
}

// logits (N, C) float, labels (N) int64/int32[, dLoss ()] -> (loss (), log_probs (N, C)[,
// dLogits (N, C)[, dBias (C): the sums of dLogits' columns]]).
std::vector<ValueType> infer_sce(const InferContext& ctx) {
  const ValueType& x = float_input(ctx, 0);
  const ValueType& labels = ctx.input(1);
  if (x.shape.size() != 2) ctx.fail("logits must be (N, C), got " + shape_str(x.shape));
  if (labels.dtype != DType::Int64 && labels.dtype != DType::Int32)
    ctx.fail(std::string("labels must be int64 or int32, got ") + dtype_name(labels.dtype));
  if (labels.shape != Shape{x.shape[0]})
    ctx.fail("labels must be (N,) = (" + std::to_string(x.shape[0]) + ",), got " + shape_str(labels.shape));
  float eps = ctx.node.attrs.get_float("label_smoothing", 0.0f);
  if (!(eps >= 0 && eps <= 1)) ctx.fail("label_smoothing must be in [0, 1]");
  if (!ctx.node.has_input(2)) return {{x.dtype, {}}, x};
  const ValueType& dl = float_input(ctx, 2);
  if (dl.dtype != x.dtype || shape_numel(dl.shape) != 1) ctx.fail("dLoss must be a scalar of the logits' type");
  if (ctx.node.outputs.size() < 4) return {{x.dtype, {}}, x, x};
  return {{x.dtype, {}}, x, x, {x.dtype, {x.shape[1]}}};
}

// The backward op needs the log-probabilities: add the output when the node lacks it.
void sce_training_rewrite(Node& node, GradEmitter& g) {
  if (node.outputs.size() < 2) node.outputs.resize(2);
  if (node.outputs[1].empty()) node.outputs[1] = g.fresh(node.outputs[0] + "_log_probs");
}

std::vector<std::string> sce_grad(GradContext& c) {
  if (c.dY[0].empty() || !c.wants[0]) return {"", ""};
  return {c.g.emit1("SoftmaxCrossEntropyGrad", {c.dY[0], c.node.outputs.at(1), c.node.inputs[1]}, c.node.attrs), ""};
}

// (dLoss (), log_probs (N, C), labels (N)) -> dLogits (N, C).
std::vector<ValueType> infer_sce_grad(const InferContext& ctx) {
  const ValueType& dl = float_input(ctx, 0);
  const ValueType& lp = ctx.input(1);
  if (lp.dtype != dl.dtype || lp.shape.size() != 2) ctx.fail("log_probs must be (N, C) of dLoss's type");
  if (shape_numel(dl.shape) != 1) ctx.fail("dLoss must be a scalar");
  if (ctx.input(2).shape != Shape{lp.shape[0]}) ctx.fail("labels must be (N,)");
  return {lp};
}

// pred/logits and target of one shape and float type -> scalar mean loss.
std::vector<ValueType> infer_pointwise_loss(const InferContext& ctx) {
  const ValueType& p = float_input(ctx, 0);
  const ValueType& t = ctx.input(1);
  if (t != p)
    ctx.fail("target must match the prediction: " + shape_str(t.shape) + " " + dtype_name(t.dtype) + " vs " +
             shape_str(p.shape) + " " + dtype_name(p.dtype));
  return {{p.dtype, {}}};
}

GradFn pointwise_loss_grad(const char* op) {
  return [op](GradContext& c) -> std::vector<std::string> {
    if (c.dY[0].empty() || !c.wants[0]) return {"", ""};
    return {c.g.emit1(op, {c.dY[0], c.node.inputs[0], c.node.inputs[1]}), ""};
  };
}

// (dLoss (), pred, target) -> dPred.
std::vector<ValueType> infer_pointwise_loss_grad(const InferContext& ctx) {
  const ValueType& dl = float_input(ctx, 0);
  if (shape_numel(dl.shape) != 1) ctx.fail("dLoss must be a scalar");
  const ValueType& p = ctx.input(1);
  if (p != ctx.input(2) || p.dtype != dl.dtype) ctx.fail("pred/target type or shape mismatch");
  return {p};
}

}  // namespace

CBT_REGISTER_SCHEMA({kCbtDomain,
                     "SoftmaxCrossEntropy",
                     infer_sce,
                     sce_grad,
                     {0},
                     sce_training_rewrite,
                     "(logits (N,C), labels (N)[, dLoss]) -> (mean loss, log_probs[, dLogits = dLoss * "
                     "the loss's gradient[, dBias = its column sums], fuse_loss_gradient]); label_smoothing"});
CBT_REGISTER_SCHEMA(
    {kCbtDomain, "SoftmaxCrossEntropyGrad", infer_sce_grad, {}, {}, {}, "(dLoss, log_probs, labels) -> dLogits"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "MeanSquaredError",
                     infer_pointwise_loss,
                     pointwise_loss_grad("MeanSquaredErrorGrad"),
                     {0},
                     {},
                     "(pred, target) -> mean (pred - target)^2"});
CBT_REGISTER_SCHEMA(
    {kCbtDomain, "MeanSquaredErrorGrad", infer_pointwise_loss_grad, {}, {}, {}, "(dLoss, pred, target) -> dPred"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "BinaryCrossEntropyWithLogits",
                     infer_pointwise_loss,
                     pointwise_loss_grad("BinaryCrossEntropyWithLogitsGrad"),
                     {0},
                     {},
                     "(logits, targets) -> mean binary cross-entropy of sigmoid(logits)"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "BinaryCrossEntropyWithLogitsGrad",
                     infer_pointwise_loss_grad,
                     {},
                     {},
                     {},
                     "(dLoss, logits, targets) -> dLogits"});

}  // namespace cbt
