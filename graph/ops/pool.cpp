// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool schemas (1-D and 2-D), backward ops,
// gradient rules.
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace cbt {
namespace {

// Output spatial size of a pooling window over X (N, C, spatial) per ONNX/PyTorch rules.
std::vector<ValueType> infer_pool(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_floating(x.dtype)) ctx.fail("input must be a float tensor");
  if (x.shape.size() != 3 && x.shape.size() != 4)
    ctx.fail("only 1-D and 2-D pooling is supported (input rank 3 or 4), got " + shape_str(x.shape));
  size_t nd = x.shape.size() - 2;
  const Attributes& at = ctx.node.attrs;
  if (!at.has("kernel_shape")) ctx.fail("kernel_shape is required");
  auto k = at.get_ints("kernel_shape");
  auto s = at.get_ints("strides", std::vector<int64_t>(nd, 1));
  auto d = at.get_ints("dilations", std::vector<int64_t>(nd, 1));
  auto p = at.get_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (k.size() != nd || s.size() != nd || d.size() != nd || p.size() != 2 * nd)
    ctx.fail("kernel_shape/strides/dilations/pads have the wrong length for " + std::to_string(nd) + " spatial dims");
  std::string ap = at.get_string("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    ctx.fail("unknown auto_pad '" + ap + "'");
  bool ceil_mode = at.get_int("ceil_mode", 0) != 0;
  Shape y{x.shape[0], x.shape[1]};
  for (size_t i = 0; i < nd; ++i) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1 || p[i] < 0 || p[nd + i] < 0)
      ctx.fail("kernel, strides and dilations must be positive and pads non-negative");
    int64_t in = x.shape[2 + i], eff = (k[i] - 1) * d[i] + 1;
    // Larger pads would give windows that see only padding.
    if (p[i] >= eff || p[nd + i] >= eff) ctx.fail("pads must be smaller than the kernel");
    int64_t out;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      out = (in + s[i] - 1) / s[i];
    } else {
      int64_t pb = ap == "VALID" ? 0 : p[i], span = in - eff + (ap == "VALID" ? 0 : pb + p[nd + i]);
      if (span < 0) ctx.fail("kernel larger than the padded input " + shape_str(x.shape));
      out = (ceil_mode ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
      // The last window must start inside the input or its left padding (PyTorch's rule).
      if (ceil_mode && (out - 1) * s[i] >= in + pb) --out;
    }
    y.push_back(out);
  }
  std::vector<ValueType> outs{{x.dtype, y}};
  if (ctx.node.op_type == "MaxPool" && ctx.node.outputs.size() > 1) outs.push_back({DType::Int64, y});
  return outs;
}

std::vector<ValueType> infer_global_pool(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!is_floating(x.dtype)) ctx.fail("input must be a float tensor");
  if (x.shape.size() < 3) ctx.fail("input must be (N, C, spatial...), got " + shape_str(x.shape));
  Shape y(x.shape.size(), 1);
  y[0] = x.shape[0], y[1] = x.shape[1];
  return {{x.dtype, y}};
}

// Pool backward ops: (dY, X) -> dX.
std::vector<ValueType> infer_pool_grad(const InferContext& ctx) {
  if (ctx.input(0).shape.size() != ctx.input(1).shape.size()) ctx.fail("dY and X must have the same rank");
  return {ctx.input(1)};
}

std::vector<std::string> pool_grad(GradContext& c) {
  const Node& n = c.node;
  if (c.dY.empty() || c.dY[0].empty() || !c.wants[0]) return {""};
  return {c.g.emit1(n.op_type + "Grad", {c.dY[0], n.inputs[0]}, n.attrs, "d_" + n.name)};
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{"",
                             "MaxPool",
                             infer_pool,
                             pool_grad,
                             {0},
                             {},
                             "1-D/2-D max pooling (pads, strides, dilations, ceil_mode, Indices)"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "AveragePool", infer_pool, pool_grad, {0}, {}, "1-D/2-D average pooling (count_include_pad, ceil_mode)"});
CBT_REGISTER_SCHEMA(OpSchema{
    "", "GlobalAveragePool", infer_global_pool, pool_grad, {0}, {}, "mean over all spatial dims"});
// Its kernels are ReduceMax's over the spatial dims (ops/*/reduce.*).
CBT_REGISTER_SCHEMA(OpSchema{
    "", "GlobalMaxPool", infer_global_pool, pool_grad, {0}, {}, "max over all spatial dims (ties share the gradient)"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "GlobalMaxPoolGrad",
                             infer_pool_grad,
                             {},
                             {},
                             {},
                             "backward of GlobalMaxPool (max recomputed): (dY, X) -> dX"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "MaxPoolGrad", infer_pool_grad, {}, {}, {}, "backward of MaxPool (argmax recomputed): (dY, X) -> dX"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "AveragePoolGrad", infer_pool_grad, {}, {}, {}, "backward of AveragePool: (dY, X) -> dX"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "GlobalAveragePoolGrad", infer_pool_grad, {}, {}, {}, "backward of GlobalAveragePool: (dY, X) -> dX"});

}  // namespace cbt
