// Schemas of the ops that produce or select values rather than move them: Shape, Constant,
// ConstantOfShape, Range, Equal, Where, and WhereGrad (Where is the only differentiable one:
// masked fills in attention pass gradients through it).
#include <algorithm>
#include <cmath>

#include "graph/op_schema.h"
#include "graph/ops/shape_ops_params.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

std::vector<ValueType> infer_shape(const InferContext& ctx) {
  int64_t r = static_cast<int64_t>(ctx.input(0).shape.size());
  auto clamp_end = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t start = clamp_end(ctx.node.attrs.get_int("start", 0));
  int64_t end = clamp_end(ctx.node.attrs.get_int("end", r));
  if ((ctx.node.attrs.has("start") || ctx.node.attrs.has("end")) && ctx.opset < 15)
    ctx.fail("start/end exist from opset 15 on");
  return {{DType::Int64, {std::max<int64_t>(end - start, 0)}}};
}

std::vector<ValueType> infer_constant(const InferContext& ctx) {
  const auto& attrs = ctx.node.attrs;
  int given = 0;
  ValueType t;
  for (const auto& [name, value] : attrs.all()) {
    ++given;
    if (name == "value") {
      const Tensor* v = attrs.get_tensor("value");
      t = {v->dtype(), v->shape()};
    } else if (name == "value_float") {
      t = {DType::Float32, {}};
    } else if (name == "value_floats") {
      t = {DType::Float32, {static_cast<int64_t>(attrs.get_floats(name).size())}};
    } else if (name == "value_int") {
      t = {DType::Int64, {}};
    } else if (name == "value_ints") {
      t = {DType::Int64, {static_cast<int64_t>(attrs.get_ints(name).size())}};
    } else {
      ctx.fail("unsupported Constant attribute '" + name + "' (value, value_float(s), value_int(s) are supported)");
    }
  }
  if (given != 1) ctx.fail("Constant needs exactly one value attribute");
  return {t};
}

std::vector<ValueType> infer_constant_of_shape(const InferContext& ctx) {
  const Tensor& shape = ctx.const_value(0);
  if (shape.rank() != 1 || shape.dtype() != DType::Int64) ctx.fail("shape input must be a 1-D int64 tensor");
  DType dtype = DType::Float32;
  if (const Tensor* v = ctx.node.attrs.get_tensor("value")) {
    if (v->numel() != 1) ctx.fail("value must hold exactly one element");
    dtype = v->dtype();
  }
  Shape out = shape.to_i64_vector();
  shape_numel(out);  // rejects negative dims
  return {{dtype, out}};
}

std::vector<ValueType> infer_range(const InferContext& ctx) {
  DType dtype = ctx.input(0).dtype;
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& t = ctx.const_value(i);
    if (t.dtype() != dtype || t.numel() != 1) ctx.fail("start, limit and delta must be scalars of one dtype");
  }
  int64_t n = 0;
  if (dtype == DType::Int64 || dtype == DType::Int32) {
    int64_t s = ctx.values[0]->at_i64(0), l = ctx.values[1]->at_i64(0), d = ctx.values[2]->at_i64(0);
    if (d == 0) ctx.fail("delta must not be 0");
    // ceil((l - s) / d) for either sign of d, in integers.
    int64_t span = 0;
    if (__builtin_sub_overflow(l, s, &span)) ctx.fail("Range limit - start overflows");
    n = d > 0 ? (span + d - 1) / d : (-span + (-d) - 1) / (-d);
  } else if (is_floating(dtype)) {
    double s = ctx.values[0]->at_f64(0), l = ctx.values[1]->at_f64(0), d = ctx.values[2]->at_f64(0);
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      ctx.fail("start, limit and delta must be finite and delta non-zero");
    double count = std::ceil((l - s) / d);
    if (count > 1e12) ctx.fail("Range of " + std::to_string(count) + " elements");
    n = static_cast<int64_t>(count);
  } else {
    ctx.fail(std::string("unsupported Range dtype ") + dtype_name(dtype));
  }
  return {{dtype, {std::max<int64_t>(n, 0)}}};
}

std::vector<ValueType> infer_equal(const InferContext& ctx) {
  const ValueType &a = ctx.input(0), &b = ctx.input(1);
  if (a.dtype != b.dtype)
    ctx.fail(std::string("inputs differ in dtype: ") + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype));
  return {{DType::Bool, broadcast_shapes(a.shape, b.shape)}};
}

std::vector<ValueType> infer_where(const InferContext& ctx) {
  const ValueType &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (c.dtype != DType::Bool) ctx.fail(std::string("condition must be bool, got ") + dtype_name(c.dtype));
  if (x.dtype != y.dtype)
    ctx.fail(std::string("X and Y differ in dtype: ") + dtype_name(x.dtype) + " vs " + dtype_name(y.dtype));
  return {{x.dtype, broadcast_shapes(c.shape, broadcast_shapes(x.shape, y.shape))}};
}

std::vector<std::string> grad_where(GradContext& ctx) {
  std::vector<std::string> dX(ctx.node.inputs.size());
  if (ctx.dY[0].empty() || (!ctx.wants[1] && !ctx.wants[2])) return dX;
  Attributes a;
  a.set("x_shape", ctx.g.type(ctx.node.inputs[1]).shape);
  a.set("y_shape", ctx.g.type(ctx.node.inputs[2]).shape);
  auto d = ctx.g.emit("WhereGrad", kCbtDomain, {ctx.node.inputs[0], ctx.dY[0]}, 2, std::move(a), "dX");
  if (ctx.wants[1]) dX[1] = d[0];
  if (ctx.wants[2]) dX[2] = d[1];
  return dX;
}

// dX = sum over broadcast axes of (cond ? dY : 0), dY of Y likewise with !cond.
std::vector<ValueType> infer_where_grad(const InferContext& ctx) {
  const ValueType &c = ctx.input(0), &dy = ctx.input(1);
  Shape xs = ctx.node.attrs.get_ints("x_shape"), ys = ctx.node.attrs.get_ints("y_shape");
  if (c.dtype != DType::Bool || !is_floating(dy.dtype)) ctx.fail("WhereGrad needs a bool condition and a float dY");
  if (broadcast_shapes(c.shape, broadcast_shapes(xs, ys)) != dy.shape)
    ctx.fail("dY shape " + shape_str(dy.shape) + " is not the broadcast of the inputs");
  return {{dy.dtype, xs}, {dy.dtype, ys}};
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{
    "", "Shape", naming_node(infer_shape), {}, {}, {}, "Shape of a tensor as int64 (start/end since opset 15)"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Constant", naming_node(infer_constant), {}, {}, {}, "Constant from value / value_float(s) / value_int(s)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "ConstantOfShape",
                             naming_node(infer_constant_of_shape),
                             {},
                             {},
                             {},
                             "Tensor of a constant shape filled with one value"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Range", naming_node(infer_range), {}, {}, {}, "start, start + delta, ... below limit"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Equal", naming_node(infer_equal), {}, {}, {}, "Elementwise equality with broadcasting (bool)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "Where",
                             naming_node(infer_where),
                             grad_where,
                             {1, 2},
                             {},
                             "Select X where the condition holds, else Y (broadcasting)"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "WhereGrad",
                             naming_node(infer_where_grad),
                             {},
                             {},
                             {},
                             "Gradient of Where: dY routed by the condition, reduced back"});

}  // namespace cbt
