// Schemas of CumSum (a running sum along an axis) and Trilu (the lower or upper triangle of
// the last two axes): ops whose gradient is the op itself, CumSum's running the other way.
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// A constant int64 or int32 scalar input (CumSum's axis, Trilu's k).
int64_t scalar_input(const InferContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.const_value(i);
  if ((t.dtype() != DType::Int64 && t.dtype() != DType::Int32) || t.numel() != 1)
    ctx.fail(std::string(what) + " must be one int64 or int32 value");
  return t.dtype() == DType::Int64 ? t.ptr<int64_t>()[0] : t.ptr<int32_t>()[0];
}

// X, axis -> Y of X's type and shape (exclusive, reverse).
std::vector<ValueType> infer_cumsum(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_arith(x.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(x.dtype));
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = scalar_input(ctx, 1, "axis");
  if (rank == 0 || axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " out of range for " + shape_str(x.shape));
  return {x};
}

// dX = CumSum of dY in the other direction, with the same axis and exclusive.
std::vector<std::string> cumsum_grad(GradContext& c) {
  if (c.dY[0].empty() || !c.wants[0]) return {"", ""};
  Attributes a = c.node.attrs;
  a.set("reverse", int64_t{c.node.attrs.get_int("reverse", 0) != 0 ? 0 : 1});
  return {c.g.emit("CumSum", "", {c.dY[0], c.node.inputs[1]}, 1, a, "d_cumsum")[0], ""};
}

// X (..., N, M), k? -> Y of X's type and shape (upper).
std::vector<ValueType> infer_trilu(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_arith(x.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(x.dtype));
  if (x.shape.size() < 2) ctx.fail("input must have at least two dims, got " + shape_str(x.shape));
  if (ctx.has(1)) scalar_input(ctx, 1, "k");
  return {x};
}

// dX = dY masked as Y was: the same Trilu.
std::vector<std::string> trilu_grad(GradContext& c) {
  if (c.dY[0].empty() || !c.wants[0]) return {"", ""};
  return {c.g.emit("Trilu", "", {c.dY[0], c.node.input(1)}, 1, c.node.attrs, "d_trilu")[0], ""};
}

}  // namespace

CBT_REGISTER_SCHEMA(
    {"", "CumSum", infer_cumsum, cumsum_grad, {0}, {}, "running sum along a constant axis (exclusive, reverse)", {1}});
CBT_REGISTER_SCHEMA({"",
                     "Trilu",
                     infer_trilu,
                     trilu_grad,
                     {0},
                     {},
                     "lower or upper triangle of the last two axes (upper, constant k)",
                     {1}});

}  // namespace cbt
