// Schemas of element-wise arithmetic (Add..Pow, Mod, Sum, Mean, Max, Min, PRelu, Neg, Sqrt, Erf, Exp, Log, Abs,
// Reciprocal, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Floor, Ceil, Round, Sign, Identity,
// Cast, Clip) and their backward ops, including ReduceSumTo, which sums a broadcast gradient back to shape.
#include <cmath>

#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

const ValueType& float_input(const InferContext& ctx, size_t i) {
  const ValueType& t = ctx.input(i);
  if (t.dtype != DType::Float32 && t.dtype != DType::Float64)
    ctx.fail("input " + std::to_string(i) + " must be float32 or float64, got " + dtype_name(t.dtype));
  return t;
}

Shape broadcast_or_fail(const InferContext& ctx, const Shape& a, const Shape& b) {
  try {
    return broadcast_shapes(a, b);
  } catch (const ModelError& e) {
    ctx.fail(e.what());
  }
}

// Same dtype on both inputs, numpy-broadcast shape.
std::vector<ValueType> infer_binary(const InferContext& ctx) {
  if (ctx.num_inputs() != 2) ctx.fail("expects 2 inputs");
  const ValueType& a = ctx.input(0);
  const ValueType& b = ctx.input(1);
  if (a.dtype != b.dtype)
    ctx.fail(std::string("input types differ: ") + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype));
  if (!is_arith(a.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(a.dtype));
  return {{a.dtype, broadcast_or_fail(ctx, a.shape, b.shape)}};
}

std::vector<ValueType> infer_same_float(const InferContext& ctx) { return {float_input(ctx, 0)}; }

// Sum and Mean: one to kVariadicInputs float inputs of one type, numpy-broadcast together;
// a gradient flows to each (diff_inputs lists them all).
constexpr int kVariadicInputs = 256;
std::vector<ValueType> infer_variadic(const InferContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.fail("expects at least one input");
  if (ctx.num_inputs() > kVariadicInputs)
    ctx.fail("takes at most " + std::to_string(kVariadicInputs) + " inputs, got " + std::to_string(ctx.num_inputs()));
  ValueType out = float_input(ctx, 0);
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const ValueType& x = float_input(ctx, i);
    if (x.dtype != out.dtype)
      ctx.fail(std::string("input types differ: ") + dtype_name(out.dtype) + " vs " + dtype_name(x.dtype));
    out.shape = broadcast_or_fail(ctx, out.shape, x.shape);
  }
  return {out};
}

// The gradient dY of a broadcast result, summed back to the shape of input `i`.
std::string reduce_to(GradContext& c, const std::string& dy, size_t i) {
  const Shape& target = c.g.type(c.node.inputs[i]).shape;
  if (c.g.type(dy).shape == target) return dy;
  Attributes a;
  a.set("shape", target);
  return c.g.emit1("ReduceSumTo", {dy}, a, "reduce_to");
}

// Sum's gradient is dY summed back to each input's shape; Mean's is that divided by the count.
std::vector<std::string> grad_variadic(GradContext& c, bool mean) {
  std::vector<std::string> d(c.node.inputs.size());
  if (c.dY[0].empty()) return d;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!c.wants[i]) continue;
    if (!mean) {
      d[i] = reduce_to(c, c.dY[0], i);
      continue;
    }
    Attributes a;
    a.set("shape", c.g.type(c.node.inputs[i]).shape);
    a.set("scale", 1.0f / static_cast<float>(d.size()));
    d[i] = c.g.emit1("ReduceSumTo", {c.dY[0]}, a, "mean_grad");
  }
  return d;
}

std::string neg(GradContext& c, const std::string& v) { return c.g.emit("Neg", "", {v}, 1, {}, "neg")[0]; }

