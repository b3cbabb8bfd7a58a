// Schemas of ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd (axes as attribute or input
// by opset) and their grads, and of ArgMax and ArgMin.
#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// First opset in which the op takes its axes as input 1 instead of an attribute.
int64_t axes_input_since(const std::string& op) { return (op == "ReduceSum" || op == "ReduceSumGrad") ? 13 : 18; }

// Which dims of X (shape `in`) are reduced, from the axes attribute or input by opset.
std::vector<bool> reduced_dims(const InferContext& ctx, const Shape& in) {
  const Attributes& at = ctx.node.attrs;
  int64_t since = axes_input_since(ctx.node.op_type);
  std::vector<int64_t> axes;
  if (ctx.opset >= since) {
    if (at.has("axes")) ctx.fail("axes is an input since opset " + std::to_string(since));
    if (ctx.has(1)) {
      const Tensor& t = ctx.const_value(1);
      if (t.dtype() != DType::Int64 || t.rank() > 1) ctx.fail("axes must be a 1-D int64 tensor");
      axes = t.to_i64_vector();
    }
  } else {
    if (ctx.has(1)) ctx.fail("axes is an attribute before opset " + std::to_string(since));
    axes = at.get_ints("axes");
  }
  bool noop = axes.empty() && at.get_int("noop_with_empty_axes", 0);
  std::vector<bool> reduced(in.size(), axes.empty() && !noop);
  try {
    for (int64_t a : normalize_axes(axes, static_cast<int64_t>(in.size()))) reduced[a] = true;
  } catch (const ModelError& e) {
    ctx.fail(e.what());
  }
  return reduced;
}

std::vector<ValueType> infer_reduce(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const bool mean = ctx.node.op_type == "ReduceMean";
  bool ok = x.dtype == DType::Float32 || x.dtype == DType::Float64 ||
            (!mean && (x.dtype == DType::Int64 || x.dtype == DType::Int32));
  if (!ok) ctx.fail(std::string("unsupported type ") + dtype_name(x.dtype));
  std::vector<bool> reduced = reduced_dims(ctx, x.shape);
  bool keep = ctx.node.attrs.get_int("keepdims", 1) != 0;
  Shape out;
  for (size_t i = 0; i < x.shape.size(); ++i)
    if (!reduced[i])
      out.push_back(x.shape[i]);
    else if (keep)
      out.push_back(1);
  return {{x.dtype, out}};
}

// (dY, [axes]) -> dX of attribute 'shape'; same attributes as the forward op.
std::vector<ValueType> infer_reduce_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  if (dy.dtype != DType::Float32 && dy.dtype != DType::Float64) ctx.fail("dY must be float");
  if (!ctx.node.attrs.has("shape")) ctx.fail("attribute 'shape' is required");
  Shape shape = ctx.node.attrs.get_ints("shape");
  std::vector<bool> reduced = reduced_dims(ctx, shape);
  int64_t kept = 1;
  for (size_t i = 0; i < shape.size(); ++i) kept *= reduced[i] ? 1 : shape[i];
  if (kept != shape_numel(dy.shape))
    ctx.fail("dY " + shape_str(dy.shape) + " does not match the reduction of " + shape_str(shape));
  return {{dy.dtype, shape}};
}

// ReduceMax/ReduceMin's backward op: (dY, [axes], X, Y) -> dX: dY to the elements equal to
// their Y, shared evenly among ties (as torch.amax).
std::vector<ValueType> infer_extreme_grad(const InferContext& ctx) {
  std::vector<ValueType> dx = infer_reduce_grad(ctx);
  const ValueType &x = ctx.input(2), &y = ctx.input(3);
  if (x.dtype != dx[0].dtype || x.shape != dx[0].shape) ctx.fail("X must have dX's type and shape");
  if (y != ctx.input(0)) ctx.fail("Y must have dY's type and shape");
  return dx;
}

GradFn extreme_grad(const char* op) {
  return [op](GradContext& c) -> std::vector<std::string> {
    if (c.dY[0].empty() || !c.wants[0]) return {"", ""};
    Attributes a = c.node.attrs;
    a.set("shape", c.g.type(c.node.inputs[0]).shape);
    return {c.g.emit1(op, {c.dY[0], c.node.input(1), c.node.inputs[0], c.node.outputs[0]}, a), ""};
  };
}

