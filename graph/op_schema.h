// One registry of op schemas: shape/type inference, gradient rule and training rewrite.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

// What shape inference sees of one node once the graph is bound to a batch size.
struct InferContext {
  const Node& node;
  std::vector<ValueType> in;          // undefined entries for omitted optional inputs
  std::vector<const Tensor*> values;  // host values of constant inputs, else nullptr
  int64_t opset = 0;

  size_t num_inputs() const { return in.size(); }
  bool has(size_t i) const { return i < in.size() && in[i].defined(); }
  // Input i's type; throws ModelError when it is missing.
  const ValueType& input(size_t i) const;
  // Constant value of input i; throws ModelError naming the node when it is not constant
  // (e.g. Reshape's shape computed at run time from data).
  const Tensor& const_value(size_t i) const;
  [[noreturn]] void fail(const std::string& msg) const;
};

using InferFn = std::function<std::vector<ValueType>(const InferContext&)>;

// The gradient builder as seen by gradient rules: emits backward nodes into the training
// graph and answers the (bound) types of existing values.
class GradEmitter {
 public:
  virtual ~GradEmitter() = default;
  // Adds a node with `num_outputs` fresh output names derived from `hint`; returns them.
  virtual std::vector<std::string> emit(const std::string& op_type, const std::string& domain,
                                        std::vector<std::string> inputs, size_t num_outputs, Attributes attrs,
                                        const std::string& hint) = 0;
  virtual const ValueType& type(const std::string& value) const = 0;
  virtual std::string fresh(const std::string& hint) = 0;

  // A node of `op_type` with `num_outputs` fresh output names derived from `hint`, named after
  // its first output: what emit() adds.
  Node new_node(const std::string& op_type, const std::string& domain, std::vector<std::string> inputs,
                size_t num_outputs, Attributes attrs, const std::string& hint);
  // One-output node of cbtrain's domain (most backward ops).
  std::string emit1(const std::string& op_type, std::vector<std::string> inputs, Attributes attrs = {},
                    const std::string& hint = "grad") {
    return emit(op_type, kCbtDomain, std::move(inputs), 1, std::move(attrs), hint)[0];
  }
};

struct GradContext {
  const Node& node;             // the forward node (after its training rewrite)
  std::vector<std::string> dY;  // gradient of each forward output, "" where none flows
  std::vector<bool> wants;      // per forward input: whether its gradient is needed
  GradEmitter& g;
};

// Returns one gradient name per forward input ("" where not wanted / not defined).
using GradFn = std::function<std::vector<std::string>(GradContext&)>;

// Turns an inference-mode node into its training form (BatchNorm on batch statistics with
// extra saved outputs, Dropout with a mask output). May add outputs using g.fresh().
using TrainingRewriteFn = std::function<void(Node&, GradEmitter&)>;

struct OpSchema {
  std::string domain;  // "" = ONNX default domain
  std::string op_type;
  InferFn infer;
  GradFn grad;                         // empty: not differentiable
  std::vector<int> diff_inputs;        // inputs a gradient can flow to
  TrainingRewriteFn training_rewrite;  // empty: same node in training
  std::string summary;                 // one line for `cbtrain ops` and the README table
  // Inputs whose values the op reads as constants (Resize's roi, scales and sizes): a float
  // initializer read there is a constant of the model, never a trained parameter.
  std::vector<int> constant_inputs{};
};

bool register_schema(OpSchema schema);

// Input positions 0..n-1: the diff_inputs of a variadic op (Concat, Sum, Mean).
std::vector<int> input_positions(int n);

// Marks the float initializers that nodes of `g` read at their schemas' constant_inputs as
// constants (Graph::constant_initializers).
void mark_constant_inputs(Graph& g);
const OpSchema* find_schema(const std::string& domain, const std::string& op_type);
std::vector<const OpSchema*> all_schemas();

}  // namespace cbt

#define CBT_SCHEMA_CAT2(a, b) a##b
#define CBT_SCHEMA_CAT(a, b) CBT_SCHEMA_CAT2(a, b)
// Registers a schema at static-initialisation time (graph ops are an OBJECT library).
#define CBT_REGISTER_SCHEMA(...) \
  static const bool CBT_SCHEMA_CAT(cbt_schema_reg_, __COUNTER__) = ::cbt::register_schema(__VA_ARGS__)
