// CUDA-vs-CPU cases of LSTM, GRU and RNN in the forms cuDNN's recurrent networks compute
// (RecurrentForm::fused), and through their gradient rule RecurrentGrad: cuDNN against the CPU's
// unrolled ops. With and without biases and initial states, one and two directions, Relu and
// Tanh RNNs. Tolerances: rtol 2e-4, atol 2e-5 (cuDNN's matrix products sum in another order, and
// the error of each step carries into the next).
#include <string>
#include <vector>

#include "common/op_harness.h"
#include "cuda/cuda_cases.h"

namespace cbt::test {
namespace {

struct Form {
  const char* name;
  const char* op;
  int64_t dirs;
  bool bias, states;
  std::vector<std::string> activations;
};

CudaCase recurrent_case(const Form& f, uint64_t seed) {
  const int64_t T = 5, N = 3, I = 4, H = 6;
  const std::string op = f.op;
  const int64_t g = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  Attributes a;
  a.set("hidden_size", H);
  if (f.dirs == 2) a.set("direction", std::string("bidirectional"));
  if (op == "GRU") a.set("linear_before_reset", int64_t{1});
  if (!f.activations.empty()) a.set("activations", f.activations);
  std::vector<Tensor> in{
      random_tensor(DType::Float32, {T, N, I}, seed), random_tensor(DType::Float32, {f.dirs, g * H, I}, seed + 1, 0.4),
      random_tensor(DType::Float32, {f.dirs, g * H, H}, seed + 2, 0.4),
      f.bias ? random_tensor(DType::Float32, {f.dirs, 2 * g * H}, seed + 3, 0.3) : Tensor(), Tensor()};
  if (f.states) {
    in.push_back(random_tensor(DType::Float32, {f.dirs, N, H}, seed + 4, 0.5));
    if (op == "LSTM") in.push_back(random_tensor(DType::Float32, {f.dirs, N, H}, seed + 5, 0.5));
  }
  const size_t outputs = op == "LSTM" ? 3 : 2;
  Node n = make_node(op, in.size(), outputs, a);
  for (size_t i = 0; i < in.size(); ++i)
    if (!in[i].defined()) n.inputs[i] = "";
  while (!in.empty() && !in.back().defined()) in.pop_back(), n.inputs.pop_back();
  CudaCase c;
  c.name = op + "/" + f.name;
  c.node = std::move(n);
  c.inputs = std::move(in);
  c.rtol = 2e-4;
  c.atol = 2e-5;
  return c;
}

std::vector<CudaCase> recurrent_cases() {
  const Form forms[] = {
      {"bidirectional_bias_states", "LSTM", 2, true, true, {}},
      {"forward_bare", "LSTM", 1, false, false, {}},
      {"forward_bias_state", "GRU", 1, true, true, {}},
      {"bidirectional_bare", "GRU", 2, false, false, {}},
      {"relu_bidirectional_bias", "RNN", 2, true, false, {"Relu", "Relu"}},
      {"tanh_state", "RNN", 1, false, true, {}},
  };
  std::vector<CudaCase> v;
  uint64_t seed = 900;
  for (const Form& f : forms) v.push_back(recurrent_case(f, seed += 10));
  return v;
}

}  // namespace

CBT_CUDA_CASES(recurrent_cases);

}  // namespace cbt::test