// An Add with relu=1 (graph/fusion.h, fuse_relu) first counts dY where its output Y > 0, as
// the Relu's ReluGrad would.
std::vector<std::string> grad_add_sub(GradContext& c, bool sub) {
  std::vector<std::string> d(2);
  if (c.dY[0].empty()) return d;
  std::string dy = c.dY[0];
  if (!sub && c.node.attrs.get_int("relu", 0)) dy = c.g.emit1("ReluGrad", {dy, c.node.outputs[0]}, {});
  if (c.wants[0]) d[0] = reduce_to(c, dy, 0);
  if (c.wants[1]) d[1] = sub ? neg(c, reduce_to(c, dy, 1)) : reduce_to(c, dy, 1);
  return d;
}

std::vector<std::string> grad_mul(GradContext& c) {
  std::vector<std::string> d(2);
  if (c.dY[0].empty()) return d;
  for (size_t i = 0; i < 2; ++i) {
    if (!c.wants[i]) continue;
    std::string p = c.g.emit("Mul", "", {c.dY[0], c.node.inputs[1 - i]}, 1, {}, "mul_grad")[0];
    d[i] = reduce_to(c, p, i);
  }
  return d;
}

// Mod (fmod 1) of floats: dA = dY, dB = -dY trunc(A / B), trunc(q) = Sign(q) Floor(|q|), of ops
// every device has (PyTorch's fmod gradient). Integers get none.
std::vector<std::string> grad_mod(GradContext& c) {
  std::vector<std::string> d(2);
  if (c.dY[0].empty() || !is_floating(c.g.type(c.node.inputs[0]).dtype)) return d;
  if (c.wants[0]) d[0] = reduce_to(c, c.dY[0], 0);
  if (c.wants[1]) {
    auto op = [&c](const char* type, std::vector<std::string> in) {
      return c.g.emit(type, "", in, 1, {}, "mod_grad")[0];
    };
    const std::string q = op("Div", {c.node.inputs[0], c.node.inputs[1]});
    const std::string trunc = op("Mul", {op("Sign", {q}), op("Floor", {op("Abs", {q})})});
    d[1] = neg(c, reduce_to(c, op("Mul", {c.dY[0], trunc}), 1));
  }
  return d;
}

// Div and Pow: one fused node for both operands; the exponent/divisor output only when wanted.
std::vector<std::string> grad_fused_pair(GradContext& c, const char* op) {
  std::vector<std::string> d(2);
  if (c.dY[0].empty() || (!c.wants[0] && !c.wants[1])) return d;
  auto outs = c.g.emit(op, kCbtDomain, {c.dY[0], c.node.inputs[0], c.node.inputs[1]}, c.wants[1] ? 2 : 1, {}, "grad");
  if (c.wants[0]) d[0] = outs[0];
  if (c.wants[1]) d[1] = outs[1];
  return d;
}

// Backward ops (dY, A, B) -> (dA, dB): dA has A's shape, dB has B's shape.
std::vector<ValueType> infer_pair_grad(const InferContext& ctx) {
  const ValueType& dy = float_input(ctx, 0);
  const ValueType& a = ctx.input(1);
  const ValueType& b = ctx.input(2);
  // Pow's exponent may be an integer tensor; it then gets no gradient.
  if (a.dtype != dy.dtype || !is_arith(b.dtype)) ctx.fail("operand types differ from dY");
  if (broadcast_or_fail(ctx, a.shape, b.shape) != dy.shape) ctx.fail("dY shape mismatch");
  return {a, b};
}

// Unary op whose backward op takes (dY, saved) where saved is the forward input or output.
GradFn unary_grad(const char* op, bool use_output) {
  return [op, use_output](GradContext& c) -> std::vector<std::string> {
    if (c.dY[0].empty() || !c.wants[0]) return {""};
    const std::string& saved = use_output ? c.node.outputs[0] : c.node.inputs[0];
    return {c.g.emit1(op, {c.dY[0], saved}, c.node.attrs)};
  };
}

// Piecewise constant: their derivative is zero wherever it exists, so no gradient flows back
// through them: Floor, Ceil, Round, Sign (as in PyTorch).
GradFn zero_grad() {
  return [](GradContext&) -> std::vector<std::string> { return {""}; };
}

