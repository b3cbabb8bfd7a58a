// Schemas of the ordered comparisons (Greater, Less, GreaterOrEqual, LessOrEqual: numbers to
// bool), the logical ops (Not, And, Or, Xor: bool), with numpy broadcasting, and the float
// classes (IsNaN, IsInf: floats to bool); none has a gradient. Equal is with Where in
// shape_ops_gen.cpp.
#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

bool is_number(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int64 || t == DType::Int32 || t == DType::Int8 ||
         t == DType::UInt8;
}

Shape broadcast_or_fail(const InferContext& ctx, const Shape& a, const Shape& b) {
  try {
    return broadcast_shapes(a, b);
  } catch (const ModelError& e) {
    ctx.fail(e.what());
  }
}

std::vector<ValueType> infer_comparison(const InferContext& ctx) {
  const ValueType &a = ctx.input(0), &b = ctx.input(1);
  if (a.dtype != b.dtype)
    ctx.fail(std::string("inputs differ in type: ") + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype));
  if (!is_number(a.dtype)) ctx.fail(std::string("inputs must be numbers, got ") + dtype_name(a.dtype));
  return {{DType::Bool, broadcast_or_fail(ctx, a.shape, b.shape)}};
}

std::vector<ValueType> infer_logical(const InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.input(i).dtype != DType::Bool)
      ctx.fail("input " + std::to_string(i) + " must be bool, got " + dtype_name(ctx.input(i).dtype));
  if (ctx.num_inputs() == 1) return {ctx.input(0)};
  return {{DType::Bool, broadcast_or_fail(ctx, ctx.input(0).shape, ctx.input(1).shape)}};
}

// X (float) -> bool of X's shape.
std::vector<ValueType> infer_float_class(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
    ctx.fail(std::string("input must be float32 or float64, got ") + dtype_name(x.dtype));
  return {{DType::Bool, x.shape}};
}

}  // namespace

CBT_REGISTER_SCHEMA({"", "Greater", infer_comparison, {}, {}, {}, "A > B with broadcasting (bool)"});
CBT_REGISTER_SCHEMA({"", "Less", infer_comparison, {}, {}, {}, "A < B with broadcasting (bool)"});
CBT_REGISTER_SCHEMA({"", "GreaterOrEqual", infer_comparison, {}, {}, {}, "A >= B with broadcasting (bool)"});
CBT_REGISTER_SCHEMA({"", "LessOrEqual", infer_comparison, {}, {}, {}, "A <= B with broadcasting (bool)"});
CBT_REGISTER_SCHEMA({"", "Not", infer_logical, {}, {}, {}, "logical not (bool)"});
CBT_REGISTER_SCHEMA({"", "And", infer_logical, {}, {}, {}, "logical and with broadcasting (bool)"});
CBT_REGISTER_SCHEMA({"", "Or", infer_logical, {}, {}, {}, "logical or with broadcasting (bool)"});
CBT_REGISTER_SCHEMA({"", "Xor", infer_logical, {}, {}, {}, "logical xor with broadcasting (bool)"});
CBT_REGISTER_SCHEMA({"", "IsNaN", infer_float_class, {}, {}, {}, "whether each value is NaN (bool)"});
CBT_REGISTER_SCHEMA(
    {"", "IsInf", infer_float_class, {}, {}, {}, "whether each value is infinite (detect_negative, detect_positive)"});

}  // namespace cbt
