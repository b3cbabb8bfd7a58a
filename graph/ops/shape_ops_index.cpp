// Schemas of the indexing ops (Slice, Pad, Gather) and of their cbtrain backward ops
// (SliceGrad, PadGrad, GatherGrad), which take the forward's parameter inputs and attributes
// so that both sides read them through the same helpers.
#include "graph/op_schema.h"
#include "graph/ops/shape_ops_params.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// Backward node of Slice/Pad: dY, then the forward's parameter inputs at the same positions,
// the forward's attributes and the forward input's shape; `unused` inputs are left out.
std::vector<std::string> grad_with_params(GradContext& ctx, const char* op, std::initializer_list<size_t> unused = {}) {
  std::vector<std::string> dX(ctx.node.inputs.size());
  if (!ctx.wants[0] || ctx.dY[0].empty()) return dX;
  std::vector<std::string> inputs = ctx.node.inputs;
  inputs[0] = ctx.dY[0];
  for (size_t i : unused)
    if (i < inputs.size()) inputs[i] = "";
  Attributes a = ctx.node.attrs;
  a.set("shape", ctx.g.type(ctx.node.inputs[0]).shape);
  dX[0] = ctx.g.emit1(op, std::move(inputs), std::move(a), "dX");
  return dX;
}

std::vector<ValueType> infer_slice(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  return {{x.dtype, node_slice_range(ctx.node, x.shape, const_inputs(ctx, {1, 2, 3, 4})).out}};
}

std::vector<ValueType> infer_slice_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  Shape shape = ctx.node.attrs.get_ints("shape");
  SliceRange r = node_slice_range(ctx.node, shape, const_inputs(ctx, {1, 2, 3, 4}));
  if (r.out != dy.shape) ctx.fail("dY shape " + shape_str(dy.shape) + " differs from the slice " + shape_str(r.out));
  return {{dy.dtype, shape}};
}

// Validates mode and pads of a Pad (or PadGrad on the forward input shape `in`).
Shape checked_padded_shape(const InferContext& ctx, const Shape& in) {
  std::string mode = ctx.node.attrs.get_string("mode", "constant");
  if (mode == "wrap" && ctx.opset < 19) ctx.fail("Pad mode 'wrap' exists from opset 19 on");
  if (ctx.has(3) && ctx.opset < 18) ctx.fail("Pad's axes input exists from opset 18 on");
  auto pads = node_pads(ctx.node, in, const_inputs(ctx, {1, 3}));
  pad_index_maps(in, pads, parse_pad_mode(mode));
  return padded_shape(in, pads);
}

std::vector<ValueType> infer_pad(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (ctx.has(2)) {
    const ValueType& v = ctx.in[2];
    if (v.dtype != x.dtype || shape_numel(v.shape) != 1)
      ctx.fail("constant_value must be one " + std::string(dtype_name(x.dtype)) + " value, got " + dtype_name(v.dtype) +
               " " + shape_str(v.shape));
  }
  return {{x.dtype, checked_padded_shape(ctx, x.shape)}};
}

std::vector<ValueType> infer_pad_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  Shape shape = ctx.node.attrs.get_ints("shape");
  if (checked_padded_shape(ctx, shape) != dy.shape)
    ctx.fail("dY shape " + shape_str(dy.shape) + " differs from the padded shape");
  return {{dy.dtype, shape}};
}

// Output shape of gathering `indices` along `axis` of `data`.
Shape gather_shape(const Shape& data, const Shape& indices, int64_t axis) {
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return out;
}

void check_indices(const InferContext& ctx, size_t i, int64_t dim) {
  const ValueType& t = ctx.input(i);
  if (t.dtype != DType::Int64 && t.dtype != DType::Int32)
    ctx.fail(std::string("indices must be int64 or int32, got ") + dtype_name(t.dtype));
  if (i >= ctx.values.size() || !ctx.values[i]) return;
  for (int64_t v : ctx.values[i]->to_i64_vector())
    if (v < -dim || v >= dim)
      ctx.fail("index " + std::to_string(v) + " out of range for an axis of " + std::to_string(dim));
}

std::vector<ValueType> infer_gather(const InferContext& ctx) {
  const ValueType& data = ctx.input(0);
  if (data.shape.empty()) ctx.fail("Gather from a scalar");
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), data.shape.size());
  check_indices(ctx, 1, data.shape[axis]);
  return {{data.dtype, gather_shape(data.shape, ctx.in[1].shape, axis)}};
}

std::vector<std::string> grad_gather(GradContext& ctx) {
  std::vector<std::string> dX(ctx.node.inputs.size());
  if (!ctx.wants[0] || ctx.dY[0].empty()) return dX;
  const Shape& shape = ctx.g.type(ctx.node.inputs[0]).shape;
  Attributes a;
  a.set("axis", normalize_axis(ctx.node.attrs.get_int("axis", 0), shape.size()));
  a.set("shape", shape);
  dX[0] = ctx.g.emit1("GatherGrad", {ctx.dY[0], ctx.node.inputs[1]}, std::move(a), "dX");
  return dX;
}

// dX of a Gather: zeros with dY scatter-added at the gathered positions.
std::vector<ValueType> infer_gather_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  Shape shape = ctx.node.attrs.get_ints("shape");
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), shape.size());
  check_indices(ctx, 1, shape[axis]);
  if (gather_shape(shape, ctx.in[1].shape, axis) != dy.shape)
    ctx.fail("dY shape " + shape_str(dy.shape) + " does not match the gather");
  if (!is_floating(dy.dtype)) ctx.fail("GatherGrad needs a float dY");
  return {{dy.dtype, shape}};
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{"",
                             "Slice",
                             naming_node(infer_slice),
                             [](GradContext& c) { return grad_with_params(c, "SliceGrad"); },
                             {0},
                             {},
                             "Strided slice (negative steps, clamped ends)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "Pad",
                             naming_node(infer_pad),
                             [](GradContext& c) { return grad_with_params(c, "PadGrad", {2}); },
                             {0},
                             {},
                             "Pad (constant, reflect, edge, wrap)"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Gather", naming_node(infer_gather), grad_gather, {0}, {}, "Gather slices along an axis by index"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "SliceGrad", naming_node(infer_slice_grad), {}, {}, {}, "Gradient of Slice: dY placed into zeros"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "PadGrad",
                             naming_node(infer_pad_grad),
                             {},
                             {},
                             {},
                             "Gradient of Pad: dY summed back onto the positions it read"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "GatherGrad",
                             naming_node(infer_gather_grad),
                             {},
                             {},
                             {},
                             "Gradient of Gather: dY scatter-added into zeros"});

}  // namespace cbt
