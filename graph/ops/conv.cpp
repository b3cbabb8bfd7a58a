// Conv and ConvTranspose schemas (1-D and 2-D), their fused backward ops and gradient rules.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

struct ConvAttrs {
  size_t nd = 0;  // spatial dims
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
  int64_t group = 1;
};

ConvAttrs read_conv_attrs(const InferContext& ctx, const Shape& x, const Shape& w) {
  if (!is_floating(ctx.in[0].dtype) || ctx.in[1].dtype != ctx.in[0].dtype)
    ctx.fail("input and weight must be float tensors of the same type");
  if (x.size() != 3 && x.size() != 4)
    ctx.fail("only 1-D and 2-D convolutions are supported (input rank 3 or 4), got input " + shape_str(x));
  if (w.size() != x.size()) ctx.fail("weight " + shape_str(w) + " must have the rank of input " + shape_str(x));
  ConvAttrs a;
  a.nd = x.size() - 2;
  const Attributes& at = ctx.node.attrs;
  Shape wk(w.begin() + 2, w.end());
  a.kernel = at.get_ints("kernel_shape", wk);
  if (a.kernel != wk) ctx.fail("kernel_shape " + shape_str(a.kernel) + " does not match weight " + shape_str(w));
  a.strides = at.get_ints("strides", std::vector<int64_t>(a.nd, 1));
  a.dilations = at.get_ints("dilations", std::vector<int64_t>(a.nd, 1));
  a.pads = at.get_ints("pads", std::vector<int64_t>(2 * a.nd, 0));
  if (a.strides.size() != a.nd || a.dilations.size() != a.nd || a.pads.size() != 2 * a.nd)
    ctx.fail("strides/dilations/pads have the wrong length for " + std::to_string(a.nd) + " spatial dims");
  for (size_t i = 0; i < a.nd; ++i)
    if (a.strides[i] < 1 || a.dilations[i] < 1 || a.pads[i] < 0 || a.pads[a.nd + i] < 0 || a.kernel[i] < 1)
      ctx.fail("strides, dilations and kernel must be positive and pads non-negative");
  a.auto_pad = at.get_string("auto_pad", "NOTSET");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER")
    ctx.fail("unknown auto_pad '" + a.auto_pad + "'");
  a.group = at.get_int("group", 1);
  if (a.group < 1) ctx.fail("group must be positive");
  return a;
}

void check_bias(const InferContext& ctx, int64_t channels) {
  if (!ctx.has(2)) return;
  if (ctx.in[2].shape != Shape{channels} || ctx.in[2].dtype != ctx.in[0].dtype)
    ctx.fail("bias " + shape_str(ctx.in[2].shape) + " must be (" + std::to_string(channels) + ")");
}

