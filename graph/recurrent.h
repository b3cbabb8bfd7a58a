// LSTM, GRU and RNN, unrolled over their sequence when the graph is bound (the length is known
// only then) into MatMul, Add, Mul, Sub, the gate activations, Split, Reshape, Concat and Clip:
// their gradients and CUDA kernels are those ops'. The written model keeps the original nodes.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/expansion.h"
#include "graph/ir.h"

namespace cbt {

// Whether `n` is an LSTM, GRU or RNN of the ONNX domain.
bool is_recurrent(const Node& n);

enum class RecurrentKind { Lstm, Gru, Rnn };

// What an LSTM, GRU or RNN node computes, read from its attributes and input types.
struct RecurrentForm {
  RecurrentKind kind = RecurrentKind::Lstm;
  int64_t gates = 4;  // per direction: 4 (LSTM: i, o, f, c), 3 (GRU: z, r, h), 1 (RNN)
  int64_t layout = 0, steps = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse_only = false, linear_before_reset = false;
  bool has_bias = false, has_h0 = false, has_c0 = false, has_peepholes = false;
  // sequence_lens other than the full length for every sample (from the data, or a constant of
  // other values): each sample's steps from its length on leave the state as it was and give
  // zeros in Y (a reverse direction so starts at the sample's last step).
  bool has_lengths = false;
  float clip = 0;  // 0: none
  DType dtype = DType::Float32;
  bool input_forget = false;                             // LSTM: the forget gate is 1 - the input gate
  std::vector<std::string> activations;                  // the ops of each function, direction after direction
  std::vector<float> activation_alpha, activation_beta;  // each function's (0 where it takes none)

  // Whether a fused kernel (cuDNN's recurrent networks) computes this form: float32,
  // time-major, forward or bidirectional, the default activations (an RNN's Tanh or Relu
  // throughout), a GRU's linear_before_reset, no peepholes, no clip, full sequences, no
  // input_forget.
  bool fused() const;
};

// The type of input i of the node (null when absent), and its value when it is a constant.
using RecurrentInputType = std::function<const ValueType*(size_t)>;
using RecurrentInputValue = std::function<const Tensor*(size_t)>;

// Reads and checks the form; throws ModelError naming the node for what ONNX does not define
// (an unknown activation, a wrong shape).
RecurrentForm read_recurrent_form(const Node& n, const RecurrentInputType& type, const RecurrentInputValue& value);

// The recurrent ops with a one-line summary each, for `cbtrain ops`.
std::vector<std::pair<std::string, std::string>> recurrent_op_summaries();

using Unrolled = Expansion;

// The ops `n` is made of over its bound input types (`types`: every value so far; `consts`:
// the constant ones, for sequence_lens; every input's type is there: bind_graph checks).
// Throws as read_recurrent_form.
Unrolled unroll_recurrent(const Node& n, const std::map<std::string, ValueType>& types,
                          const std::map<std::string, Tensor>& consts, int64_t opset, const FreshName& fresh);

}  // namespace cbt
