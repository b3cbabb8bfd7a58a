// A graph of one node, bound at the batch of its data and run node by node on the CPU
// (EagerEmitter): for the tests of the rewrites at binding, which check what the bound nodes
// compute.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/bind.h"
#include "ops/eager.h"
#include "runtime/inferencer.h"

namespace cbt::test {

// A graph of node n (named "a" unless named) reading `in`: in[0] its data input "in0" with a
// dynamic batch, the others constant initializers "in1", ... (an undefined tensor: the input
// omitted); its outputs n's, typed as in[0].
inline Graph one_node_graph(Node n, const std::vector<Tensor>& in, int64_t opset) {
  Graph g;
  g.opset = opset;
  if (n.name.empty()) n.name = "a";
  n.inputs.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string name = in[i].defined() ? "in" + std::to_string(i) : "";
    n.inputs.push_back(name);
    if (i == 0) {
      ValueInfo v{name, in[0].dtype(), {Dim{-1, "N"}}};
      for (size_t d = 1; d < in[0].shape().size(); ++d) v.dims.push_back(Dim{in[0].shape()[d], ""});
      g.inputs.push_back(v);
    } else if (in[i].defined()) {
      g.initializers.emplace(name, in[i]);
      g.constant_initializers.insert(name);
    }
  }
  for (const auto& out : n.outputs)
    if (!out.empty()) g.outputs.push_back({out, in[0].dtype(), {}});
  g.nodes.push_back(std::move(n));
  return g;
}

struct BoundRun {
  BoundGraph bound;
  std::map<std::string, Tensor> values;  // every value the run made, the inputs and constants
};

// Binds g at data's batch (its first dim), g's first input being `data`, and runs the bound
// nodes eagerly at g's opset.
inline BoundRun run_bound_graph(const Graph& g, const Tensor& data) {
  BindOptions bo;
  bo.batch = data.shape()[0];
  BoundRun r{bind_graph(g, bo, cpu_evaluator(g.opset)), {}};
  EagerEmitter e({false, 0, g.opset});
  e.values[g.inputs.at(0).name] = data;
  for (const auto& [name, t] : r.bound.graph.initializers) e.values[name] = t;
  for (const Node& node : r.bound.graph.nodes) e.run(node);
  r.values = std::move(e.values);
  return r;
}

}  // namespace cbt::test
