// LSTM, GRU and RNN, unrolled over their sequence when the graph is bound (the length is known
// only then) into MatMul, Add, Mul, Sub, the gate activations, Split, Reshape, Concat and Clip:
// their gradients and CUDA kernels are those ops'. The written model keeps the original nodes.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

// Whether `n` is an LSTM, GRU or RNN of the ONNX domain.
bool is_recurrent(const Node& n);

// The recurrent ops with a one-line summary each, for `cbtrain ops`.
std::vector<std::pair<std::string, std::string>> recurrent_op_summaries();

struct Unrolled {
  std::vector<Node> nodes;                  // in order; the last ones write the node's outputs
  std::map<std::string, Tensor> constants;  // new constant initializers they read
};

// A value name not used yet, from a hint.
using FreshName = std::function<std::string(const std::string& hint)>;

// The ops `n` is made of over its bound input types (`types`: every value so far; `consts`:
// the constant ones, for sequence_lens). Throws ModelError naming the node for what cbtrain
// does not take: sequence lengths that differ from the sequence's, input_forget, activations
// with parameters.
Unrolled unroll_recurrent(const Node& n, const std::map<std::string, ValueType>& types,
                          const std::map<std::string, Tensor>& consts, int64_t opset, const FreshName& fresh);

}  // namespace cbt
