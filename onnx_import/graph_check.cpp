// Graph checks on import: one producer per value, no dangling inputs, no cycles; topological order.
#include <deque>
#include <unordered_map>

#include "onnx_import/proto_model.h"

namespace cbt {

void check_and_sort_graph(Graph& g) {
  // Producer of each value: -1 for graph inputs and initializers, else the node index.
  std::unordered_map<std::string, int64_t> producer;
  auto produce = [&](const std::string& name, int64_t by, const std::string& who) {
    auto [it, fresh] = producer.emplace(name, by);
    CBT_MODEL_CHECK(fresh, "value '", name, "' is produced twice (second time by ", who, ")");
  };
  for (const auto& [name, t] : g.initializers) produce(name, -1, "initializer");
  for (const auto& v : g.inputs) produce(v.name, -1, "graph input '" + v.name + "'");
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) produce(o, static_cast<int64_t>(i), g.nodes[i].describe());

  // Kahn's algorithm, stable: nodes already in order keep their order.
  const size_t n = g.nodes.size();
  std::vector<int64_t> pending(n, 0);
  std::vector<std::vector<size_t>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& in : g.nodes[i].inputs) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      CBT_MODEL_CHECK(it != producer.end(), g.nodes[i].describe(), ": input '", in,
                      "' is not produced by any node, initializer or graph input");
      if (it->second >= 0) {
        ++pending[i];
        consumers[static_cast<size_t>(it->second)].push_back(i);
      }
    }
  }
  for (const auto& v : g.outputs)
    CBT_MODEL_CHECK(producer.count(v.name), "graph output '", v.name, "' is never produced");

  std::vector<size_t> order;
  order.reserve(n);
  // A min-ordered ready set keeps the original order among independent nodes.
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.insert(i);
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.insert(c);
  }
  if (order.size() != n) {
    // Walk back from a stuck node through stuck producers; the first repeat is on the cycle.
    size_t cur = 0;
    while (pending[cur] == 0) ++cur;
    std::vector<bool> seen(n, false);
    while (!seen[cur]) {
      seen[cur] = true;
      for (const auto& in : g.nodes[cur].inputs) {
        auto it = in.empty() ? producer.end() : producer.find(in);
        if (it != producer.end() && it->second >= 0 && pending[static_cast<size_t>(it->second)] > 0) {
          cur = static_cast<size_t>(it->second);
          break;
        }
      }
    }
    throw ModelError("the graph has a cycle through " + g.nodes[cur].describe());
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (size_t i : order) sorted.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(sorted);
}

}  // namespace cbt
