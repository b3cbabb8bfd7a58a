// Schemas of the index ops with kernels of their own: ScatterElements (and Scatter, its name
// before opset 11: data with updates written, or combined by a reduction, at indices along an
// axis), GatherND (slices of data at k-tuples of indices, after batch_dims) and ScatterND
// (slices written or combined at k-tuples), and of their backward ops (ops/scatter_elements.h's,
// ops/scatter_nd.h's and ops/scatter_reduction.h's rules).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_schema.h"
#include "graph/ops/scatter_reductions.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

constexpr int64_t kMaxRank = 8;  // ops/scatter_elements.h's kScatterMaxRank, ops/scatter_nd.h's kNdMaxRank

// A scatter's reduction (graph/ops/scatter_reductions.h), from the opset that brought it.
void check_reduction(const InferContext& ctx) {
  const std::string r = ctx.node.attrs.get_string("reduction", "none");
  ScatterReduction kind = ScatterReduction::None;
  int64_t since = 0;
  if (!parse_scatter_reduction(r, kind, &since))
    ctx.fail("reduction '" + r + "' is not one of none, add, mul, max and min");
  if (ctx.opset < since)
    ctx.fail("reduction '" + r + "' exists from opset " + std::to_string(since) + " on (the model's is " +
             std::to_string(ctx.opset) + ")");
}

// Whether a scatter's backward reads a tally (mul, max, min) or only dY (none, add).
bool reduction_needs_tally(const Node& node) { return needs_tally(scatter_reduction_of(node)); }

// A scatter's gradients, backward nodes for whichever is wanted of dData and dUpdates. None
// and add: one `op` (dY, indices; `a` and the reduction): dY, 0 where "none" overwrote, and dY
// gathered where the updates went. Mul, max and min: `tally_op` (data, indices, updates) first,
// then `op` (dY, indices, data, updates, tally) (ops/scatter_reduction.h).
std::vector<std::string> scatter_grad(GradContext& c, const char* op, const char* tally_op, Attributes a) {
  std::vector<std::string> dx(c.node.inputs.size());
  if (c.dY.empty() || c.dY[0].empty() || !(c.wants[0] || c.wants[2])) return dx;
  a.set("reduction", c.node.attrs.get_string("reduction", "none"));
  std::vector<std::string> in{c.dY[0], c.node.inputs[1]};
  if (reduction_needs_tally(c.node)) {
    const auto& n = c.node.inputs;
    std::string tally = c.g.emit1(tally_op, {n[0], n[1], n[2]}, a, "scatter_tally");
    in.insert(in.end(), {n[0], n[2], tally});
  }
  auto outs = c.g.emit(op, kCbtDomain, std::move(in), 2, std::move(a), "d_scatter");
  if (c.wants[0]) dx[0] = outs[0];
  if (c.wants[2]) dx[2] = outs[1];
  return dx;
}

// data, indices, updates -> tally (2, data's elements) of data's type.
std::vector<ValueType> infer_scatter_tally(const InferContext& ctx) {
  const ValueType& data = ctx.input(0);
  return {{data.dtype, {2, shape_numel(data.shape)}}};
}

// dY, indices[, data, updates, tally]: the backward's inputs of mul, max and min (the
// forward's, so their shapes were checked there) must be there.
void check_grad_inputs(const InferContext& ctx) {
  if (!reduction_needs_tally(ctx.node)) return;
  if (!ctx.has(2) || !ctx.has(3) || !ctx.has(4)) ctx.fail("mul, max and min need data, updates and the tally");
  if (ctx.input(4).shape != Shape{2, shape_numel(ctx.input(0).shape)})
    ctx.fail("tally " + shape_str(ctx.input(4).shape) + " does not match dY " + shape_str(ctx.input(0).shape));
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
  check_reduction(ctx);
  return {data};
}

std::vector<std::string> scatter_elements_grad(GradContext& c) {
  Attributes a;
  a.set("axis", c.node.attrs.get_int("axis", 0));
  return scatter_grad(c, "ScatterElementsGrad", "ScatterElementsTally", std::move(a));
}

// dY, indices[, data, updates, tally] -> dData (dY's type and shape), dUpdates (indices' shape).
std::vector<ValueType> infer_scatter_elements_grad(const InferContext& ctx) {
  check_grad_inputs(ctx);
  return {ctx.input(0), {ctx.input(0).dtype, ctx.input(1).shape}};
}

const char* const kScatterElementsSummary =
    "data with updates written (or combined: reduction add, mul, max, min) at indices along an axis (in order "
    "along each line; indices out of range skipped)";

