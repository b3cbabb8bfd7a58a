// Schemas of activations (Relu, LeakyRelu, Sigmoid, Tanh, Silu, Gelu, Elu, Selu, Softplus, Softsign,
// HardSigmoid, HardSwish, Mish, Celu, ThresholdedRelu), Dropout and their backward ops.
#include "graph/op_schema.h"

namespace cbt {
namespace {

std::vector<ValueType> infer_activation(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
    ctx.fail(std::string("input must be float32 or float64, got ") + dtype_name(x.dtype));
  if (ctx.node.op_type == "Gelu") {
    std::string approx = ctx.node.attrs.get_string("approximate", "none");
    if (approx != "none" && approx != "tanh") ctx.fail("approximate must be 'none' or 'tanh', got '" + approx + "'");
  }
  return {x};
}

// (dY, saved) -> dX, where saved is the forward input or output (same type and shape).
std::vector<ValueType> infer_activation_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  if (dy.dtype != DType::Float32 && dy.dtype != DType::Float64) ctx.fail("dY must be float");
  if (ctx.input(1) != dy) ctx.fail("dY and saved tensor differ in type or shape");
  if (ctx.num_inputs() > 2 && (ctx.node.op_type != "ReluGrad" || ctx.input(2) != dy))
    ctx.fail("only ReluGrad takes a third input, a second dY of dY's type and shape");
  return {dy};
}

// The backward op reads Y where the derivative is a function of Y alone (cheaper: X can be
// freed), else X; attributes (alpha, approximate) are passed on.
GradFn activation_grad(const char* op, bool use_output) {
  return [op, use_output](GradContext& c) -> std::vector<std::string> {
    if (c.dY[0].empty() || !c.wants[0]) return {""};
    const std::string& saved = use_output ? c.node.outputs[0] : c.node.inputs[0];
    return {c.g.emit1(op, {c.dY[0], saved}, c.node.attrs)};
  };
}

// Dropout: ratio is an attribute before opset 12, an optional constant input after, where
// an optional training_mode input follows; outputs output and an optional bool mask.
std::vector<ValueType> infer_dropout(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
    ctx.fail(std::string("input must be float32 or float64, got ") + dtype_name(x.dtype));
  double ratio = ctx.node.attrs.get_float("ratio", 0.5f);
  if (ctx.opset < 12 && ctx.num_inputs() > 1) ctx.fail("ratio is an attribute before opset 12");
  if (ctx.has(1)) {
    const Tensor& r = ctx.const_value(1);
    if (!is_floating(r.dtype()) || r.numel() != 1) ctx.fail("ratio must be a float scalar");
    ratio = r.at_f64(0);
  }
  if (!(ratio >= 0 && ratio < 1)) ctx.fail("ratio must be in [0, 1), got " + std::to_string(ratio));
  if (ctx.has(2) && (ctx.in[2].dtype != DType::Bool || shape_numel(ctx.in[2].shape) != 1))
    ctx.fail("training_mode must be a bool scalar");
  return {x, {DType::Bool, x.shape}};
}

// Training needs the mask for the backward op: add it when the model did not ask for it.
void dropout_training_rewrite(Node& node, GradEmitter& g) {
  if (node.outputs.size() < 2) node.outputs.resize(2);
  if (node.outputs[1].empty()) node.outputs[1] = g.fresh(node.outputs[0] + "_mask");
}

std::vector<std::string> dropout_grad(GradContext& c) {
  std::vector<std::string> d(c.node.inputs.size());
  if (c.dY[0].empty() || !c.wants[0]) return d;
  Attributes a;
  a.set("ratio", c.node.attrs.get_float("ratio", 0.5f));
  d[0] = c.g.emit1("DropoutGrad", {c.dY[0], c.node.outputs.at(1), c.node.input(1)}, a);
  return d;
}

}  // namespace

CBT_REGISTER_SCHEMA({"",
                     "Dropout",
                     infer_dropout,
                     dropout_grad,
                     {0},
                     dropout_training_rewrite,
                     "random zeroing while training (scaled by 1/(1-ratio)), identity otherwise"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "DropoutGrad",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& dy = ctx.input(0);
                       if (dy.dtype != DType::Float32 && dy.dtype != DType::Float64) ctx.fail("dY must be float");
                       const ValueType& m = ctx.input(1);
                       if (m.dtype != DType::Bool || m.shape != dy.shape) ctx.fail("mask must be bool of dY's shape");
                       return {dy};
                     },
                     {},
                     {},
                     {},
                     "(dY, mask, [ratio]) -> dY mask / (1 - ratio); ratio input over attribute"});
CBT_REGISTER_SCHEMA({"", "Relu", infer_activation, activation_grad("ReluGrad", true), {0}, {}, "max(X, 0)"});
// LeakyRelu saves X: with alpha <= 0 the sign of Y does not tell the side of zero.
CBT_REGISTER_SCHEMA(
    {"", "LeakyRelu", infer_activation, activation_grad("LeakyReluGrad", false), {0}, {}, "X >= 0 ? X : alpha X"});