GradFn reduce_grad(const char* op) {
  return [op](GradContext& c) -> std::vector<std::string> {
    if (c.dY[0].empty() || !c.wants[0]) return {"", ""};
    Attributes a = c.node.attrs;
    a.set("shape", c.g.type(c.node.inputs[0]).shape);
    return {c.g.emit1(op, {c.dY[0], c.node.input(1)}, a), ""};
  };
}

// ArgMax/ArgMin: X -> int64 indices along `axis` (keepdims, select_last_index); no gradient.
std::vector<ValueType> infer_arg_extreme(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_arith(x.dtype)) ctx.fail(std::string("unsupported type ") + dtype_name(x.dtype));
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = ctx.node.attrs.get_int("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " out of range for " + shape_str(x.shape));
  if (axis < 0) axis += rank;
  if (x.shape[axis] == 0) ctx.fail("axis " + std::to_string(axis) + " of " + shape_str(x.shape) + " is empty");
  Shape out = x.shape;
  if (ctx.node.attrs.get_int("keepdims", 1) != 0)
    out[axis] = 1;
  else
    out.erase(out.begin() + axis);
  return {{DType::Int64, out}};
}

}  // namespace

CBT_REGISTER_SCHEMA({"",
                     "ReduceSum",
                     infer_reduce,
                     reduce_grad("ReduceSumGrad"),
                     {0},
                     {},
                     "sum over axes (keepdims, noop_with_empty_axes)"});
CBT_REGISTER_SCHEMA({"",
                     "ReduceMean",
                     infer_reduce,
                     reduce_grad("ReduceMeanGrad"),
                     {0},
                     {},
                     "mean over axes (keepdims, noop_with_empty_axes)"});
CBT_REGISTER_SCHEMA({"",
                     "ReduceMax",
                     infer_reduce,
                     extreme_grad("ReduceMaxGrad"),
                     {0},
                     {},
                     "max over axes (keepdims, noop_with_empty_axes; ties share the gradient)"});
CBT_REGISTER_SCHEMA({"",
                     "ReduceMin",
                     infer_reduce,
                     extreme_grad("ReduceMinGrad"),
                     {0},
                     {},
                     "min over axes (keepdims, noop_with_empty_axes; ties share the gradient)"});
CBT_REGISTER_SCHEMA(
    {"",
     "ReduceProd",
     infer_reduce,
     extreme_grad("ReduceProdGrad"),
     {0},
     {},
     "product over axes (keepdims, noop_with_empty_axes; the gradient exact where a group holds zeros)"});
CBT_REGISTER_SCHEMA({"",
                     "ArgMax",
                     infer_arg_extreme,
                     {},
                     {},
                     {},
                     "index of the largest along axis (keepdims, select_last_index; NaN wins)"});
CBT_REGISTER_SCHEMA({"",
                     "ArgMin",
                     infer_arg_extreme,
                     {},
                     {},
                     {},
                     "index of the smallest along axis (keepdims, select_last_index; NaN wins)"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ReduceMaxGrad",
                     infer_extreme_grad,
                     {},
                     {},
                     {},
                     "(dY, [axes], X, Y) -> dY / ties where X equals its Y, else 0"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ReduceMinGrad",
                     infer_extreme_grad,
                     {},
                     {},
                     {},
                     "(dY, [axes], X, Y) -> dY / ties where X equals its Y, else 0"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ReduceProdGrad",
                     infer_extreme_grad,
                     {},
                     {},
                     {},
                     "(dY, [axes], X, Y) -> dY times the product of the other elements of X's group"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ReduceSumGrad",
                     infer_reduce_grad,
                     {},
                     {},
                     {},
                     "(dY, [axes]) -> dY broadcast back to attribute 'shape'"});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ReduceMeanGrad",
                     infer_reduce_grad,
                     {},
                     {},
                     {},
                     "(dY, [axes]) -> dY / count broadcast back to attribute 'shape'"});

}  // namespace cbt