// Checks data and indices (..., k) with `b` batch dims; returns k.
int64_t check_nd(const InferContext& ctx, const ValueType& data, const ValueType& indices, int64_t b) {
  if (!is_arith(data.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(data.dtype));
  if (indices.dtype != DType::Int64) ctx.fail("indices must be int64");
  const auto r = static_cast<int64_t>(data.shape.size()), q = static_cast<int64_t>(indices.shape.size());
  if (r == 0 || r > kMaxRank) ctx.fail("data must have rank 1 to 8, got " + shape_str(data.shape));
  if (q == 0) ctx.fail("indices must have rank 1 or more");
  if (b < 0 || b >= std::min(r, q)) ctx.fail("batch_dims " + std::to_string(b) + " out of range");
  for (int64_t d = 0; d < b; ++d)
    if (indices.shape[d] != data.shape[d])
      ctx.fail("indices " + shape_str(indices.shape) + " and data " + shape_str(data.shape) +
               " differ in the batch dims");
  const int64_t k = indices.shape.back();
  if (k < 1 || b + k > r)
    ctx.fail("indices' last dim " + std::to_string(k) + " must be in [1, " + std::to_string(r - b) + "] for data " +
             shape_str(data.shape));
  return k;
}

// The slices' shape: indices (..., k) -> indices' dims but the last, then data's after b + k.
Shape nd_slices(const Shape& data, const Shape& indices, int64_t b, int64_t k) {
  Shape s(indices.begin(), indices.end() - 1);
  s.insert(s.end(), data.begin() + b + k, data.end());
  return s;
}

// data, indices -> Y (batch_dims).
std::vector<ValueType> infer_gather_nd(const InferContext& ctx) {
  const ValueType &data = ctx.input(0), &indices = ctx.input(1);
  const int64_t b = ctx.node.attrs.get_int("batch_dims", 0), k = check_nd(ctx, data, indices, b);
  return {{data.dtype, nd_slices(data.shape, indices.shape, b, k)}};
}

// dData = GatherNDGrad(dY, indices, data): dY added where the slices came from.
std::vector<std::string> gather_nd_grad(GradContext& c) {
  std::vector<std::string> dx(c.node.inputs.size());
  if (c.dY.empty() || c.dY[0].empty() || !c.wants[0]) return dx;
  Attributes a;
  a.set("batch_dims", c.node.attrs.get_int("batch_dims", 0));
  dx[0] = c.g.emit1("GatherNDGrad", {c.dY[0], c.node.inputs[1], c.node.inputs[0]}, a, "d_gather_nd");
  return dx;
}

// dY, indices, data -> dData (data's type).
std::vector<ValueType> infer_gather_nd_grad(const InferContext& ctx) { return {ctx.input(2)}; }

// data, indices, updates -> Y (data's type).
std::vector<ValueType> infer_scatter_nd(const InferContext& ctx) {
  const ValueType &data = ctx.input(0), &indices = ctx.input(1), &updates = ctx.input(2);
  const int64_t k = check_nd(ctx, data, indices, 0);
  if (updates.dtype != data.dtype) ctx.fail("updates must have data's type");
  const Shape want = nd_slices(data.shape, indices.shape, 0, k);
  if (updates.shape != want) ctx.fail("updates " + shape_str(updates.shape) + " must have shape " + shape_str(want));
  check_reduction(ctx);
  return {data};
}

std::vector<std::string> scatter_nd_grad(GradContext& c) {
  return scatter_grad(c, "ScatterNDGrad", "ScatterNDTally", {});
}

// dY, indices[, data, updates, tally] -> dData (dY's type and shape), dUpdates (the slices'
// shape).
std::vector<ValueType> infer_scatter_nd_grad(const InferContext& ctx) {
  check_grad_inputs(ctx);
  const ValueType &dy = ctx.input(0), &indices = ctx.input(1);
  return {dy, {dy.dtype, nd_slices(dy.shape, indices.shape, 0, indices.shape.back())}};
}

}  // namespace

CBT_REGISTER_SCHEMA(
    {"", "ScatterElements", infer_scatter_elements, scatter_elements_grad, {0, 2}, {}, kScatterElementsSummary, {}});
CBT_REGISTER_SCHEMA({"",
                     "Scatter",
                     infer_scatter_elements,
                     scatter_elements_grad,
                     {0, 2},
                     {},
                     "ScatterElements' name before opset 11: data with updates written at indices along an axis (in "
                     "order along each line; indices out of range skipped)",
                     {}});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ScatterElementsGrad",
                     infer_scatter_elements_grad,
                     {},
                     {},
                     {},
                     "(dY, indices[, data, updates, tally]) -> dData, dUpdates",
                     {}});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ScatterElementsTally",
                     infer_scatter_tally,
                     {},
                     {},
                     {},
                     "(data, indices, updates) -> tally of mul, max or min for the backward",
                     {}});

CBT_REGISTER_SCHEMA({"",
                     "GatherND",
                     infer_gather_nd,
                     gather_nd_grad,
                     {0},
                     {},
                     "slices of data at k-tuples of indices (batch_dims; a tuple out of range reads zeros)",
                     {}});
CBT_REGISTER_SCHEMA({kCbtDomain, "GatherNDGrad", infer_gather_nd_grad, {}, {}, {}, "(dY, indices, data) -> dData", {}});
CBT_REGISTER_SCHEMA({"",
                     "ScatterND",
                     infer_scatter_nd,
                     scatter_nd_grad,
                     {0, 2},
                     {},
                     "data with slices written (or combined: reduction add, mul, max, min) at k-tuples of "
                     "indices (a tuple out of range skipped)",
                     {}});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ScatterNDGrad",
                     infer_scatter_nd_grad,
                     {},
                     {},
                     {},
                     "(dY, indices[, data, updates, tally]) -> dData, dUpdates",
                     {}});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ScatterNDTally",
                     infer_scatter_tally,
                     {},
                     {},
                     {},
                     "(data, indices, updates) -> tally of mul, max or min for the backward",
                     {}});

}  // namespace cbt
