// Test harness for ops: f64 finite-difference gradient checks through the gradient-rule
// table, and random-input helpers. Every differentiable op is checked with it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "ops/eager.h"

namespace cbt::test {

// Normal(0, scale) values (never all zeros) from a fixed seed.
Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double scale = 1.0);
// Uniform integers in [lo, hi).
Tensor random_int_tensor(const Shape& shape, int64_t lo, int64_t hi, uint64_t seed);

struct GradCheckOptions {
  bool training = true;
  int64_t opset = 17;
  double eps = 1e-6;
  double rtol = 1e-5;  // f64 tolerances: relative to max(|analytic|, |numeric|, 1)
  double atol = 1e-7;
  std::vector<int> check_inputs;  // empty: every float input in the schema's diff_inputs
  uint64_t seed = 7;
};

struct GradCheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string report;  // what failed, for the assertion message
};

// Runs `node` in f64 on `inputs` (float inputs are converted to f64), forms
// L = sum_k sum(R_k * Y_k) with random R_k for every float output, computes dL/dX with the
// op's gradient rule (backward nodes executed eagerly), and compares with central finite
// differences of L for each checked input.
GradCheckResult grad_check(const Node& node, const std::vector<Tensor>& inputs, const GradCheckOptions& opt = {});

// The gradient of every input that the op's rule gives (backward nodes run eagerly) for `dy`,
// the gradient of the first output; undefined where it gives none. For a reference where
// finite differences do not apply (ties of a max).
std::vector<Tensor> rule_gradients(const Node& node, const std::vector<Tensor>& inputs, const Tensor& dy,
                                   int64_t opset = 17);

// Builds a node quickly: make_node("Conv", {"x","w","b"}, {"y"}) (names are positional).
Node make_node(const std::string& op_type, size_t num_inputs, size_t num_outputs, Attributes attrs = {},
               const std::string& domain = "");

// Shape inference of `node` on `inputs` (constants passed) at `opset`: the message of the
// ModelError it throws, or "" when it infers.
std::string infer_error(const Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17);

// Whether a and b (host tensors) have the same dtype, shape and bytes.
bool same_bytes(const Tensor& a, const Tensor& b);

// Max |a - b| / (atol + rtol * |b|) style comparison; returns "" when close, else a report.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

}  // namespace cbt::test
