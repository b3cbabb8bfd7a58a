// Schemas of ScatterElements (and Scatter, its name before opset 11): data with updates written,
// or added (reduction "add", opset 16), at indices along an axis; and of ScatterElementsGrad,
// their backward (ops/scatter_elements.h's rule).
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

constexpr int64_t kMaxRank = 8;  // ops/scatter_elements.h's kScatterMaxRank

// "none" or "add"; mul, max and min are refused.
std::string reduction_of(const InferContext& ctx) {
  const std::string r = ctx.node.attrs.get_string("reduction", "none");
  if (r != "none" && r != "add") ctx.fail("reduction '" + r + "' is not supported (none and add are)");
  return r;
}

// data, indices, updates -> Y (data's type).
std::vector<ValueType> infer_scatter_elements(const InferContext& ctx) {
  const ValueType &data = ctx.input(0), &indices = ctx.input(1), &updates = ctx.input(2);
  if (!is_arith(data.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(data.dtype));
  if (updates.dtype != data.dtype) ctx.fail("updates must have data's type");
  if (indices.dtype != DType::Int64 && indices.dtype != DType::Int32) ctx.fail("indices must be int64 or int32");
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0 || rank > kMaxRank) ctx.fail("data must have rank 1 to 8, got " + shape_str(data.shape));
  if (indices.shape != updates.shape)
    ctx.fail("indices " + shape_str(indices.shape) + " and updates " + shape_str(updates.shape) +
             " must have one shape");
  if (static_cast<int64_t>(updates.shape.size()) != rank)
    ctx.fail("updates " + shape_str(updates.shape) + " must have data's rank " + std::to_string(rank));
  const int64_t axis = ctx.node.attrs.get_int("axis", 0);
  if (axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " out of range for " + shape_str(data.shape));
  const int64_t a = normalize_axis(axis, rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != a && updates.shape[d] > data.shape[d])
      ctx.fail("updates " + shape_str(updates.shape) + " exceed data " + shape_str(data.shape) + " along axis " +
               std::to_string(d));
  reduction_of(ctx);
  return {data};
}

// dData (dY, but 0 where "none" overwrote), dUpdates (dY gathered at the indices): one
// ScatterElementsGrad for whichever is wanted.
std::vector<std::string> scatter_elements_grad(GradContext& c) {
  std::vector<std::string> dx(c.node.inputs.size());
  if (c.dY.empty() || c.dY[0].empty() || !(c.wants[0] || c.wants[2])) return dx;
  Attributes a;
  a.set("axis", c.node.attrs.get_int("axis", 0));
  a.set("reduction", c.node.attrs.get_string("reduction", "none"));
  auto outs = c.g.emit("ScatterElementsGrad", kCbtDomain, {c.dY[0], c.node.inputs[1]}, 2, a, "d_scatter");
  if (c.wants[0]) dx[0] = outs[0];
  if (c.wants[2]) dx[2] = outs[1];
  return dx;
}

// dY, indices -> dData (dY's type and shape), dUpdates (indices' shape).
std::vector<ValueType> infer_scatter_elements_grad(const InferContext& ctx) {
  return {ctx.input(0), {ctx.input(0).dtype, ctx.input(1).shape}};
}

const char* const kSummary =
    "data with updates written (or added: reduction add) at indices along an axis (in order along "
    "each line; indices out of range skipped)";

}  // namespace

CBT_REGISTER_SCHEMA({"", "ScatterElements", infer_scatter_elements, scatter_elements_grad, {0, 2}, {}, kSummary, {}});
CBT_REGISTER_SCHEMA({"", "Scatter", infer_scatter_elements, scatter_elements_grad, {0, 2}, {}, kSummary, {}});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ScatterElementsGrad",
                     infer_scatter_elements_grad,
                     {},
                     {},
                     {},
                     "(dY, indices) -> dData, dUpdates",
                     {}});

}  // namespace cbt
