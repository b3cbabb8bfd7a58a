// Gives layers their own parameters where an exporter merged equal ones. PyTorch's
// TorchScript exporter stores initializers of equal value once: in a freshly initialised
// network every BatchNorm of one width then shares one scale (all ones), one bias, one
// running mean and one running variance, and training would tie those layers together.
// Such sharing is never meant for normalisation parameters and statistics, nor for
// Conv/Gemm biases (a deliberately tied layer shares its weights, which stay shared).
// The exporter writes the sharing in two forms: several nodes name one initializer, or
// Identity nodes copy one initializer into each layer's input (then a layer's running
// variance may be an Identity of another layer's scale: both are all ones). Both get a copy
// per layer; an Identity's copy takes the Identity's output name (the layer's own name).
#include <map>
#include <set>
#include <string>
#include <unordered_set>

#include "onnx_import/proto_model.h"

namespace cbt {
namespace {

// The inputs of `op` that hold per-layer parameters or statistics, from index `first` on.
int first_per_layer_input(const std::string& op) {
  if (op == "BatchNormalization" || op == "InstanceNormalization" || op == "GroupNormalization" ||
      op == "LayerNormalization")
    return 1;
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm") return 2;
  return -1;
}

int per_layer_from(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx" ? first_per_layer_input(n.op_type()) : -1;
}

// Appends a copy of initializer `src` named `name`; a model that lists initializers among the
// graph inputs (IR < 4) lists the copy too.
void add_copy(onnx::GraphProto& g, int src, const std::string& name, const std::map<std::string, int>& listed_input) {
  onnx::TensorProto copy = g.initializer(src);
  const std::string from = copy.name();
  copy.set_name(name);
  *g.add_initializer() = std::move(copy);
  auto li = listed_input.find(from);
  if (li != listed_input.end()) {
    onnx::ValueInfoProto v = g.input(li->second);
    v.set_name(name);
    *g.add_input() = std::move(v);
  }
}

// Identity(initializer) nodes whose output only feeds per-layer inputs become initializers of
// their own under the output's name. Initializers that only such nodes read are dropped.
void materialize_identities(onnx::GraphProto& g, std::vector<std::string>& notes) {
  std::map<std::string, int> initializer;
  for (int i = 0; i < g.initializer_size(); ++i) initializer.emplace(g.initializer(i).name(), i);
  std::map<std::string, int> listed_input;
  for (int i = 0; i < g.input_size(); ++i) listed_input.emplace(g.input(i).name(), i);
  std::set<std::string> graph_outputs;
  for (const auto& v : g.output()) graph_outputs.insert(v.name());
  // Whether every use of a value is a per-layer input.
  std::map<std::string, bool> per_layer_only;
  for (const auto& n : g.node()) {
    const int first = per_layer_from(n);
    for (int k = 0; k < n.input_size(); ++k) {
      auto it = per_layer_only.emplace(n.input(k), true).first;
      it->second = it->second && first >= 0 && k >= first;
    }
  }
  std::set<int> removed;
  std::set<std::string> sources;
  for (int ni = 0; ni < g.node_size(); ++ni) {
    const onnx::NodeProto& n = g.node(ni);
    if (n.op_type() != "Identity" || !(n.domain().empty() || n.domain() == "ai.onnx") || n.input_size() != 1 ||
        n.output_size() != 1)
      continue;
    auto src = initializer.find(n.input(0));
    const std::string& out = n.output(0);
    auto use = per_layer_only.find(out);
    if (src == initializer.end() || graph_outputs.count(out) || initializer.count(out) || use == per_layer_only.end() ||
        !use->second)
      continue;
    add_copy(g, src->second, out, listed_input);
    notes.push_back(n.input(0) + " -> " + out + " (Identity" + (n.name().empty() ? "" : " '" + n.name() + "'") + ")");
    removed.insert(ni);
    sources.insert(n.input(0));
  }
  if (removed.empty()) return;
  auto* nodes = g.mutable_node();
  for (auto it = removed.rbegin(); it != removed.rend(); ++it) nodes->DeleteSubrange(*it, 1);
  // A source that nothing reads any more (nor lists as an output) goes.
  std::set<std::string> read;
  for (const auto& n : g.node())
    for (const auto& i : n.input()) read.insert(i);
  for (const auto& v : g.output()) read.insert(v.name());
  auto unread = [&](const std::string& name) { return sources.count(name) && !read.count(name); };
  auto* inits = g.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i)
    if (unread(inits->Get(i).name())) inits->DeleteSubrange(i, 1);
  auto* inputs = g.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i)
    if (unread(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
}

}  // namespace

std::vector<std::string> untie_layer_parameters(onnx::GraphProto& g) {
  std::vector<std::string> notes;
  materialize_identities(g, notes);
  std::map<std::string, int> initializer;  // name -> index in g.initializer
  for (int i = 0; i < g.initializer_size(); ++i) initializer.emplace(g.initializer(i).name(), i);
  std::unordered_set<std::string> taken;  // every name in the graph, for fresh ones
  for (const auto& t : g.initializer()) taken.insert(t.name());
  for (const auto& v : g.input()) taken.insert(v.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) taken.insert(o);
  std::map<std::string, int> listed_input;  // name -> index in g.input (copies are appended)
  for (int i = 0; i < g.input_size(); ++i) listed_input.emplace(g.input(i).name(), i);

  std::set<std::string> used;  // initializers some earlier node input already uses
  std::map<std::string, int> copies;
  for (int ni = 0; ni < g.node_size(); ++ni) {
    onnx::NodeProto& n = *g.mutable_node(ni);
    const int first = per_layer_from(n);
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string name = n.input(k);
      auto it = initializer.find(name);
      if (it == initializer.end()) continue;
      if (used.insert(name).second || first < 0 || k < first) continue;
      std::string fresh;
      do {
        fresh = name + ".untied" + std::to_string(++copies[name]);
      } while (!taken.insert(fresh).second);
      add_copy(g, it->second, fresh, listed_input);
      notes.push_back(name + " -> " + fresh + " (" + n.op_type() + (n.name().empty() ? "" : " '" + n.name() + "'") +
                      ")");
      n.set_input(k, fresh);
    }
  }
  return notes;
}

}  // namespace cbt
