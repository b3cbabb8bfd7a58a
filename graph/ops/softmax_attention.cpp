// Schemas of SoftmaxAttention and its gradient (graph/softmax_attention.h), cbtrain's domain.
#include "graph/softmax_attention.h"

#include "graph/op_schema.h"

namespace cbt {
namespace {

// The dims of inputs `first`..first+2 (X, Y, V), of one float type; fails naming the problem.
AttentionDims checked_dims(const InferContext& ctx, size_t first) {
  const ValueType &x = ctx.input(first), &y = ctx.input(first + 1), &v = ctx.input(first + 2);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
    ctx.fail(std::string("X must be float32 or float64, got ") + dtype_name(x.dtype));
  if (y.dtype != x.dtype || v.dtype != x.dtype) ctx.fail("X, Y and V differ in type");
  auto d = attention_dims(x.shape, y.shape, v.shape);
  if (!d)
    ctx.fail("X " + shape_str(x.shape) + ", Y " + shape_str(y.shape) + " and V " + shape_str(v.shape) +
             " are not (..., S, D), (..., D, T), (..., T, E) with the same leading dims and none empty");
  return *d;
}

std::vector<ValueType> infer_attention(const InferContext& ctx) {
  checked_dims(ctx, 0);
  ValueType o = ctx.input(0);
  o.shape.back() = ctx.input(2).shape.back();
  return {o};
}

// (dO, X, Y, V) -> dX, dY, dV
std::vector<ValueType> infer_attention_grad(const InferContext& ctx) {
  checked_dims(ctx, 1);
  ValueType o = ctx.input(1);
  o.shape.back() = ctx.input(3).shape.back();
  if (ctx.input(0) != o) ctx.fail("dO " + shape_str(ctx.input(0).shape) + " is not the output's type");
  return {ctx.input(1), ctx.input(2), ctx.input(3)};
}

std::vector<std::string> attention_grad(GradContext& c) {
  std::vector<std::string> none(3, "");
  if (c.dY.empty() || c.dY[0].empty()) return none;
  Attributes a;
  a.set("outputs_needed", std::vector<int64_t>{c.wants[0], c.wants[1], c.wants[2]});
  std::vector<std::string> in{c.dY[0], c.node.inputs[0], c.node.inputs[1], c.node.inputs[2]};
  auto d = c.g.emit("SoftmaxAttentionGrad", kCbtDomain, in, 3, a, "d_" + c.node.name);
  for (size_t k = 0; k < 3; ++k)
    if (c.wants[k]) none[k] = d[k];
  return none;
}

}  // namespace

CBT_REGISTER_SCHEMA({kCbtDomain,
                     "SoftmaxAttention",
                     infer_attention,
                     attention_grad,
                     {0, 1, 2},
                     {},
                     "(X, Y, V) -> softmax(X Y) V along the last axis, per matrix (fused MatMul, Softmax, MatMul)"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "SoftmaxAttentionGrad",
                     infer_attention_grad,
                     {},
                     {},
                     {},
                     "(dO, X, Y, V) -> dX, dY, dV (the probabilities recomputed)"});

}  // namespace cbt
