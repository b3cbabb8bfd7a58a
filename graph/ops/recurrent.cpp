// Schemas of LSTM, GRU and RNN for the forms that a fused kernel computes (RecurrentForm::fused,
// kept whole where the graph is bound for a CUDA device; every other form, and every form on
// the CPU, is unrolled: graph/recurrent.h), and of RecurrentGrad, their backward node.
#include "graph/recurrent.h"

#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace cbt {
namespace {

RecurrentForm form_of(const InferContext& ctx) {
  return read_recurrent_form(
      ctx.node, [&ctx](size_t i) { return ctx.has(i) ? &ctx.in[i] : nullptr; },
      [&ctx](size_t i) { return i < ctx.values.size() ? ctx.values[i] : nullptr; });
}

// X (T, N, I) or (N, T, I), W, R, B?, sequence_lens?, initial_h?, initial_c?, P? ->
// Y (T, dirs, N, H) or (N, T, dirs, H), Y_h and Y_c (dirs, N, H) or (N, dirs, H).
std::vector<ValueType> infer_recurrent(const InferContext& ctx) {
  const RecurrentForm f = form_of(ctx);
  const bool bf = f.layout == 1;
  const ValueType y{f.dtype,
                    bf ? Shape{f.batch, f.steps, f.dirs, f.hidden} : Shape{f.steps, f.dirs, f.batch, f.hidden}};
  const ValueType state{f.dtype, bf ? Shape{f.batch, f.dirs, f.hidden} : Shape{f.dirs, f.batch, f.hidden}};
  std::vector<ValueType> out{y, state};
  if (f.kind == RecurrentKind::Lstm) out.push_back(state);
  return out;
}

// RecurrentGrad: X, W, R, B, initial_h, initial_c (as the forward's, "" where absent), dY, dY_h,
// dY_c ("" where none flows) -> dX, dW, dR, dB, d_initial_h, d_initial_c, typed as the forward's
// inputs would be (B and the initial states also where the forward has none).
std::vector<ValueType> infer_recurrent_grad(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& w = ctx.input(1);
  const ValueType& r = ctx.input(2);
  if (x.shape.size() != 3 || w.shape.size() != 3 || r.shape.size() != 3) ctx.fail("X, W and R must have rank 3");
  const int64_t dirs = w.shape[0], gh = w.shape[1], hidden = r.shape[2];
  const bool bf = ctx.node.attrs.get_int("layout", 0) == 1;
  const int64_t batch = x.shape[bf ? 0 : 1];
  const ValueType state{x.dtype, bf ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden}};
  return {x, w, r, ValueType{x.dtype, {dirs, 2 * gh}}, state, state};
}

// One RecurrentGrad for every input a gradient reaches (its inputs at positions 0-3, 5, 6).
std::vector<std::string> recurrent_grad(GradContext& c) {
  const Node& n = c.node;
  std::vector<std::string> dx(n.inputs.size());
  bool any_dy = false;
  for (const auto& d : c.dY) any_dy = any_dy || !d.empty();
  if (!any_dy) return dx;
  Attributes a = n.attrs;
  a.set("cell", n.op_type);
  for (const auto& out : n.outputs)  // a fused kernel's backward uses what its forward kept
    if (!out.empty()) {
      a.set(kStateOfAttr, out);
      break;
    }
  std::vector<std::string> in{n.input(0), n.input(1), n.input(2), n.input(3), n.input(5), n.input(6)};
  for (size_t i = 0; i < 3; ++i) in.push_back(i < c.dY.size() ? c.dY[i] : "");
  auto outs = c.g.emit("RecurrentGrad", kCbtDomain, in, 6, a, "d_" + n.op_type);
  const size_t from[] = {0, 1, 2, 3, 5, 6};  // forward input of each output
  for (size_t k = 0; k < 6; ++k)
    if (from[k] < n.inputs.size() && n.has_input(from[k]) && c.wants[from[k]]) dx[from[k]] = outs[k];
  return dx;
}

}  // namespace

// The summaries of `cbtrain ops` come from recurrent_op_summaries() (these nodes are unrolled
// wherever no fused kernel runs them).
CBT_REGISTER_SCHEMA({"", "LSTM", infer_recurrent, recurrent_grad, {0, 1, 2, 3, 5, 6}, {}, "", {4}});
CBT_REGISTER_SCHEMA({"", "GRU", infer_recurrent, recurrent_grad, {0, 1, 2, 3, 5}, {}, "", {4}});
CBT_REGISTER_SCHEMA({"", "RNN", infer_recurrent, recurrent_grad, {0, 1, 2, 3, 5}, {}, "", {4}});
CBT_REGISTER_SCHEMA({kCbtDomain, "RecurrentGrad", infer_recurrent_grad, {}, {}, {}, "", {}});

}  // namespace cbt
