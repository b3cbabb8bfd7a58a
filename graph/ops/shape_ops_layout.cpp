// Schemas of the ops that rearrange whole tensors (Transpose, Concat, Split, Expand, Tile,
// DepthToSpace, SpaceToDepth, and cbtrain's Roll) and of their cbtrain backward ops (ConcatGrad,
// SplitGrad, ExpandGrad, TileGrad).
#include <numeric>

#include "graph/op_schema.h"
#include "graph/ops/shape_ops_params.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// Concat and SplitGrad are variadic; the schema lists input positions explicitly.
std::vector<int> variadic_inputs() { return input_positions(256); }

std::vector<int64_t> transpose_perm(const Node& n, size_t rank) {
  std::vector<int64_t> perm = n.attrs.get_ints("perm");
  if (!n.attrs.has("perm")) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  CBT_MODEL_CHECK(perm.size() == rank, "perm ", shape_str(perm), " has the wrong length for rank ", rank);
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    CBT_MODEL_CHECK(p >= 0 && p < static_cast<int64_t>(rank) && !seen[p], "perm ", shape_str(perm),
                    " is not a permutation of 0..", rank - 1);
    seen[p] = true;
  }
  return perm;
}

std::vector<ValueType> infer_transpose(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  auto perm = transpose_perm(ctx.node, x.shape.size());
  Shape out;
  for (int64_t p : perm) out.push_back(x.shape[p]);
  return {{x.dtype, out}};
}

std::vector<std::string> grad_transpose(GradContext& ctx) {
  if (!ctx.wants[0] || ctx.dY[0].empty()) return {""};
  auto perm = transpose_perm(ctx.node, ctx.g.type(ctx.node.inputs[0]).shape.size());
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  Attributes a;
  a.set("perm", inverse);
  return {ctx.g.emit("Transpose", "", {ctx.dY[0]}, 1, std::move(a), "dX")[0]};
}

std::vector<ValueType> infer_roll(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  roll_dims(x.shape, ctx.node.attrs.get_ints("axes"), ctx.node.attrs.get_ints("shifts"));  // checks them
  return {x};
}

// Rolled back: the same axes, the shifts negated.
std::vector<std::string> grad_roll(GradContext& ctx) {
  if (!ctx.wants[0] || ctx.dY[0].empty()) return {""};
  std::vector<int64_t> back = ctx.node.attrs.get_ints("shifts");
  for (int64_t& s : back) s = -s;
  Attributes a;
  a.set("axes", ctx.node.attrs.get_ints("axes"));
  a.set("shifts", back);
  return {ctx.g.emit("Roll", kCbtDomain, {ctx.dY[0]}, 1, std::move(a), "dX")[0]};
}

std::vector<ValueType> infer_concat(const InferContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.fail("Concat needs at least one input");
  const ValueType& first = ctx.input(0);
  if (!ctx.node.attrs.has("axis")) ctx.fail("Concat needs an axis attribute");
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), first.shape.size());
  if (first.shape.empty()) ctx.fail("Concat of scalars");
  Shape out = first.shape;
  out[axis] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueType& t = ctx.input(i);
    if (t.dtype != first.dtype)
      ctx.fail(std::string("input dtypes differ: ") + dtype_name(t.dtype) + " vs " + dtype_name(first.dtype));
    bool same = t.shape.size() == first.shape.size();
    for (size_t d = 0; same && d < t.shape.size(); ++d)
      same = static_cast<int64_t>(d) == axis || t.shape[d] == first.shape[d];
    if (!same)
      ctx.fail("input " + std::to_string(i) + " has shape " + shape_str(t.shape) + ", incompatible with " +
               shape_str(first.shape) + " on axis " + std::to_string(axis));
    out[axis] += t.shape[axis];
  }
  return {{first.dtype, out}};
}

std::vector<std::string> grad_concat(GradContext& ctx) {
  size_t n = ctx.node.inputs.size();
  std::vector<std::string> dX(n);
  if (ctx.dY[0].empty()) return dX;
  const Shape& first = ctx.g.type(ctx.node.inputs[0]).shape;
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), first.size());
  std::vector<int64_t> sizes;
  for (const auto& in : ctx.node.inputs) sizes.push_back(ctx.g.type(in).shape[axis]);
  Attributes a;
  a.set("axis", axis);
  a.set("split", sizes);
  auto parts = ctx.g.emit("ConcatGrad", kCbtDomain, {ctx.dY[0]}, n, std::move(a), "dX");
  for (size_t i = 0; i < n; ++i)
    if (ctx.wants[i]) dX[i] = parts[i];
  return dX;
}

// Output types of a split of `x` into pieces of `sizes` along `axis`.
std::vector<ValueType> split_types(const ValueType& x, int64_t axis, const std::vector<int64_t>& sizes) {
  std::vector<ValueType> out;
  for (int64_t s : sizes) {
    ValueType t = x;
    t.shape[axis] = s;
    out.push_back(t);
  }
  return out;
}