CBT_REGISTER_SCHEMA(
    {"", "Sigmoid", infer_activation, activation_grad("SigmoidGrad", true), {0}, {}, "1 / (1 + exp(-X))"});
CBT_REGISTER_SCHEMA({"", "Tanh", infer_activation, activation_grad("TanhGrad", true), {0}, {}, "tanh(X)"});
// SiLU (swish): X * Sigmoid(X) as exporters write it becomes one Silu (graph/fusion.h).
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "Silu",
                     infer_activation,
                     activation_grad("SiluGrad", false),
                     {0},
                     {},
                     "X sigmoid(X): X * Sigmoid(X) fused"});
CBT_REGISTER_SCHEMA({"",
                     "Gelu",
                     infer_activation,
                     activation_grad("GeluGrad", false),
                     {0},
                     {},
                     "Gaussian error linear unit (approximate none or tanh)"});
// Their backward ops read X: with a non-positive alpha, or a clamp, Y does not tell X.
CBT_REGISTER_SCHEMA(
    {"", "Elu", infer_activation, activation_grad("EluGrad", false), {0}, {}, "X > 0 ? X : alpha (exp(X) - 1)"});
CBT_REGISTER_SCHEMA({"",
                     "Selu",
                     infer_activation,
                     activation_grad("SeluGrad", false),
                     {0},
                     {},
                     "gamma (X > 0 ? X : alpha (exp(X) - 1))"});
CBT_REGISTER_SCHEMA(
    {"", "Softplus", infer_activation, activation_grad("SoftplusGrad", false), {0}, {}, "log(1 + exp(X))"});
CBT_REGISTER_SCHEMA(
    {"", "Softsign", infer_activation, activation_grad("SoftsignGrad", false), {0}, {}, "X / (1 + |X|)"});
CBT_REGISTER_SCHEMA({"",
                     "HardSigmoid",
                     infer_activation,
                     activation_grad("HardSigmoidGrad", false),
                     {0},
                     {},
                     "max(0, min(1, alpha X + beta))"});
CBT_REGISTER_SCHEMA({"",
                     "HardSwish",
                     infer_activation,
                     activation_grad("HardSwishGrad", false),
                     {0},
                     {},
                     "X max(0, min(1, X / 6 + 1/2))"});
CBT_REGISTER_SCHEMA({"", "Mish", infer_activation, activation_grad("MishGrad", false), {0}, {}, "X tanh(softplus(X))"});
CBT_REGISTER_SCHEMA({"",
                     "Celu",
                     infer_activation,
                     activation_grad("CeluGrad", false),
                     {0},
                     {},
                     "max(0, X) + min(0, alpha (exp(X / alpha) - 1))"});
CBT_REGISTER_SCHEMA({"",
                     "ThresholdedRelu",
                     infer_activation,
                     activation_grad("ThresholdedReluGrad", false),
                     {0},
                     {},
                     "X > alpha ? X : 0"});

CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ReluGrad",
                     infer_activation_grad,
                     {},
                     {},
                     {},
                     "(dY, Y[, dY2]) -> dY (+ dY2) where Y > 0 (dY2: fuse_gradient_sum_relu)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "LeakyReluGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY or alpha dY"});
CBT_REGISTER_SCHEMA({kCbtDomain, "SigmoidGrad", infer_activation_grad, {}, {}, {}, "(dY, Y) -> dY Y (1 - Y)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "TanhGrad", infer_activation_grad, {}, {}, {}, "(dY, Y) -> dY (1 - Y^2)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "GeluGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY Gelu'(X)"});
CBT_REGISTER_SCHEMA(
    {kCbtDomain, "SiluGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY s (1 + X (1 - s)), s = sigmoid(X)"});

CBT_REGISTER_SCHEMA({kCbtDomain, "EluGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY or dY alpha exp(X)"});
CBT_REGISTER_SCHEMA(
    {kCbtDomain, "SeluGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY gamma or dY gamma alpha exp(X)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "SoftplusGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY sigmoid(X)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "SoftsignGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY / (1 + |X|)^2"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "HardSigmoidGrad",
                     infer_activation_grad,
                     {},
                     {},
                     {},
                     "(dY, X) -> dY alpha where 0 < alpha X + beta < 1, else 0"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "HardSwishGrad",
                     infer_activation_grad,
                     {},
                     {},
                     {},
                     "(dY, X) -> 0 below -3, dY above 3, dY (X / 3 + 1/2) between"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "MishGrad",
                     infer_activation_grad,
                     {},
                     {},
                     {},
                     "(dY, X) -> dY (t + X sigmoid(X) (1 - t^2)), t = tanh(softplus(X))"});
CBT_REGISTER_SCHEMA({kCbtDomain, "CeluGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY or dY exp(X / alpha)"});
CBT_REGISTER_SCHEMA(
    {kCbtDomain, "ThresholdedReluGrad", infer_activation_grad, {}, {}, {}, "(dY, X) -> dY where X > alpha, else 0"});

}  // namespace cbt
