// Resize (opset 11+: X, roi, scales, sizes; nearest and linear; Upsample and opset-10 Resize are
// rewritten into it at load, graph/legacy_ops.h) and its backward op ResizeGrad.
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/ops/resize_params.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

// The values of the scales (input 2) and sizes (input 3); an empty scales tensor counts as
// not given (opset 11 needs the input to name sizes after it).
void resize_inputs(const InferContext& ctx, std::vector<float>& scales, std::vector<int64_t>& sizes) {
  if (ctx.has(2)) {
    const Tensor& s = ctx.const_value(2);
    if (s.dtype() != DType::Float32 || s.rank() != 1) ctx.fail("scales must be a 1-D float32 tensor");
    scales.assign(s.ptr<float>(), s.ptr<float>() + s.numel());
  }
  if (ctx.has(3)) {
    const Tensor& s = ctx.const_value(3);
    if (s.dtype() != DType::Int64 || s.rank() != 1) ctx.fail("sizes must be a 1-D int64 tensor");
    sizes = s.to_i64_vector();
  }
}

// X's shape `in` resized as the node says; fails naming the problem.
Shape resized_shape(const InferContext& ctx, const Shape& in) {
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  resize_inputs(ctx, scales, sizes);
  try {
    ResizeMode m = parse_resize_mode(ctx.node.attrs);
    ResizeTarget t = resize_target(in, scales, sizes, ctx.node.attrs.get_ints("axes"));
    resize_geom(in, t, m);
    return t.out;
  } catch (const ModelError& e) {
    ctx.fail(e.what());
  }
}

std::vector<ValueType> infer_resize(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_floating(x.dtype)) ctx.fail(std::string("X must be a float tensor, got ") + dtype_name(x.dtype));
  return {{x.dtype, resized_shape(ctx, x.shape)}};
}

// ResizeGrad (dY, roi, scales, sizes) -> dX of attribute 'shape' (X's), Resize's attributes.
std::vector<ValueType> infer_resize_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  if (!is_floating(dy.dtype)) ctx.fail("dY must be a float tensor");
  if (!ctx.node.attrs.has("shape")) ctx.fail("attribute 'shape' is required");
  const Shape shape = ctx.node.attrs.get_ints("shape");
  if (resized_shape(ctx, shape) != dy.shape)
    ctx.fail("dY " + shape_str(dy.shape) + " is not X " + shape_str(shape) + " resized");
  return {{dy.dtype, shape}};
}

std::vector<std::string> resize_grad(GradContext& c) {
  std::vector<std::string> d(c.node.inputs.size(), "");
  if (c.dY.empty() || c.dY[0].empty() || !c.wants[0]) return d;
  Attributes a = c.node.attrs;
  a.set("shape", c.g.type(c.node.inputs[0]).shape);
  d[0] = c.g.emit1("ResizeGrad", {c.dY[0], c.node.input(1), c.node.input(2), c.node.input(3)}, a, "d_resize");
  return d;
}

}  // namespace

CBT_REGISTER_SCHEMA({"",
                     "Resize",
                     infer_resize,
                     resize_grad,
                     {0},
                     {},
                     "resample the last three axes: nearest or linear, constant scales or sizes "
                     "(Upsample and opset-10 Resize too)",
                     {1, 2, 3}});
CBT_REGISTER_SCHEMA({kCbtDomain,
                     "ResizeGrad",
                     infer_resize_grad,
                     {},
                     {},
                     {},
                     "(dY, roi, scales, sizes) -> dX: each input element gathers its readers' dY",
                     {1, 2, 3}});

}  // namespace cbt
