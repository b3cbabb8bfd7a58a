// Attribute access and small IR helpers.
#include "graph/ir.h"

namespace cbt {

namespace {
template <class T>
const T* typed(const std::map<std::string, AttrValue>& m, const std::string& name, const char* want) {
  auto it = m.find(name);
  if (it == m.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  CBT_MODEL_CHECK(v, "attribute '", name, "' must be ", want);
  return v;
}
}  // namespace

int64_t Attributes::get_int(const std::string& name, int64_t def) const {
  const int64_t* v = typed<int64_t>(values_, name, "an integer");
  return v ? *v : def;
}

float Attributes::get_float(const std::string& name, float def) const {
  auto it = values_.find(name);
  if (it == values_.end()) return def;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  const float* v = typed<float>(values_, name, "a float");
  return *v;
}

std::string Attributes::get_string(const std::string& name, const std::string& def) const {
  const std::string* v = typed<std::string>(values_, name, "a string");
  return v ? *v : def;
}

std::vector<int64_t> Attributes::get_ints(const std::string& name, std::vector<int64_t> def) const {
  const auto* v = typed<std::vector<int64_t>>(values_, name, "a list of integers");
  return v ? *v : def;
}

std::vector<float> Attributes::get_floats(const std::string& name, std::vector<float> def) const {
  const auto* v = typed<std::vector<float>>(values_, name, "a list of floats");
  return v ? *v : def;
}

std::vector<std::string> Attributes::get_strings(const std::string& name, std::vector<std::string> def) const {
  const auto* v = typed<std::vector<std::string>>(values_, name, "a list of strings");
  return v ? *v : def;
}

const Tensor* Attributes::get_tensor(const std::string& name) const { return typed<Tensor>(values_, name, "a tensor"); }

const std::string& Node::input(size_t i) const {
  static const std::string empty;
  return i < inputs.size() ? inputs[i] : empty;
}

std::string Node::describe() const {
  std::string d = op_type;
  if (!name.empty())
    d += " '" + name + "'";
  else if (!outputs.empty())
    d += " (output '" + outputs[0] + "')";
  return d;
}

const ValueInfo* Graph::find_input(const std::string& n) const {
  for (const auto& v : inputs)
    if (v.name == n) return &v;
  return nullptr;
}

std::string unique_name(const std::string& base, const std::map<std::string, ValueType>& taken) {
  if (!taken.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!taken.count(n)) return n;
  }
}

}  // namespace cbt