std::vector<ValueType> infer_split(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), x.shape.size());
  size_t n = ctx.node.outputs.size();
  bool explicit_split = ctx.has(1) || ctx.node.attrs.has("split");
  bool has_num = ctx.node.attrs.has("num_outputs");
  if (has_num && ctx.opset < 18) ctx.fail("num_outputs exists from opset 18 on");
  if (has_num && explicit_split) ctx.fail("give either the split input or num_outputs, not both");
  if (has_num && ctx.node.attrs.get_int("num_outputs", 0) != static_cast<int64_t>(n))
    ctx.fail("num_outputs " + std::to_string(ctx.node.attrs.get_int("num_outputs", 0)) + " differs from the node's " +
             std::to_string(n) + " outputs");
  if (!explicit_split && ctx.opset >= 18 && !has_num)
    ctx.fail("from opset 18 on, Split needs the split input or num_outputs");
  if (!explicit_split && ctx.opset < 18 && x.shape[axis] % static_cast<int64_t>(n) != 0)
    ctx.fail("axis of size " + std::to_string(x.shape[axis]) + " does not split evenly into " + std::to_string(n) +
             " outputs");
  return split_types(x, axis, node_split_sizes(ctx.node, x.shape, const_inputs(ctx, {1})));
}

std::vector<std::string> grad_split(GradContext& ctx) {
  if (!ctx.wants[0]) return std::vector<std::string>(ctx.node.inputs.size());
  bool any = false;
  for (const auto& d : ctx.dY) any = any || !d.empty();
  if (!any) return std::vector<std::string>(ctx.node.inputs.size());
  const Shape& shape = ctx.g.type(ctx.node.inputs[0]).shape;
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), shape.size());
  std::vector<int64_t> sizes;
  for (const auto& out : ctx.node.outputs) sizes.push_back(ctx.g.type(out).shape[axis]);
  Attributes a;
  a.set("axis", axis);
  a.set("split", sizes);
  a.set("shape", shape);
  std::vector<std::string> dX(ctx.node.inputs.size());
  dX[0] = ctx.g.emit1("SplitGrad", ctx.dY, std::move(a), "dX");
  return dX;
}

std::vector<ValueType> infer_concat_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), dy.shape.size());
  auto sizes = ctx.node.attrs.get_ints("split");
  if (sizes.size() != ctx.node.outputs.size()) ctx.fail("split length differs from outputs");
  split_sizes(dy.shape[axis], sizes.size(), sizes);
  return split_types(dy, axis, sizes);
}

// dX of a Split: the dY pieces side by side; a piece without gradient contributes zeros.
std::vector<ValueType> infer_split_grad(const InferContext& ctx) {
  Shape shape = ctx.node.attrs.get_ints("shape");
  int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), shape.size());
  auto sizes = ctx.node.attrs.get_ints("split");
  if (sizes.size() != ctx.num_inputs()) ctx.fail("split length differs from inputs");
  split_sizes(shape[axis], sizes.size(), sizes);
  DType dtype = DType::Undefined;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has(i)) continue;
    Shape want = shape;
    want[axis] = sizes[i];
    if (ctx.in[i].shape != want)
      ctx.fail("dY " + std::to_string(i) + " has shape " + shape_str(ctx.in[i].shape) + ", expected " +
               shape_str(want));
    dtype = ctx.in[i].dtype;
  }
  if (dtype == DType::Undefined) ctx.fail("SplitGrad needs at least one dY");
  return {{dtype, shape}};
}

std::vector<ValueType> infer_expand(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const Tensor& shape = ctx.const_value(1);
  if (shape.rank() != 1) ctx.fail("shape input must be 1-D, got " + shape_str(shape.shape()));
  return {{x.dtype, broadcast_shapes(x.shape, shape.to_i64_vector())}};
}

std::vector<std::string> grad_expand(GradContext& ctx) {
  std::vector<std::string> dX(ctx.node.inputs.size());
  if (!ctx.wants[0] || ctx.dY[0].empty()) return dX;
  Attributes a;
  a.set("shape", ctx.g.type(ctx.node.inputs[0]).shape);
  dX[0] = ctx.g.emit1("ExpandGrad", {ctx.dY[0]}, std::move(a), "dX");
  return dX;
}

// Sums dY over the axes along which the forward input was broadcast.
std::vector<ValueType> infer_expand_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  Shape shape = ctx.node.attrs.get_ints("shape");
  if (shape.size() > dy.shape.size() || broadcast_shapes(shape, dy.shape) != dy.shape)
    ctx.fail("shape " + shape_str(shape) + " does not broadcast to dY " + shape_str(dy.shape));
  return {{dy.dtype, shape}};
}

// Tile: repeats, a constant 1-D int64 input with one count (>= 0) per axis of X.
std::vector<ValueType> infer_tile(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const Tensor& r = ctx.const_value(1);
  if (r.dtype() != DType::Int64 || r.rank() != 1 || r.numel() != static_cast<int64_t>(x.shape.size()))
    ctx.fail("repeats must be a 1-D int64 tensor with one count per axis of the input (" +
             std::to_string(x.shape.size()) + ")");
  Shape out = x.shape;
  const std::vector<int64_t> repeats = r.to_i64_vector();
  for (size_t i = 0; i < out.size(); ++i) {
    if (repeats[i] < 0) ctx.fail("repeats must be 0 or more, got " + std::to_string(repeats[i]));
    if (__builtin_mul_overflow(out[i], repeats[i], &out[i]))
      ctx.fail("axis " + std::to_string(i) + " repeated " + std::to_string(repeats[i]) + " times overflows");
  }
  return {{x.dtype, out}};
}

