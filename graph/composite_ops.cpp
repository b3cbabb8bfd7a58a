// Expands ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, Swish, LRN, Shrink
// and Max/Min of other than two inputs into the ops they are made of (composite_ops.h).
#include "graph/composite_ops.h"

#include <set>
#include <string>
#include <vector>

#include "graph/errors.h"

namespace cbt {
namespace {

// A value name not yet used in `taken`, from `base`; recorded there.
std::string fresh_name(std::set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

Node make(const std::string& op, const std::string& name, std::vector<std::string> in, std::string out) {
  Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(in);
  n.outputs = {std::move(out)};
  return n;
}

// Writes the expansions of one graph's composite nodes.
class Expander {
 public:
  explicit Expander(Graph& g) : g_(g) {
    for (const auto& [name, t] : g.initializers) taken_.insert(name);
    for (const auto& v : g.inputs) taken_.insert(v.name);
    for (const Node& n : g.nodes)
      for (const auto& o : n.outputs) taken_.insert(o);
  }

  // Appends to `out` what `n` is made of; false when `n` is not a composite.
  bool expand(const Node& n, std::vector<Node>& out) {
    if (!n.domain.empty() || !n.has_input(0) || n.outputs.empty() || n.outputs[0].empty()) return false;
    base_ = n.name.empty() ? n.outputs[0] : n.name;
    out_ = &out;
    const std::string& op = n.op_type;
    const std::string& x = n.inputs[0];
    if (op == "ReduceSumSquare" || op == "ReduceL1" || op == "ReduceL2") {
      const bool l1 = op == "ReduceL1", l2 = op == "ReduceL2";
      const std::string terms = l1 ? add("Abs", {x}, "_abs") : add("Mul", {x, x}, "_square");
      const std::string sum = reduce("ReduceSum", terms, n, l2 ? "" : n.outputs[0]);
      if (l2) {
        // A norm: its gradient where it is 0 is 0 (PyTorch's), not Sqrt's infinite derivative
        // times the zero of 2X, which is NaN.
        Node& sqrt = emit("Sqrt", {sum}, "_sqrt", n.outputs[0]);
        sqrt.attrs.set(kZeroGradAtZero, int64_t{1});
      }
      return true;
    }
    if (op == "ReduceLogSum") {
      add("Log", {reduce("ReduceSum", x, n)}, "_log", n.outputs[0]);
      return true;
    }
    if (op == "ReduceLogSumExp") {
      // log(sum(exp(X - m))) + m with m the maximum over the axes: no exp overflows.
      const std::string m = reduce("ReduceMax", x, n, "", true);
      const std::string sum = reduce("ReduceSum", add("Exp", {add("Sub", {x, m}, "_shift")}, "_exp"), n);
      const bool keep = n.attrs.get_int("keepdims", 1) != 0;
      add("Add", {add("Log", {sum}, "_log"), keep ? m : reduce("ReduceMax", x, n)}, "_lse", n.outputs[0]);
      return true;
    }
    if (op == "Swish") {  // X sigmoid(alpha X)
      const float alpha = n.attrs.get_float("alpha", 1.0f);
      std::string scaled = x;
      if (alpha != 1.0f) scaled = add("Mul", {x, scalar(alpha, "_alpha")}, "_scaled");
      add("Mul", {x, add("Sigmoid", {scaled}, "_sigmoid")}, "_swish", n.outputs[0]);
      return true;
    }
    if (op == "Shrink") {
      // X < -lambd ? X + bias : X > lambd ? X - bias : 0 (PyTorch's Hardshrink and Softshrink).
      const float lambd = n.attrs.get_float("lambd", 0.5f);
      const std::string bias = scalar(n.attrs.get_float("bias", 0.0f), "_bias");
      const std::string above = add("Where",
                                    {add("Greater", {x, scalar(lambd, "_lambd")}, "_above_mask"),
                                     add("Sub", {x, bias}, "_down"), scalar(0.0f, "_zero")},
                                    "_above");
      add("Where", {add("Less", {x, scalar(-lambd, "_neg_lambd")}, "_below_mask"), add("Add", {x, bias}, "_up"), above},
          "_shrink", n.outputs[0]);
      return true;
    }
    if (op == "LRN") {
      // X / (bias + alpha / size * the sum of X^2 over `size` channels around each)^beta: the
      // window's sum as an average over a (channels, 1) window of X^2 viewed as (N, 1, C, rest),
      // pads counted (its divisor is size), with ONNX's floor/ceil split of the window.
      const int64_t size = n.attrs.get_int("size", 0);
      if (size < 1) throw ModelError("node " + n.describe() + ": LRN needs a positive size");
      const std::string sq = add("Mul", {x, x}, "_square");
      Node& lift = emit("Unsqueeze", {sq}, "_lift", "");
      if (g_.opset >= 13)
        lift.inputs.push_back(ints({1}, "_axis"));
      else
        lift.attrs.set("axes", std::vector<int64_t>{1});
      const std::string rows = add("Reshape", {lift.outputs[0], ints({0, 0, 0, -1}, "_rows_shape")}, "_rows");
      Node& pool = emit("AveragePool", {rows}, "_window", "");
      pool.attrs.set("kernel_shape", std::vector<int64_t>{size, 1});
      pool.attrs.set("pads", std::vector<int64_t>{(size - 1) / 2, 0, size / 2, 0});
      pool.attrs.set("count_include_pad", int64_t{1});
      const std::string mean = add("Reshape", {pool.outputs[0], add("Shape", {x}, "_shape")}, "_mean");
      const std::string base = add("Add",
                                   {add("Mul", {mean, scalar(n.attrs.get_float("alpha", 1e-4f), "_alpha")}, "_scaled"),
                                    scalar(n.attrs.get_float("bias", 1.0f), "_bias")},
                                   "_base");
      add("Div", {x, add("Pow", {base, scalar(n.attrs.get_float("beta", 0.75f), "_beta")}, "_pow")}, "_lrn",
          n.outputs[0]);
      return true;
    }
    if ((op == "Max" || op == "Min") && n.inputs.size() != 2) {
      // ONNX takes any number of inputs; cbtrain's kernels two: a chain of them.
      if (n.inputs.size() == 1) {
        add("Identity", {x}, "_id", n.outputs[0]);
        return true;
      }
      std::string acc = x;
      for (size_t i = 1; i < n.inputs.size(); ++i)
        acc = add(op, {acc, n.inputs[i]}, "_" + std::to_string(i), i + 1 == n.inputs.size() ? n.outputs[0] : "");
      return true;
    }
    return false;
  }

 private:
  Node& emit(const std::string& op, std::vector<std::string> in, const std::string& suffix, const std::string& out) {
    Node n = make(op, base_ + suffix, std::move(in), out.empty() ? fresh_name(taken_, base_ + suffix) : out);
    out_->push_back(std::move(n));
    return out_->back();
  }
  std::string add(const std::string& op, std::vector<std::string> in, const std::string& suffix,
                  const std::string& out = "") {
    return emit(op, std::move(in), suffix, out).outputs[0];
  }

  // A constant initializer: a float32 scalar, or a 1-D int64 tensor.
  std::string constant(Tensor t, const std::string& suffix) {
    const std::string name = fresh_name(taken_, base_ + suffix);
    g_.initializers.emplace(name, std::move(t));
    g_.constant_initializers.insert(name);
    return name;
  }
  std::string scalar(float v, const std::string& suffix) { return constant(Tensor::scalar_f32(v), suffix); }
  std::string ints(const std::vector<int64_t>& v, const std::string& suffix) {
    return constant(Tensor::from_i64(v, {static_cast<int64_t>(v.size())}), suffix);
  }

  // `op` (ReduceSum or ReduceMax) of `x` over the axes of the reduction `n`, written as this
  // opset's `op` takes them: an attribute before its axes became an input (13 for ReduceSum, 18
  // for the others), else an input (a constant made from n's attribute, or n's own input);
  // keepdims forced on by `keep`.
  std::string reduce(const std::string& op, const std::string& x, const Node& n, const std::string& out = "",
                     bool keep = false) {
    Node& r = emit(op, {x}, "_" + op, out);
    r.attrs = n.attrs;
    if (keep) r.attrs.set("keepdims", int64_t{1});
    const int64_t input_from = op == "ReduceSum" ? 13 : 18;
    if (g_.opset >= input_from && g_.opset < 18) {  // n has an attribute, op an input
      r.attrs.erase("axes");
      if (n.attrs.has("axes")) r.inputs.push_back(ints(n.attrs.get_ints("axes"), "_axes"));
    } else if (g_.opset >= 18 && n.has_input(1)) {
      r.inputs.push_back(n.inputs[1]);
    }
    return r.outputs[0];
  }

  Graph& g_;
  std::set<std::string> taken_;
  std::string base_;
  std::vector<Node>* out_ = nullptr;
};

}  // namespace

void expand_composite_ops(Graph& g) {
  Expander e(g);
  std::vector<Node> out;
  for (Node& n : g.nodes)
    if (!e.expand(n, out)) out.push_back(std::move(n));
  g.nodes = std::move(out);
}

}  // namespace cbt
