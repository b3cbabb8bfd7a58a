// The IR: values, nodes with typed attributes, initializers. Free of ONNX/protobuf types.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "graph/tensor.h"

namespace cbt {

// Domain of cbtrain's own ops (backward ops, losses, training variants).
inline constexpr const char* kCbtDomain = "cbtrain";
// Attribute of a backward node naming an output of its forward node: where a program runs both,
// their kernels share one cache (runtime/program.h), so the backward can use what the forward
// kept (cuDNN's recurrent reserve space).
inline constexpr const char* kStateOfAttr = "state_of";

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>, Tensor>;

class Attributes {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  void erase(const std::string& name) { values_.erase(name); }
  // Typed getters: the default is returned when absent; a present attribute of the wrong
  // type throws ModelError.
  int64_t get_int(const std::string& name, int64_t def) const;
  float get_float(const std::string& name, float def) const;
  std::string get_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> get_floats(const std::string& name, std::vector<float> def = {}) const;
  std::vector<std::string> get_strings(const std::string& name, std::vector<std::string> def = {}) const;
  const Tensor* get_tensor(const std::string& name) const;
  const std::map<std::string, AttrValue>& all() const { return values_; }

 private:
  std::map<std::string, AttrValue> values_;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;               // "" for the default ONNX domain, kCbtDomain for ours
  std::vector<std::string> inputs;  // "" marks an omitted optional input
  std::vector<std::string> outputs;
  Attributes attrs;

  // Input i, or "" when absent.
  const std::string& input(size_t i) const;
  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  // "Conv 'conv1'" for messages.
  std::string describe() const;
};

// One dimension of a graph input/output: a fixed size or a symbol (e.g. the batch).
struct Dim {
  int64_t value = -1;  // -1 when symbolic or unknown
  std::string symbol;
  bool is_static() const { return value >= 0; }
};

struct ValueInfo {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<Dim> dims;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;        // topologically ordered
  std::vector<ValueInfo> inputs;  // real inputs only (no initializers)
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> initializers;
  // Initializers that are constants, never trained (from Constant nodes, folded shapes).
  std::set<std::string> constant_initializers;
  int64_t opset = 0;  // default-domain opset version

  const ValueInfo* find_input(const std::string& name) const;
  bool is_initializer(const std::string& name) const { return initializers.count(name) != 0; }
};

// A concrete type of a value once the graph is bound to a batch size.
struct ValueType {
  DType dtype = DType::Undefined;
  Shape shape;
  bool defined() const { return dtype != DType::Undefined; }
  bool operator==(const ValueType&) const = default;
};

// Maps value names to a unique, stable string (for generated names).
std::string unique_name(const std::string& base, const std::map<std::string, ValueType>& taken);

}  // namespace cbt