// (dY, saved) -> dX of dY's type, both the same shape.
std::vector<ValueType> infer_unary_grad(const InferContext& ctx) {
  const ValueType& dy = float_input(ctx, 0);
  const ValueType& s = ctx.input(1);
  if (s != dy) ctx.fail("dY and saved tensor differ in type or shape");
  return {dy};
}

// ONNX TensorProto.DataType codes that Cast supports.
DType cast_target(const InferContext& ctx, int64_t code) {
  switch (code) {
    case 1:
      return DType::Float32;
    case 2:
      return DType::UInt8;
    case 3:
      return DType::Int8;
    case 6:
      return DType::Int32;
    case 7:
      return DType::Int64;
    case 9:
      return DType::Bool;
    case 11:
      return DType::Float64;
    default:
      ctx.fail("Cast to ONNX type " + std::to_string(code) + " is not supported");
  }
}

int64_t onnx_code(DType t) {
  switch (t) {
    case DType::Float32:
      return 1;
    case DType::Float64:
      return 11;
    default:
      CBT_CHECK(false, "no float code for ", dtype_name(t));
  }
  return 0;
}

bool castable(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int64 || t == DType::Int32 || t == DType::Int8 ||
         t == DType::UInt8 || t == DType::Bool;
}

std::vector<ValueType> infer_clip(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_arith(x.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(x.dtype));
  if (ctx.opset < 11 && ctx.num_inputs() > 1) ctx.fail("min/max are attributes before opset 11, not inputs");
  if (ctx.opset >= 11 && (ctx.node.attrs.has("min") || ctx.node.attrs.has("max")))
    ctx.fail("min/max are inputs since opset 11, not attributes");
  for (size_t i = 1; i < 3; ++i)
    if (ctx.has(i) && (ctx.in[i].dtype != x.dtype || shape_numel(ctx.in[i].shape) != 1))
      ctx.fail("input " + std::to_string(i) + " must be a scalar of the input's type");
  return {x};
}

}  // namespace

CBT_REGISTER_SCHEMA({"",
                     "Add",
                     infer_binary,
                     [](GradContext& c) { return grad_add_sub(c, false); },
                     {0, 1},
                     {},
                     "A + B with numpy broadcasting"});
CBT_REGISTER_SCHEMA({"",
                     "Sub",
                     infer_binary,
                     [](GradContext& c) { return grad_add_sub(c, true); },
                     {0, 1},
                     {},
                     "A - B with numpy broadcasting"});
CBT_REGISTER_SCHEMA({"", "Mul", infer_binary, grad_mul, {0, 1}, {}, "A * B with numpy broadcasting"});
CBT_REGISTER_SCHEMA({"",
                     "Mod",
                     [](const InferContext& ctx) {
                       auto out = infer_binary(ctx);
                       if (is_floating(out[0].dtype) && ctx.node.attrs.get_int("fmod", 0) != 1)
                         ctx.fail("float inputs need fmod = 1");
                       return out;
                     },
                     grad_mod,
                     {0, 1},
                     {},
                     "remainder with numpy broadcasting (fmod: the dividend's sign, else the divisor's; a divisor "
                     "of 0 gives 0 for integers)"});
CBT_REGISTER_SCHEMA({"",
                     "Div",
                     infer_binary,
                     [](GradContext& c) { return grad_fused_pair(c, "DivGrad"); },
                     {0, 1},
                     {},
                     "A / B with numpy broadcasting (integers truncate)"});
CBT_REGISTER_SCHEMA({"",
                     "Pow",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& a = float_input(ctx, 0);
                       const ValueType& b = ctx.input(1);
                       if (!is_arith(b.dtype)) ctx.fail("exponent must be float or integer");
                       return {{a.dtype, broadcast_or_fail(ctx, a.shape, b.shape)}};
                     },
                     [](GradContext& c) {
                       // An integer exponent gets no gradient.
                       if (!is_floating(c.g.type(c.node.inputs[1]).dtype)) c.wants[1] = false;
                       return grad_fused_pair(c, "PowGrad");
                     },
                     {0, 1},
                     {},
                     "A ^ B with numpy broadcasting (float base)"});
