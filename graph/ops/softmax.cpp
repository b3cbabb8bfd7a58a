// Schemas of Softmax and LogSoftmax along one axis (opset 13 semantics) and their gradients.
#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

std::vector<ValueType> infer_softmax(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
    ctx.fail(std::string("input must be float32 or float64, got ") + dtype_name(x.dtype));
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) ctx.fail("input must have rank >= 1");
  // Before opset 13 the input was flattened to 2-D at `axis` (default 1); that equals the
  // one-axis form only when the axis is the last one.
  int64_t axis = ctx.node.attrs.get_int("axis", ctx.opset < 13 ? 1 : -1);
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) ctx.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (ctx.opset < 13 && a != rank - 1)
    ctx.fail("opset " + std::to_string(ctx.opset) +
             " softmax over the flattened trailing dims is supported only for the last axis");
  return {x};
}

std::vector<ValueType> infer_softmax_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  if (dy.dtype != DType::Float32 && dy.dtype != DType::Float64) ctx.fail("dY must be float");
  if (ctx.input(1) != dy) ctx.fail("dY and Y differ in type or shape");
  normalize_axis(ctx.node.attrs.get_int("axis", -1), static_cast<int64_t>(dy.shape.size()));
  return {dy};
}

// Both gradients need only Y; the axis is passed normalised so the default does not depend
// on the opset.
GradFn softmax_grad(const char* op) {
  return [op](GradContext& c) -> std::vector<std::string> {
    if (c.dY[0].empty() || !c.wants[0]) return {""};
    int64_t rank = static_cast<int64_t>(c.g.type(c.node.inputs[0]).shape.size());
    Attributes a;
    a.set("axis", normalize_axis(c.node.attrs.get_int("axis", -1), rank));
    return {c.g.emit1(op, {c.dY[0], c.node.outputs[0]}, a)};
  };
}

}  // namespace

CBT_REGISTER_SCHEMA(
    {"", "Softmax", infer_softmax, softmax_grad("SoftmaxGrad"), {0}, {}, "exp(X) / sum(exp(X)) along axis"});
CBT_REGISTER_SCHEMA(
    {"", "LogSoftmax", infer_softmax, softmax_grad("LogSoftmaxGrad"), {0}, {}, "X - log(sum(exp(X))) along axis"});
CBT_REGISTER_SCHEMA({kCbtDomain, "SoftmaxGrad", infer_softmax_grad, {}, {}, {}, "(dY, Y) -> Y (dY - sum(dY Y))"});
CBT_REGISTER_SCHEMA({kCbtDomain, "LogSoftmaxGrad", infer_softmax_grad, {}, {}, {}, "(dY, Y) -> dY - exp(Y) sum(dY)"});

}  // namespace cbt
