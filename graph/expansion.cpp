// Writing the nodes of an expansion (expansion.h).
#include "graph/expansion.h"

namespace cbt {

std::vector<std::string> ExpansionWriter::add_n(const std::string& op, std::vector<std::string> inputs, size_t outputs,
                                                Attributes a, const std::string& hint, const std::string& out) {
  Node node;
  node.op_type = op;
  node.name = base + "/" + hint + "_" + std::to_string(ex.nodes.size());
  node.inputs = std::move(inputs);
  node.attrs = std::move(a);
  for (size_t i = 0; i < outputs; ++i) node.outputs.push_back(out.empty() ? fresh_(base + "/" + hint) : out);
  ex.nodes.push_back(std::move(node));
  return ex.nodes.back().outputs;
}

std::string ExpansionWriter::constant(Tensor t, const std::string& hint) {
  std::string name = fresh_(base + "/" + hint);
  ex.constants.emplace(name, std::move(t));
  return name;
}

std::string ExpansionWriter::reduce_sum(const std::string& x, const std::vector<int64_t>& axes, int64_t opset,
                                        const std::string& out) {
  Attributes a;
  a.set("keepdims", int64_t{0});
  std::vector<std::string> in{x};
  if (opset >= 13)
    in.push_back(ints(axes, "axes"));
  else
    a.set("axes", axes);
  return add("ReduceSum", std::move(in), std::move(a), "ReduceSum", out);
}

}  // namespace cbt
