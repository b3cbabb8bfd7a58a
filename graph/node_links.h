// Who reads and who writes each value of a graph, for the peephole rewrites of the training
// step (graph/fusion.h, graph/layout_fusion.h): the lookups a rewrite needs to know that a value
// it folds away is read by nothing else, and the node surgery they share.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

// value -> the nodes that read it, in node order.
std::map<std::string, std::vector<size_t>> readers_of(const Graph& g);

// The one node that reads `v`, where exactly one does and v is nothing the caller reads
// (`exposed`): a value a rewrite may fold away.
std::optional<size_t> sole_reader(const std::map<std::string, std::vector<size_t>>& readers,
                                  const std::set<std::string>& exposed, const std::string& v);

// value -> the node that writes it.
std::map<std::string, size_t> producers_of(const Graph& g);

// Removes the nodes whose `drop` entry is set, keeping the others' order.
void drop_nodes(Graph& g, const std::vector<bool>& drop);

// Whether n is an `op` of the ONNX domain with `inputs` inputs and one output: the shape of node
// a rewrite matches.
bool is_node(const Node& n, const char* op, size_t inputs);

// A node of `op` in `domain` that takes the place of `last`, named after it with `suffix`.
Node fused_node(const char* op, const char* domain, const Node& last, const char* suffix);

}  // namespace cbt
