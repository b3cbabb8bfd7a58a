// Schemas of the view-like shape ops (Flatten, Reshape, Squeeze, Unsqueeze) and ReshapeTo,
// the cbtrain op their gradients use to restore the input shape.
#include <algorithm>

#include "graph/op_schema.h"
#include "graph/ops/shape_ops_params.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// The gradient of every view op: dY reshaped back to the forward input's shape.
std::vector<std::string> reshape_back(GradContext& ctx) {
  std::vector<std::string> dX(ctx.node.inputs.size());
  if (!ctx.wants[0] || ctx.dY[0].empty()) return dX;
  Attributes a;
  a.set("shape", ctx.g.type(ctx.node.inputs[0]).shape);
  dX[0] = ctx.g.emit1("ReshapeTo", {ctx.dY[0]}, std::move(a), "dX");
  return dX;
}

std::vector<ValueType> infer_flatten(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t axis = ctx.node.attrs.get_int("axis", 1);
  if (axis < -r || axis > r) ctx.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  return {{x.dtype, {dims_product(x.shape, 0, axis), dims_product(x.shape, axis, r)}}};
}

std::vector<ValueType> infer_reshape(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const Tensor& shape = ctx.const_value(1);
  if (shape.rank() != 1) ctx.fail("shape input must be 1-D, got " + shape_str(shape.shape()));
  bool allow_zero = ctx.opset >= 14 && ctx.node.attrs.get_int("allowzero", 0) != 0;
  return {{x.dtype, reshape_target(x.shape, shape.to_i64_vector(), allow_zero)}};
}

std::vector<ValueType> infer_squeeze(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  auto axes = node_axes(ctx.node, const_inputs(ctx, {1}));
  int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop(r, false);
  if (axes) {
    for (int64_t a : normalize_axes(*axes, r)) {
      if (x.shape[a] != 1)
        ctx.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.shape[a]) + " in " +
                 shape_str(x.shape));
      drop[a] = true;
    }
  } else {
    for (int64_t a = 0; a < r; ++a) drop[a] = x.shape[a] == 1;
  }
  Shape out;
  for (int64_t a = 0; a < r; ++a)
    if (!drop[a]) out.push_back(x.shape[a]);
  return {{x.dtype, out}};
}

std::vector<ValueType> infer_unsqueeze(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  auto axes = node_axes(ctx.node, const_inputs(ctx, {1}));
  if (!axes) ctx.fail("Unsqueeze needs axes (input since opset 13, attribute before)");
  int64_t out_rank = static_cast<int64_t>(x.shape.size() + axes->size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : normalize_axes(*axes, out_rank)) inserted[a] = true;
  Shape out;
  size_t k = 0;
  for (int64_t a = 0; a < out_rank; ++a) out.push_back(inserted[a] ? 1 : x.shape[k++]);
  return {{x.dtype, out}};
}

std::vector<ValueType> infer_reshape_to(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  Shape shape = ctx.node.attrs.get_ints("shape");
  if (shape_numel(shape) != shape_numel(x.shape))
    ctx.fail("cannot reshape " + shape_str(x.shape) + " to " + shape_str(shape));
  return {{x.dtype, shape}};
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{
    "", "Flatten", naming_node(infer_flatten), reshape_back, {0}, {}, "Flatten to 2-D around an axis"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "Reshape",
                             naming_node(infer_reshape),
                             reshape_back,
                             {0},
                             {},
                             "Reshape to a constant shape (0 copies, one -1 inferred)"});
CBT_REGISTER_SCHEMA(OpSchema{"", "Squeeze", naming_node(infer_squeeze), reshape_back, {0}, {}, "Remove size-1 axes"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Unsqueeze", naming_node(infer_unsqueeze), reshape_back, {0}, {}, "Insert size-1 axes"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "ReshapeTo",
                             naming_node(infer_reshape_to),
                             reshape_back,
                             {0},
                             {},
                             "Reshape to the shape attribute (gradient of view ops)"});

}  // namespace cbt
