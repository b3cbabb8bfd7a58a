// What a node that is rewritten into other ops when the graph is bound becomes (LSTM, GRU and
// RNN: recurrent.h; Einsum: einsum.h): those ops, in order, and the constants they read.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

struct Expansion {
  std::vector<Node> nodes;                  // in order; the last ones write the node's outputs
  std::map<std::string, Tensor> constants;  // new constant initializers they read
};

// A value name not used yet, from a hint.
using FreshName = std::function<std::string(const std::string& hint)>;

}  // namespace cbt
