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

// The optional bias (input `i`): of X's type, broadcast to the scores unchanged.
void check_bias(const InferContext& ctx, size_t i, size_t x) {
  if (!ctx.has(i)) return;
  const ValueType& b = ctx.input(i);
  const Shape scores = attention_scores_shape(ctx.input(x).shape, ctx.input(x + 1).shape);
  if (b.dtype != ctx.input(x).dtype) ctx.fail("B differs in type from X");
  if (!score_bias_layout(b.shape, scores))
    ctx.fail("B " + shape_str(b.shape) + " does not broadcast to the scores " + shape_str(scores));
}

// X, Y, V, B? -> O
std::vector<ValueType> infer_attention(const InferContext& ctx) {
  checked_dims(ctx, 0);
  check_bias(ctx, 3, 0);
  ValueType o = ctx.input(0);
  o.shape.back() = ctx.input(2).shape.back();
  return {o};
}

// (dO, X, Y, V, B?) -> dX, dY, dV, dS? (the scores' gradient, with a fourth output)
std::vector<ValueType> infer_attention_grad(const InferContext& ctx) {
  checked_dims(ctx, 1);
  check_bias(ctx, 4, 1);
  ValueType o = ctx.input(1);
  o.shape.back() = ctx.input(3).shape.back();
  if (ctx.input(0) != o) ctx.fail("dO " + shape_str(ctx.input(0).shape) + " is not the output's type");
  std::vector<ValueType> out{ctx.input(1), ctx.input(2), ctx.input(3)};
  if (ctx.node.outputs.size() > 3)
    out.push_back({ctx.input(1).dtype, attention_scores_shape(ctx.input(1).shape, ctx.input(2).shape)});
  return out;
}

// The bias's gradient is the scores' summed to its shape (a constant mask wants none).
std::vector<std::string> attention_grad(GradContext& c) {
  const Node& n = c.node;
  std::vector<std::string> none(n.inputs.size(), "");
  if (c.dY.empty() || c.dY[0].empty()) return none;
  const bool bias = n.has_input(3), want_bias = bias && c.wants.size() > 3 && c.wants[3];
  Attributes a;
  a.set("outputs_needed", std::vector<int64_t>{c.wants[0], c.wants[1], c.wants[2], want_bias});
  std::vector<std::string> in{c.dY[0], n.inputs[0], n.inputs[1], n.inputs[2]};
  if (bias) in.push_back(n.inputs[3]);
  auto d = c.g.emit("SoftmaxAttentionGrad", kCbtDomain, in, want_bias ? 4 : 3, a, "d_" + n.name);
  for (size_t k = 0; k < 3; ++k)
    if (c.wants[k]) none[k] = d[k];
  if (want_bias) {
    const Shape& target = c.g.type(n.inputs[3]).shape;
    none[3] = d[3];
    if (c.g.type(d[3]).shape != target) {
      Attributes r;
      r.set("shape", target);
      none[3] = c.g.emit1("ReduceSumTo", {d[3]}, r, "bias_grad");
    }
  }
  return none;
}

}  // namespace

CBT_REGISTER_SCHEMA({kCbtDomain,
                     "SoftmaxAttention",
                     infer_attention,
                     attention_grad,
                     {0, 1, 2, 3},
                     {},
                     "(X, Y, V, B?) -> softmax(X Y + B) V along the last axis, per matrix (fused MatMul, Add, "
                     "Softmax, MatMul)"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "SoftmaxAttentionGrad",
                     infer_attention_grad,
                     {},
                     {},
                     {},
                     "(dO, X, Y, V, B?) -> dX, dY, dV, dS? (the probabilities recomputed; dS the scores' "
                     "gradient, for B's)"});

}  // namespace cbt
