// Gemm and MatMul schemas, their fused backward ops (GemmGrad, MatMulGrad) and gradient rules.
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/shape_utils.h"

namespace cbt {
namespace {

void check_float_pair(const InferContext& ctx) {
  const ValueType& a = ctx.input(0);
  const ValueType& b = ctx.input(1);
  if (!is_floating(a.dtype) || a.dtype != b.dtype) ctx.fail("operands must be float tensors of the same type");
}

// A (M, K) or (K, M) with transA, B (K, N) or (N, K) with transB, C broadcastable to (M, N).
std::vector<ValueType> infer_gemm(const InferContext& ctx) {
  check_float_pair(ctx);
  const Shape& a = ctx.in[0].shape;
  const Shape& b = ctx.in[1].shape;
  if (a.size() != 2 || b.size() != 2) ctx.fail("Gemm needs 2-D operands, got " + shape_str(a) + " and " + shape_str(b));
  bool ta = ctx.node.attrs.get_int("transA", 0) != 0, tb = ctx.node.attrs.get_int("transB", 0) != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb) ctx.fail("inner dimensions differ: " + shape_str(a) + " and " + shape_str(b));
  if (ctx.has(2)) {
    const Shape& c = ctx.in[2].shape;
    bool ok = c.size() <= 2 && ctx.in[2].dtype == ctx.in[0].dtype;
    Shape full{m, n};
    for (size_t i = 0; ok && i < c.size(); ++i) ok = c[i] == 1 || c[i] == full[2 - c.size() + i];
    if (!ok) ctx.fail("C " + shape_str(c) + " cannot be broadcast to " + shape_str(full));
  }
  return {{ctx.in[0].dtype, {m, n}}};
}

// Numpy matmul: 1-D operands are promoted and their unit dim dropped; batch dims broadcast.
std::vector<ValueType> infer_matmul(const InferContext& ctx) {
  check_float_pair(ctx);
  Shape a = ctx.in[0].shape, b = ctx.in[1].shape;
  if (a.empty() || b.empty()) ctx.fail("MatMul operands must have rank >= 1");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a[a.size() - 1] != b[b.size() - 2])
    ctx.fail("inner dimensions differ: " + shape_str(ctx.in[0].shape) + " and " + shape_str(ctx.in[1].shape));
  Shape out;
  try {
    out = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  } catch (const ModelError& e) {
    ctx.fail(e.what());
  }
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return {{ctx.in[0].dtype, out}};
}

// GemmGrad (dY, A, B, C?[, Y]) -> (dA, dB, dC[, dY']); MatMulGrad (dY, A, B) -> (dA, dB). With
// relu=1 (a Gemm fused with the Relu after it, graph/fusion.h) Y is the fused output, and the
// products use dY' = dY where Y > 0 (what ReluGrad gave), an output of its own.
std::vector<ValueType> infer_product_grad(const InferContext& ctx) {
  std::vector<ValueType> out{ctx.input(1), ctx.input(2)};
  if (ctx.node.op_type == "GemmGrad") out.push_back(ctx.has(3) ? ctx.in[3] : ValueType{});
  if (ctx.node.attrs.get_int("relu", 0) && (!ctx.has(4) || ctx.input(4).shape != ctx.input(0).shape))
    ctx.fail("relu=1 needs the fused output Y (input 4) of dY's shape");
  if (ctx.node.attrs.get_int("relu", 0)) out.push_back(ctx.input(0));
  if (ctx.input(0).dtype != out[0].dtype) ctx.fail("dY and A differ in type");
  return out;
}

std::vector<std::string> product_grad(GradContext& c) {
  const Node& n = c.node;
  bool gemm = n.op_type == "Gemm";
  const bool relu = gemm && n.attrs.get_int("relu", 0) != 0;
  size_t num = gemm ? (relu ? 4 : 3) : 2;
  std::vector<std::string> none(n.inputs.size(), "");
  if (c.dY.empty() || c.dY[0].empty()) return none;
  bool want_c = gemm && n.has_input(2) && c.wants.size() > 2 && c.wants[2];
  Attributes attrs = n.attrs;
  attrs.set("outputs_needed", std::vector<int64_t>{c.wants[0], c.wants[1], want_c});
  std::vector<std::string> in{c.dY[0], n.inputs[0], n.inputs[1]};
  if (gemm) in.push_back(n.input(2));
  if (relu) in.push_back(n.outputs[0]);  // fused: dY counts where Y > 0
  auto d = c.g.emit(n.op_type + "Grad", kCbtDomain, in, num, attrs, "d_" + n.name);
  none[0] = c.wants[0] ? d[0] : "";
  none[1] = c.wants[1] ? d[1] : "";
  if (want_c) none[2] = d[2];
  return none;
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{
    "", "Gemm", infer_gemm, product_grad, {0, 1, 2}, {}, "alpha*op(A)*op(B) + beta*C (transA, transB, broadcast C)"});
CBT_REGISTER_SCHEMA(OpSchema{"",
                             "MatMul",
                             infer_matmul,
                             product_grad,
                             {0, 1},
                             {},
                             "numpy matmul (batched, broadcast batch dims, 1-D operands)"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "GemmGrad",
                             infer_product_grad,
                             {},
                             {},
                             {},
                             "backward of Gemm: (dY, A, B, C?[, Y if relu=1]) -> (dA, dB, dC[, masked dY])"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "MatMulGrad", infer_product_grad, {}, {}, {}, "backward of MatMul: (dY, A, B) -> (dA, dB)"});

}  // namespace cbt