CBT_REGISTER_SCHEMA({"",
                     "Sum",
                     infer_variadic,
                     [](GradContext& c) { return grad_variadic(c, false); },
                     input_positions(kVariadicInputs),
                     {},
                     "sum of one or more inputs with numpy broadcasting (float)"});
CBT_REGISTER_SCHEMA({"",
                     "Mean",
                     infer_variadic,
                     [](GradContext& c) { return grad_variadic(c, true); },
                     input_positions(kVariadicInputs),
                     {},
                     "mean of one or more inputs with numpy broadcasting (float)"});
// Two inputs: ONNX allows any number, exporters write two (torch.maximum, clamp by a tensor);
// other counts become a chain at load (graph/composite_ops.h).
CBT_REGISTER_SCHEMA({"",
                     "Max",
                     infer_binary,
                     [](GradContext& c) { return grad_fused_pair(c, "MaxGrad"); },
                     {0, 1},
                     {},
                     "larger of the inputs with numpy broadcasting (ties share the gradient; more than two: a chain)"});
CBT_REGISTER_SCHEMA(
    {"",
     "Min",
     infer_binary,
     [](GradContext& c) { return grad_fused_pair(c, "MinGrad"); },
     {0, 1},
     {},
     "smaller of the inputs with numpy broadcasting (ties share the gradient; more than two: a chain)"});
// The slope broadcasts to X (one per channel as exported: shape (C, 1, 1)) and is trained.
CBT_REGISTER_SCHEMA({"",
                     "PRelu",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& x = float_input(ctx, 0);
                       const ValueType& slope = ctx.input(1);
                       if (slope.dtype != x.dtype) ctx.fail("slope must have X's type");
                       if (broadcast_or_fail(ctx, x.shape, slope.shape) != x.shape)
                         ctx.fail("slope " + shape_str(slope.shape) + " does not broadcast to X " + shape_str(x.shape));
                       return {x};
                     },
                     [](GradContext& c) { return grad_fused_pair(c, "PReluGrad"); },
                     {0, 1},
                     {},
                     "X < 0 ? slope X : X (slope broadcast to X, trained)"});
CBT_REGISTER_SCHEMA({"",
                     "Neg",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& x = ctx.input(0);
                       if (!is_arith(x.dtype)) ctx.fail("Neg needs a float or integer input");
                       return {x};
                     },
                     [](GradContext& c) -> std::vector<std::string> {
                       if (c.dY[0].empty() || !c.wants[0]) return {""};
                       return {neg(c, c.dY[0])};
                     },
                     {0},
                     {},
                     "-X"});
CBT_REGISTER_SCHEMA({"", "Sqrt", infer_same_float, unary_grad("SqrtGrad", true), {0}, {}, "square root"});
CBT_REGISTER_SCHEMA({"", "Erf", infer_same_float, unary_grad("ErfGrad", false), {0}, {}, "Gauss error function"});
CBT_REGISTER_SCHEMA({"", "Exp", infer_same_float, unary_grad("ExpGrad", true), {0}, {}, "exp(X)"});
CBT_REGISTER_SCHEMA({"", "Log", infer_same_float, unary_grad("LogGrad", false), {0}, {}, "natural logarithm"});
CBT_REGISTER_SCHEMA({"", "Abs", infer_same_float, unary_grad("AbsGrad", false), {0}, {}, "|X| (float)"});
CBT_REGISTER_SCHEMA({"", "Reciprocal", infer_same_float, unary_grad("ReciprocalGrad", true), {0}, {}, "1 / X"});
CBT_REGISTER_SCHEMA({"", "Sin", infer_same_float, unary_grad("SinGrad", false), {0}, {}, "sin(X)"});
CBT_REGISTER_SCHEMA({"", "Cos", infer_same_float, unary_grad("CosGrad", false), {0}, {}, "cos(X)"});
CBT_REGISTER_SCHEMA({"", "Tan", infer_same_float, unary_grad("TanGrad", true), {0}, {}, "tan(X)"});
CBT_REGISTER_SCHEMA({"", "Asin", infer_same_float, unary_grad("AsinGrad", false), {0}, {}, "arcsine"});
CBT_REGISTER_SCHEMA({"", "Acos", infer_same_float, unary_grad("AcosGrad", false), {0}, {}, "arccosine"});
CBT_REGISTER_SCHEMA({"", "Atan", infer_same_float, unary_grad("AtanGrad", false), {0}, {}, "arctangent"});
CBT_REGISTER_SCHEMA({"", "Sinh", infer_same_float, unary_grad("SinhGrad", false), {0}, {}, "hyperbolic sine"});
CBT_REGISTER_SCHEMA({"", "Cosh", infer_same_float, unary_grad("CoshGrad", false), {0}, {}, "hyperbolic cosine"});
CBT_REGISTER_SCHEMA(
    {"", "Asinh", infer_same_float, unary_grad("AsinhGrad", false), {0}, {}, "inverse hyperbolic sine"});
