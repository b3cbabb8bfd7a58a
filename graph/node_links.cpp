// Readers, producers and node removal for the training step's rewrites (graph/node_links.h).
#include "graph/node_links.h"

#include <utility>

namespace cbt {

std::map<std::string, std::vector<size_t>> readers_of(const Graph& g) {
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) readers[in].push_back(i);
  return readers;
}

std::optional<size_t> sole_reader(const std::map<std::string, std::vector<size_t>>& readers,
                                  const std::set<std::string>& exposed, const std::string& v) {
  auto it = readers.find(v);
  if (exposed.count(v) || it == readers.end() || it->second.size() != 1) return std::nullopt;
  return it->second[0];
}

std::map<std::string, size_t> producers_of(const Graph& g) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& out : g.nodes[i].outputs)
      if (!out.empty()) producer[out] = i;
  return producer;
}

void drop_nodes(Graph& g, const std::vector<bool>& drop) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

bool is_node(const Node& n, const char* op, size_t inputs) {
  return n.domain.empty() && n.op_type == op && n.inputs.size() == inputs && n.outputs.size() == 1;
}

Node fused_node(const char* op, const char* domain, const Node& last, const char* suffix) {
  Node n;
  n.op_type = op;
  n.domain = domain;
  n.name = last.name.empty() ? suffix : last.name + "_" + suffix;
  return n;
}

}  // namespace cbt