// X (N, C, spatial), W (M, C/group, kernel), B (M) -> Y (N, M, out spatial).
std::vector<ValueType> infer_conv(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  ConvAttrs a = read_conv_attrs(ctx, x, w);
  int64_t m = w[0];
  if (m % a.group != 0 || x[1] != w[1] * a.group)
    ctx.fail("input " + shape_str(x) + " and weight " + shape_str(w) + " do not agree for group " +
             std::to_string(a.group));
  check_bias(ctx, m);
  Shape y{x[0], m};
  for (size_t i = 0; i < a.nd; ++i) {
    int64_t in = x[2 + i], eff = (a.kernel[i] - 1) * a.dilations[i] + 1, s = a.strides[i];
    int64_t span = in - eff;
    if (a.auto_pad == "NOTSET") span += a.pads[i] + a.pads[a.nd + i];
    int64_t out = (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") ? (in + s - 1) / s
                  : span >= 0                                                ? span / s + 1
                                                                             : 0;
    if (out < 1) ctx.fail("kernel larger than the padded input " + shape_str(x));
    y.push_back(out);
  }
  return {{ctx.in[0].dtype, y}};
}

// X (N, C, spatial), W (C, M/group, kernel), B (M) -> Y (N, M, out spatial).
std::vector<ValueType> infer_conv_transpose(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  ConvAttrs a = read_conv_attrs(ctx, x, w);
  if (x[1] != w[0] || w[0] % a.group != 0)
    ctx.fail("input " + shape_str(x) + " and weight " + shape_str(w) + " do not agree for group " +
             std::to_string(a.group));
  int64_t m = w[1] * a.group;
  check_bias(ctx, m);
  auto out_pad = ctx.node.attrs.get_ints("output_padding", std::vector<int64_t>(a.nd, 0));
  auto out_shape = ctx.node.attrs.get_ints("output_shape", {});
  if (out_pad.size() != a.nd) ctx.fail("output_padding has the wrong length");
  if (!out_shape.empty() && out_shape.size() != a.nd && out_shape.size() != a.nd + 2)
    ctx.fail("output_shape has the wrong length");
  Shape y{x[0], m};
  for (size_t i = 0; i < a.nd; ++i) {
    int64_t in = x[2 + i], eff = (a.kernel[i] - 1) * a.dilations[i] + 1, s = a.strides[i];
    if (out_pad[i] < 0 || out_pad[i] >= std::max(s, a.dilations[i]))
      ctx.fail("output_padding must be smaller than the stride or dilation");
    int64_t out;
    if (!out_shape.empty())
      out = out_shape[out_shape.size() - a.nd + i];
    else if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER")
      out = in * s;
    else {
      out = s * (in - 1) + out_pad[i] + eff;
      if (a.auto_pad == "NOTSET") out -= a.pads[i] + a.pads[a.nd + i];
    }
    if (out < 1 || out > s * (in - 1) + out_pad[i] + eff)
      ctx.fail("output size " + std::to_string(out) + " impossible for input " + shape_str(x));
    y.push_back(out);
  }
  return {{ctx.in[0].dtype, y}};
}

// ConvGrad / ConvTransposeGrad (dY, X, W[, Y]) -> (dX, dW, dB (M)[, dY']). With relu=1 (a Conv
// fused with the Relu after it, graph/fusion.h) Y is the fused output, and the products use
// dY' = dY where Y > 0 (what ReluGrad gave), an output of its own.
std::vector<ValueType> infer_conv_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.input(0);
  const ValueType& x = ctx.input(1);
  const ValueType& w = ctx.input(2);
  if (dy.shape.size() != x.shape.size() || w.shape.size() != x.shape.size() || x.shape.size() < 3)
    ctx.fail("dY, X and W must have the same rank (at least 3)");
  if (dy.shape[0] != x.shape[0]) ctx.fail("dY and X disagree on the batch");
  if (ctx.node.attrs.get_int("relu", 0) && (!ctx.has(3) || ctx.input(3).shape != dy.shape))
    ctx.fail("relu=1 needs the fused output Y (input 3) of dY's shape");
  std::vector<ValueType> out{x, w, {x.dtype, {dy.shape[1]}}};
  if (ctx.node.attrs.get_int("relu", 0)) out.push_back(dy);
  return out;
}

// One fused backward node; outputs_needed tells the kernel which products it may skip.
std::vector<std::string> conv_grad(GradContext& c) {
  const Node& n = c.node;
  if (c.dY.empty() || c.dY[0].empty()) return {"", "", ""};
  bool want_b = n.has_input(2) && c.wants.size() > 2 && c.wants[2];
  Attributes attrs = n.attrs;
  attrs.set("outputs_needed", std::vector<int64_t>{c.wants[0], c.wants[1], want_b});
  std::vector<std::string> in{c.dY[0], n.inputs[0], n.inputs[1]};
  const bool relu = n.attrs.get_int("relu", 0) != 0;
  if (relu) in.push_back(n.outputs[0]);  // fused: dY counts where Y > 0
  auto d = c.g.emit(n.op_type + "Grad", kCbtDomain, in, relu ? 4 : 3, attrs, "d_" + n.name);
  return {c.wants[0] ? d[0] : "", c.wants[1] ? d[1] : "", want_b ? d[2] : ""};
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{"",
                             "Conv",
                             infer_conv,
                             conv_grad,
                             {0, 1, 2},
                             {},
                             "1-D/2-D convolution (group, dilations, strides, pads, auto_pad)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "ConvTranspose",
                             infer_conv_transpose,
                             conv_grad,
                             {0, 1, 2},
                             {},
                             "1-D/2-D transposed convolution (output_padding, output_shape)"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "ConvGrad",
                             infer_conv_grad,
                             {},
                             {},
                             {},
                             "backward of Conv: (dY, X, W[, Y if relu=1]) -> (dX, dW, dB[, masked dY])"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "ConvTransposeGrad",
                             infer_conv_grad,
                             {},
                             {},
                             {},
                             "backward of ConvTranspose: (dY, X, W) -> (dX, dW, dB)"});

}  // namespace cbt
