// Gives layers their own parameters where an exporter merged equal ones. PyTorch's
// TorchScript exporter stores initializers of equal value once: in a freshly initialised
// network every BatchNorm of one width then shares one scale (all ones), one bias, one
// running mean and one running variance, and training would tie those layers together.
// Such sharing is never meant for normalisation parameters and statistics, nor for
// Conv/Gemm biases (a deliberately tied layer shares its weights, which stay shared).
#include <map>
#include <set>
#include <string>
#include <unordered_set>

#include "onnx_import/proto_model.h"

namespace cbt {
namespace {

// The inputs of `op` that hold per-layer parameters or statistics, from index `first` on.
int first_per_layer_input(const std::string& op) {
  if (op == "BatchNormalization" || op == "InstanceNormalization" || op == "LayerNormalization")
    return 1;
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm") return 2;
  return -1;
}

}  // namespace

std::vector<std::string> untie_layer_parameters(onnx::GraphProto& g) {
  std::map<std::string, int> initializer;  // name -> index in g.initializer
  for (int i = 0; i < g.initializer_size(); ++i) initializer.emplace(g.initializer(i).name(), i);
  std::unordered_set<std::string> taken;  // every name in the graph, for fresh ones
  for (const auto& t : g.initializer()) taken.insert(t.name());
  for (const auto& v : g.input()) taken.insert(v.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) taken.insert(o);
  std::map<std::string, int> listed_input;  // name -> index in g.input (copies are appended)
  for (int i = 0; i < g.input_size(); ++i) listed_input.emplace(g.input(i).name(), i);

  std::vector<std::string> notes;
  std::set<std::string> used;  // initializers some earlier node input already uses
  std::map<std::string, int> copies;
  for (int ni = 0; ni < g.node_size(); ++ni) {
    onnx::NodeProto& n = *g.mutable_node(ni);
    const int first = n.domain().empty() || n.domain() == "ai.onnx" ? first_per_layer_input(n.op_type()) : -1;
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string name = n.input(k);
      auto it = initializer.find(name);
      if (it == initializer.end()) continue;
      if (used.insert(name).second || first < 0 || k < first) continue;
      std::string fresh;
      do {
        fresh = name + ".untied" + std::to_string(++copies[name]);
      } while (!taken.insert(fresh).second);
      onnx::TensorProto copy = g.initializer(it->second);
      copy.set_name(fresh);
      *g.add_initializer() = std::move(copy);
      // Models that list initializers among the graph inputs (IR < 4) list the copy too.
      auto li = listed_input.find(name);
      if (li != listed_input.end()) {
        onnx::ValueInfoProto v = g.input(li->second);
        v.set_name(fresh);
        *g.add_input() = std::move(v);
      }
      notes.push_back(name + " -> " + fresh + " (" + n.op_type() +
                      (n.name().empty() ? "" : " '" + n.name() + "'") + ")");
      n.set_input(k, fresh);
    }
  }
  return notes;
}

}  // namespace cbt