CBT_REGISTER_SCHEMA(
    {"", "Acosh", infer_same_float, unary_grad("AcoshGrad", false), {0}, {}, "inverse hyperbolic cosine"});
CBT_REGISTER_SCHEMA(
    {"", "Atanh", infer_same_float, unary_grad("AtanhGrad", false), {0}, {}, "inverse hyperbolic tangent"});
CBT_REGISTER_SCHEMA({"", "Floor", infer_same_float, zero_grad(), {0}, {}, "floor(X) (float; no gradient flows back)"});
CBT_REGISTER_SCHEMA({"", "Ceil", infer_same_float, zero_grad(), {0}, {}, "ceil(X) (float; no gradient flows back)"});
CBT_REGISTER_SCHEMA(
    {"", "Round", infer_same_float, zero_grad(), {0}, {}, "X rounded, halves to even (float; no gradient flows back)"});
CBT_REGISTER_SCHEMA({"", "Sign", infer_same_float, zero_grad(), {0}, {}, "-1, 0 or 1 (float; no gradient flows back)"});
CBT_REGISTER_SCHEMA({"",
                     "Identity",
                     [](const InferContext& ctx) -> std::vector<ValueType> { return {ctx.input(0)}; },
                     [](GradContext& c) -> std::vector<std::string> { return {c.wants[0] ? c.dY[0] : ""}; },
                     {0},
                     {},
                     "Y = X"});
// Cast and CastLike: only float -> float casts carry a gradient (cast back).
static std::vector<std::string> cast_grad(GradContext& c) {
  DType from = c.g.type(c.node.inputs[0]).dtype;
  DType to = c.g.type(c.node.outputs[0]).dtype;
  if (c.dY[0].empty() || !c.wants[0] || !is_floating(from) || !is_floating(to)) return {""};
  if (from == to) return {c.dY[0]};
  Attributes a;
  a.set("to", onnx_code(from));
  return {c.g.emit("Cast", "", {c.dY[0]}, 1, a, "cast_grad")[0]};
}

CBT_REGISTER_SCHEMA({"",
                     "Cast",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& x = ctx.input(0);
                       if (!ctx.node.attrs.has("to")) ctx.fail("attribute 'to' is required");
                       DType to = cast_target(ctx, ctx.node.attrs.get_int("to", 0));
                       if (!castable(x.dtype))
                         ctx.fail(std::string("Cast from ") + dtype_name(x.dtype) + " is not supported");
                       return {{to, x.shape}};
                     },
                     cast_grad,
                     {0},
                     {},
                     "element type conversion (float/int/bool)"});
CBT_REGISTER_SCHEMA({"",
                     "CastLike",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& x = ctx.input(0);
                       DType to = ctx.input(1).dtype;
                       if (!castable(x.dtype) || !castable(to))
                         ctx.fail(std::string("CastLike from ") + dtype_name(x.dtype) + " to " + dtype_name(to) +
                                  " is not supported");
                       return {{to, x.shape}};
                     },
                     cast_grad,
                     {0},
                     {},
                     "element type conversion to the type of a second input"});