std::vector<std::string> grad_tile(GradContext& ctx) {
  std::vector<std::string> dX(ctx.node.inputs.size());
  if (!ctx.wants[0] || ctx.dY[0].empty()) return dX;
  Attributes a;
  a.set("shape", ctx.g.type(ctx.node.inputs[0]).shape);
  dX[0] = ctx.g.emit1("TileGrad", {ctx.dY[0]}, std::move(a), "dX");
  return dX;
}

// dY (X's shape times the repeats) summed over the copies into X's shape.
std::vector<ValueType> infer_tile_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  Shape shape = ctx.node.attrs.get_ints("shape");
  bool ok = shape.size() == dy.shape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] == 0 ? dy.shape[i] == 0 : dy.shape[i] % shape[i] == 0;
  if (!ok) ctx.fail("dY " + shape_str(dy.shape) + " is not a tiling of " + shape_str(shape));
  return {{dy.dtype, shape}};
}

// DepthToSpace (blocksize, mode DCR or CRD) and SpaceToDepth (blocksize; mode CRD only as the
// gradient of DepthToSpace's CRD) on X (N, C, H, W); each one's gradient is the other.
bool crd_mode(const InferContext& ctx) {
  const std::string mode = ctx.node.attrs.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ctx.fail("mode must be DCR or CRD, got '" + mode + "'");
  return mode == "CRD";
}

std::vector<ValueType> infer_depth_space(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (x.shape.size() != 4) ctx.fail("input must be (N, C, H, W), got " + shape_str(x.shape));
  const int64_t b = ctx.node.attrs.get_int("blocksize", 0);
  if (b <= 0) ctx.fail("blocksize must be a positive integer");
  crd_mode(ctx);
  Shape out = x.shape;
  if (ctx.node.op_type == "DepthToSpace") {
    if (x.shape[1] % (b * b) != 0)
      ctx.fail("the " + std::to_string(x.shape[1]) + " channels do not divide into blocks of " + std::to_string(b) +
               "x" + std::to_string(b));
    out = {x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b};
  } else {
    if (x.shape[2] % b != 0 || x.shape[3] % b != 0)
      ctx.fail("height and width " + shape_str({x.shape[2], x.shape[3]}) + " are not multiples of blocksize " +
               std::to_string(b));
    out = {x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b};
  }
  return {{x.dtype, out}};
}

GradFn depth_space_grad(const char* inverse) {
  return [inverse](GradContext& ctx) -> std::vector<std::string> {
    if (!ctx.wants[0] || ctx.dY[0].empty()) return {""};
    Attributes a;
    a.set("blocksize", ctx.node.attrs.get_int("blocksize", 1));
    a.set("mode", ctx.node.attrs.get_string("mode", "DCR"));
    return {ctx.g.emit(inverse, "", {ctx.dY[0]}, 1, std::move(a), "dX")[0]};
  };
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{"",
                             "DepthToSpace",
                             naming_node(infer_depth_space),
                             depth_space_grad("SpaceToDepth"),
                             {0},
                             {},
                             "Move channel blocks into space (blocksize, mode DCR or CRD)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "SpaceToDepth",
                             naming_node(infer_depth_space),
                             depth_space_grad("DepthToSpace"),
                             {0},
                             {},
                             "Move spatial blocks into channels (blocksize)"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Tile", naming_node(infer_tile), grad_tile, {0}, {}, "Repeat the input along each axis"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "TileGrad", naming_node(infer_tile_grad), {}, {}, {}, "Gradient of Tile: dY's copies summed"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Transpose", naming_node(infer_transpose), grad_transpose, {0}, {}, "Permute axes (default: reverse)"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Concat", naming_node(infer_concat), grad_concat, variadic_inputs(), {}, "Join tensors along an axis"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "Roll",
                             naming_node(infer_roll),
                             grad_roll,
                             {0},
                             {},
                             "Y[i] = X[(i + shift) mod n] along each of `axes` (torch.roll's Slices and Concat)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "Split",
                             naming_node(infer_split),
                             grad_split,
                             {0},
                             {},
                             "Split along an axis (split input, attribute or num_outputs)"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "Expand", naming_node(infer_expand), grad_expand, {0}, {}, "Broadcast to a constant shape"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "ConcatGrad",
                             naming_node(infer_concat_grad),
                             {},
                             {},
                             {},
                             "Gradient of Concat: dY split into the inputs' pieces"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "SplitGrad",
                             naming_node(infer_split_grad),
                             {},
                             {},
                             {},
                             "Gradient of Split: dY pieces joined, zeros where absent"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "ExpandGrad",
                             naming_node(infer_expand_grad),
                             {},
                             {},
                             {},
                             "Gradient of Expand: dY summed over broadcast axes"});

}  // namespace cbt
