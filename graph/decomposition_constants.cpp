// The constants of exported decompositions (decomposition_constants.h).
#include "graph/decomposition_constants.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace cbt {
namespace {

// Whether initializer `name` holds floats that all equal `v`.
bool all_equal(const Graph& g, const std::string& name, double v) {
  auto it = g.initializers.find(name);
  if (it == g.initializers.end() || !is_floating(it->second.dtype()) || it->second.numel() == 0) return false;
  for (int64_t i = 0; i < it->second.numel(); ++i)
    if (it->second.at_f64(i) != v) return false;
  return true;
}

}  // namespace

std::vector<std::string> mark_decomposition_constants(Graph& g) {
  std::map<std::string, const Node*> producer;
  std::map<std::string, std::vector<const Node*>> readers;
  for (const Node& n : g.nodes) {
    for (const auto& out : n.outputs) producer[out] = &n;
    for (const auto& in : n.inputs) readers[in].push_back(&n);
  }
  auto is_reshape = [](const Node* n) { return n && n->domain.empty() && n->op_type == "Reshape"; };
  // A GroupNorm's InstanceNormalization: between Reshapes, scale all ones, bias all zeros.
  auto group_norm_inside = [&](const Node* n) {
    if (!n->domain.empty() || n->op_type != "InstanceNormalization" || n->inputs.size() < 3 || n->outputs.empty())
      return false;
    if (!all_equal(g, n->inputs[1], 1.0) || !all_equal(g, n->inputs[2], 0.0)) return false;
    auto p = producer.find(n->inputs[0]);
    if (p == producer.end() || !is_reshape(p->second)) return false;
    const auto& out_readers = readers[n->outputs[0]];
    if (out_readers.empty()) return false;
    for (const Node* r : out_readers)
      if (!is_reshape(r)) return false;
    return true;
  };
  std::set<const Node*> inside;  // each node judged once
  for (const Node& n : g.nodes)
    if (group_norm_inside(&n)) inside.insert(&n);
  std::vector<std::string> marked;
  for (const Node& n : g.nodes) {
    if (!inside.count(&n)) continue;
    for (size_t k : {size_t{1}, size_t{2}}) {
      const std::string& name = n.inputs[k];
      bool only_there = true;  // every reader such a node, reading it as scale or bias (else a parameter)
      for (const Node* r : readers[name]) only_there = only_there && inside.count(r) && r->inputs[0] != name;
      if (only_there && g.constant_initializers.insert(name).second) marked.push_back(name);
    }
  }
  return marked;
}

}  // namespace cbt