CBT_REGISTER_SCHEMA(
    {"",
     "Clip",
     infer_clip,
     [](GradContext& c) -> std::vector<std::string> {
       if (c.dY[0].empty() || !c.wants[0]) return {""};
       return {c.g.emit1("ClipGrad", {c.dY[0], c.node.inputs[0], c.node.input(1), c.node.input(2)}, c.node.attrs)};
     },
     {0},
     {},
     "clamp to [min, max] (attributes before opset 11, inputs after)"});

// ReduceSumTo's optional attribute scale multiplies the sum (Mean's gradient).
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ReduceSumTo",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& dy = ctx.input(0);
                       if (!ctx.node.attrs.has("shape")) ctx.fail("attribute 'shape' is required");
                       Shape to = ctx.node.attrs.get_ints("shape");
                       if (!is_arith(dy.dtype)) ctx.fail("unsupported type");
                       if (to.size() > dy.shape.size() || broadcast_or_fail(ctx, to, dy.shape) != dy.shape)
                         ctx.fail("shape " + shape_str(to) + " does not broadcast to " + shape_str(dy.shape));
                       return {{dy.dtype, to}};
                     },
                     {},
                     {},
                     {},
                     "sums a broadcast tensor back to attribute 'shape'"});
CBT_REGISTER_SCHEMA({kCbtDomain, "DivGrad", infer_pair_grad, {}, {}, {}, "(dY, A, B) -> (dA, dB) of A / B"});
CBT_REGISTER_SCHEMA({kCbtDomain, "PowGrad", infer_pair_grad, {}, {}, {}, "(dY, A, B) -> (dA, dB) of A ^ B"});
CBT_REGISTER_SCHEMA({kCbtDomain, "MaxGrad", infer_pair_grad, {}, {}, {}, "(dY, A, B) -> (dA, dB) of Max(A, B)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "MinGrad", infer_pair_grad, {}, {}, {}, "(dY, A, B) -> (dA, dB) of Min(A, B)"});
CBT_REGISTER_SCHEMA(
    {kCbtDomain, "PReluGrad", infer_pair_grad, {}, {}, {}, "(dY, X, slope) -> (dX, dslope) of PRelu(X, slope)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "SqrtGrad", infer_unary_grad, {}, {}, {}, "(dY, Y) -> dY / (2 Y)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "ErfGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY * 2/sqrt(pi) * exp(-X^2)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "ExpGrad", infer_unary_grad, {}, {}, {}, "(dY, Y) -> dY Y"});
CBT_REGISTER_SCHEMA({kCbtDomain, "LogGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY / X"});
CBT_REGISTER_SCHEMA({kCbtDomain, "AbsGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY sign(X)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "ReciprocalGrad", infer_unary_grad, {}, {}, {}, "(dY, Y) -> -dY Y^2"});
CBT_REGISTER_SCHEMA({kCbtDomain, "SinGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY cos(X)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "CosGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> -dY sin(X)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "TanGrad", infer_unary_grad, {}, {}, {}, "(dY, Y) -> dY (1 + Y^2)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "AsinGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY / sqrt(1 - X^2)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "AcosGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> -dY / sqrt(1 - X^2)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "AtanGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY / (1 + X^2)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "SinhGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY cosh(X)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "CoshGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY sinh(X)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "AsinhGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY / sqrt(X^2 + 1)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "AcoshGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY / sqrt(X^2 - 1)"});
CBT_REGISTER_SCHEMA({kCbtDomain, "AtanhGrad", infer_unary_grad, {}, {}, {}, "(dY, X) -> dY / (1 - X^2)"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ClipGrad",
                     [](const InferContext& ctx) -> std::vector<ValueType> {
                       const ValueType& dy = float_input(ctx, 0);
                       if (ctx.input(1) != dy) ctx.fail("dY and X differ in type or shape");
                       return {dy};
                     },
                     {},
                     {},
                     {},
                     "(dY, X, [min], [max]) -> dY where min < X < max"});

}  // namespace cbt
