// fuse_relu: a BatchNormTraining, Gemm or Conv and the Relu after it as one node.
#include "graph/fusion.h"

#include <utility>
#include <vector>

namespace cbt {

bool takes_fused_relu(const Node& n) {
  if (n.domain == kCbtDomain) return n.op_type == "BatchNormTraining";
  return n.domain.empty() && (n.op_type == "Gemm" || n.op_type == "Conv");
}

int fuse_relu(Graph& g, std::map<std::string, ValueType>& types,
              const std::set<std::string>& exposed) {
  std::map<std::string, std::vector<size_t>> readers;  // value -> nodes that read it
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) readers[in].push_back(i);
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (Node& n : g.nodes) {
    if (!takes_fused_relu(n) || n.attrs.get_int("relu", 0)) continue;
    const std::string y = n.outputs[0];
    auto it = readers.find(y);
    if (exposed.count(y) || it == readers.end() || it->second.size() != 1) continue;
    const Node& relu = g.nodes[it->second[0]];
    if (!relu.domain.empty() || relu.op_type != "Relu") continue;
    n.outputs[0] = relu.outputs[0];
    n.attrs.set("relu", int64_t{1});
    drop[it->second[0]] = true;
    types.erase(y);
    ++fused;
  }
  if (!fused) return 0;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  return fused;
}

}  // namespace cbt
