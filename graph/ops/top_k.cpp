// Schemas of TopK (the k largest or smallest values along an axis and their indices; k a
// constant) and of TopKGrad, its backward: the values' gradient put back where they came from.
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// k: input 1 (opset 10 on: one int64 value, a constant) or the attribute (opset 1).
int64_t k_of(const InferContext& ctx) {
  if (ctx.opset < 10) return ctx.node.attrs.get_int("k", 0);
  const Tensor& t = ctx.const_value(1);
  if (t.dtype() != DType::Int64 || t.numel() != 1) ctx.fail("K must be one int64 value");
  return t.ptr<int64_t>()[0];
}

// X, K -> Values (X's type), Indices (int64): X's shape with k along the axis.
std::vector<ValueType> infer_top_k(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_arith(x.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(x.dtype));
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = ctx.node.attrs.get_int("axis", -1);
  if (rank == 0 || axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " out of range for " + shape_str(x.shape));
  const int64_t a = normalize_axis(axis, rank), k = k_of(ctx);
  if (k < 1 || k > x.shape[a])
    ctx.fail("k " + std::to_string(k) + " must be in [1, " + std::to_string(x.shape[a]) + "], the length of axis " +
             std::to_string(axis) + " of " + shape_str(x.shape));
  Shape s = x.shape;
  s[a] = k;
  return {{x.dtype, s}, {DType::Int64, s}};
}

// The backward reads the indices: name them where the model does not use them.
void top_k_training_rewrite(Node& node, GradEmitter& g) {
  if (node.outputs.size() < 2) node.outputs.resize(2);
  if (node.outputs[1].empty()) node.outputs[1] = g.fresh((node.name.empty() ? "topk" : node.name) + "_indices");
}

// dX = TopKGrad(dValues, Indices, X).
std::vector<std::string> top_k_grad(GradContext& c) {
  std::vector<std::string> dx(c.node.inputs.size());
  if (c.dY.empty() || c.dY[0].empty() || !c.wants[0]) return dx;
  Attributes a;
  a.set("axis", c.node.attrs.get_int("axis", -1));
  dx[0] = c.g.emit1("TopKGrad", {c.dY[0], c.node.outputs[1], c.node.inputs[0]}, a, "d_topk");
  return dx;
}

// dValues, Indices, X -> dX, typed as X.
std::vector<ValueType> infer_top_k_grad(const InferContext& ctx) {
  if (ctx.input(0).shape != ctx.input(1).shape) ctx.fail("dValues and Indices must have one shape");
  return {ctx.input(2)};
}

}  // namespace

CBT_REGISTER_SCHEMA({"",
                     "TopK",
                     infer_top_k,
                     top_k_grad,
                     {0},
                     top_k_training_rewrite,
                     "k largest or smallest values along an axis and their indices (constant K; ties to the "
                     "lower index, NaN largest; always sorted)",
                     {1}});
CBT_REGISTER_SCHEMA({kCbtDomain, "TopKGrad", infer_top_k_grad, {}, {}, {}, "(dValues, Indices, X) -> dX", {}});

}  // namespace cbt
