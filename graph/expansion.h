// What a node that is rewritten into other ops when the graph is bound becomes (LSTM, GRU and
// RNN: recurrent.h; Einsum: einsum.h): those ops, in order, and the constants they read.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace cbt {

struct Expansion {
  std::vector<Node> nodes;                  // in order; the last ones write the node's outputs
  std::map<std::string, Tensor> constants;  // new constant initializers they read
};

// A value name not used yet, from a hint.
using FreshName = std::function<std::string(const std::string& hint)>;

// Appends nodes and constants to an expansion, named after the node they replace (`base`).
class ExpansionWriter {
 public:
  ExpansionWriter(std::string base, const FreshName& fresh) : base(std::move(base)), fresh_(fresh) {}

  Expansion ex;
  std::string base;

  // A node of `op` with `outputs` fresh outputs named from `hint` (or the one output `out`).
  std::vector<std::string> add_n(const std::string& op, std::vector<std::string> inputs, size_t outputs, Attributes a,
                                 const std::string& hint, const std::string& out = "");
  std::string add(const std::string& op, std::vector<std::string> inputs, Attributes a, const std::string& hint,
                  const std::string& out = "") {
    return add_n(op, std::move(inputs), 1, std::move(a), hint, out)[0];
  }
  // A new constant initializer.
  std::string constant(Tensor t, const std::string& hint);
  std::string ints(const std::vector<int64_t>& v, const std::string& hint) {
    return constant(Tensor::from_i64(v, {static_cast<int64_t>(v.size())}), hint);
  }
  // ReduceSum of `x` over `axes` without keeping them, the axes where `opset` puts them (an
  // attribute before 13, an input from 13).
  std::string reduce_sum(const std::string& x, const std::vector<int64_t>& axes, int64_t opset,
                         const std::string& out = "");

 private:
  const FreshName& fresh_;
};

}  // namespace cbt
