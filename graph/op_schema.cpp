// Schema registry and InferContext helpers.
#include "graph/op_schema.h"

#include <algorithm>
#include <map>
#include <memory>

namespace cbt {

namespace {
std::map<std::pair<std::string, std::string>, std::unique_ptr<OpSchema>>& registry() {
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<OpSchema>> r;
  return r;
}
}  // namespace

bool register_schema(OpSchema schema) {
  auto key = std::make_pair(schema.domain, schema.op_type);
  CBT_CHECK(!registry().count(key), "schema registered twice: ", schema.op_type);
  registry()[key] = std::make_unique<OpSchema>(std::move(schema));
  return true;
}

Node GradEmitter::new_node(const std::string& op_type, const std::string& domain, std::vector<std::string> inputs,
                           size_t num_outputs, Attributes attrs, const std::string& hint) {
  Node n;
  n.op_type = op_type;
  n.domain = domain;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  for (size_t i = 0; i < num_outputs; ++i) n.outputs.push_back(fresh(hint));
  n.name = n.outputs.empty() ? fresh(op_type) : n.outputs[0];
  return n;
}

const OpSchema* find_schema(const std::string& domain, const std::string& op_type) {
  std::string d = (domain == "ai.onnx") ? "" : domain;
  auto it = registry().find({d, op_type});
  return it == registry().end() ? nullptr : it->second.get();
}

std::vector<const OpSchema*> all_schemas() {
  std::vector<const OpSchema*> out;
  for (auto& [k, v] : registry()) out.push_back(v.get());
  return out;
}

std::vector<int> input_positions(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

void mark_constant_inputs(Graph& g) {
  for (const Node& n : g.nodes) {
    const OpSchema* s = find_schema(n.domain, n.op_type);
    if (!s) continue;
    for (int i : s->constant_inputs) {
      const std::string& name = n.input(static_cast<size_t>(i));
      if (!name.empty() && g.initializers.count(name)) g.constant_initializers.insert(name);
    }
  }
}

const ValueType& InferContext::input(size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i) + " is required but missing");
  return in[i];
}

const Tensor& InferContext::const_value(size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i) + " is required but missing");
  if (i >= values.size() || !values[i])
    fail("input " + std::to_string(i) + " ('" + node.input(i) +
         "') must be a constant (an initializer or computable from shapes)");
  return *values[i];
}

void InferContext::fail(const std::string& msg) const { throw ModelError("node " + node.describe() + ": " + msg); }

}  // namespace cbt
