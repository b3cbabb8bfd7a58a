// Expands ReduceSumSquare, ReduceL1 and ReduceL2 into the ops they are made of
// (composite_ops.h).
#include "graph/composite_ops.h"

#include <set>
#include <string>
#include <vector>

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

}  // namespace

void expand_composite_ops(Graph& g) {
  std::set<std::string> taken;
  for (const auto& [name, t] : g.initializers) taken.insert(name);
  for (const auto& v : g.inputs) taken.insert(v.name);
  for (const Node& n : g.nodes)
    for (const auto& o : n.outputs) taken.insert(o);

  std::vector<Node> out;
  for (Node& n : g.nodes) {
    const bool sum_square = n.op_type == "ReduceSumSquare", l1 = n.op_type == "ReduceL1", l2 = n.op_type == "ReduceL2";
    if (!n.domain.empty() || !(sum_square || l1 || l2) || !n.has_input(0) || n.outputs.empty()) {
      out.push_back(std::move(n));
      continue;
    }
    const std::string base = (n.name.empty() ? n.outputs[0] : n.name);
    const std::string x = n.inputs[0];
    // The elementwise part.
    const std::string terms = fresh_name(taken, base + (l1 ? "_abs" : "_square"));
    out.push_back(l1 ? make("Abs", base + "_abs", {x}, terms) : make("Mul", base + "_square", {x, x}, terms));
    // The sum, with the axes where this opset's ReduceSum takes them.
    const std::string sum = l2 ? fresh_name(taken, base + "_sum") : n.outputs[0];
    Node reduce = make("ReduceSum", base + "_sum", {terms}, sum);
    reduce.attrs = n.attrs;
    if (g.opset >= 13 && g.opset < 18) {
      reduce.attrs.erase("axes");
      if (n.attrs.has("axes")) {
        const std::vector<int64_t> axes = n.attrs.get_ints("axes");
        const std::string name = fresh_name(taken, base + "_axes");
        g.initializers.emplace(name, Tensor::from_i64(axes, {static_cast<int64_t>(axes.size())}));
        g.constant_initializers.insert(name);
        reduce.inputs.push_back(name);
      }
    } else if (g.opset >= 18 && n.has_input(1)) {
      reduce.inputs.push_back(n.inputs[1]);
    }
    out.push_back(std::move(reduce));
    if (l2) {
      // A norm: its gradient where it is 0 is 0 (PyTorch's), not Sqrt's infinite derivative
      // times the zero of 2X, which is NaN.
      Node sqrt = make("Sqrt", base + "_sqrt", {sum}, n.outputs[0]);
      sqrt.attrs.set(kZeroGradAtZero, int64_t{1});
      out.push_back(std::move(sqrt));
    }
  }
  g.nodes = std::move(out);
}

}  // namespace cbt
