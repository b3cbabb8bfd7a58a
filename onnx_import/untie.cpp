// Gives layers their own parameters where an exporter merged equal ones. PyTorch's
// TorchScript exporter stores initializers of equal value once (when it exports for inference):
// in a freshly initialised network every BatchNorm of one width then shares one scale (all ones),
// one bias, one running mean and one running variance, the layer scales of a ConvNeXt share one
// tensor, and the layers of an nn.TransformerEncoder, deep copies of one layer, share all their
// weights; training would tie those layers together. The dynamo exporter's optimiser merges
// equal initializers of up to 1024 values the same way (RMSNorm weights, LayerNorm scales).
// The TorchScript exporter writes the sharing in two forms: several nodes name one initializer,
// or Identity nodes copy one initializer into each layer's input (then a layer's running
// variance may be an Identity of another layer's scale: both are all ones). Every Identity of
// a float initializer gets a copy named after its output (the PyTorch parameter's name); where
// several nodes name one initializer, normalisation parameters and statistics and Conv/Gemm
// biases get a copy per layer (such sharing is never meant for them; a deliberately tied layer
// shares its weights, which stay shared), and in a dynamo export a node that read a parameter
// the file lacks (its metadata names it; the graph signature says it is a parameter) gets a copy
// of the kept one under the lost parameter's name. A parameter read at several places by design
// (a recurrence unrolled over its steps) is read under its own name there, and stays one.
#include <algorithm>
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

bool is_float(const onnx::TensorProto& t) {
  return t.data_type() == onnx::TensorProto::FLOAT || t.data_type() == onnx::TensorProto::DOUBLE ||
         t.data_type() == onnx::TensorProto::FLOAT16;
}

// Identity(float initializer) nodes become initializers of their own under the output's name.
// Initializers that only such nodes read are dropped.
void materialize_identities(onnx::GraphProto& g, std::vector<std::string>& notes) {
  std::map<std::string, int> initializer;
  for (int i = 0; i < g.initializer_size(); ++i) initializer.emplace(g.initializer(i).name(), i);
  std::map<std::string, int> listed_input;
  for (int i = 0; i < g.input_size(); ++i) listed_input.emplace(g.input(i).name(), i);
  std::set<std::string> graph_outputs;
  for (const auto& v : g.output()) graph_outputs.insert(v.name());
  std::set<int> removed;
  std::set<std::string> sources;
  for (int ni = 0; ni < g.node_size(); ++ni) {
    const onnx::NodeProto& n = g.node(ni);
    if (n.op_type() != "Identity" || !(n.domain().empty() || n.domain() == "ai.onnx") || n.input_size() != 1 ||
        n.output_size() != 1)
      continue;
    auto src = initializer.find(n.input(0));
    const std::string& out = n.output(0);
    if (src == initializer.end() || graph_outputs.count(out) || initializer.count(out) ||
        !is_float(g.initializer(src->second)) || g.initializer(src->second).dims_size() == 0)
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

Untied untie_layer_parameters(onnx::GraphProto& g, const TorchSignature& sig) {
  Untied untied;
  materialize_identities(g, untied.notes);
  std::map<std::string, int> initializer;  // name -> index in g.initializer
  for (int i = 0; i < g.initializer_size(); ++i) initializer.emplace(g.initializer(i).name(), i);
  std::unordered_set<std::string> taken;  // every name in the graph, for fresh ones
  for (const auto& t : g.initializer()) taken.insert(t.name());
  for (const auto& v : g.input()) taken.insert(v.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) taken.insert(o);
  std::map<std::string, int> listed_input;  // name -> index in g.input (copies are appended)
  for (int i = 0; i < g.input_size(); ++i) listed_input.emplace(g.input(i).name(), i);

  std::set<std::string> present;
  for (const auto& t : g.initializer()) present.insert(t.name());
  std::set<std::string> used;  // initializers some earlier node input already reads
  std::map<std::string, int> copies;
  // A copy under a fresh name stands for `name`; one under a name given (a lost parameter's,
  // restored) for itself.
  auto copy_of = [&](const std::string& name, int src, const onnx::NodeProto& n, std::string fresh = "") {
    const bool given = !fresh.empty();
    while (fresh.empty() || !taken.insert(fresh).second) fresh = name + ".untied" + std::to_string(++copies[name]);
    add_copy(g, src, fresh, listed_input);
    untied.notes.push_back(name + " -> " + fresh + " (" + n.op_type() +
                           (n.name().empty() ? "" : " '" + n.name() + "'") + ")");
    if (!given || fresh.rfind(name + ".untied", 0) == 0) untied.original_of[fresh] = name;
    return fresh;
  };
  std::map<std::string, std::string> restored;  // missing parameter -> its copy
  for (int ni = 0; ni < g.node_size(); ++ni) {
    onnx::NodeProto& n = *g.mutable_node(ni);
    const int first = per_layer_from(n);
    // Only where the file lacks parameters can a node have read one that was merged away.
    const std::vector<std::string> read =
        sig.missing_parameters > 0 ? parameters_read_by(n, sig) : std::vector<std::string>{};
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string name = n.input(k);
      auto it = initializer.find(name);
      if (it == initializer.end()) continue;
      const bool first_read = used.insert(name).second;
      // The exporter merged this node's parameter into `name`: the one parameter it read that the
      // file lacks and that ends as `name` does (weight, bias, ...).
      if (sig.parameters.count(name) && !read.empty() && std::find(read.begin(), read.end(), name) == read.end()) {
        std::vector<std::string> lost;
        const std::string last = name.substr(name.rfind('.') + 1);
        for (const auto& p : read)
          if (!present.count(p) && sig.parameters.count(p) && p.substr(p.rfind('.') + 1) == last) lost.push_back(p);
        if (lost.size() == 1) {
          auto r = restored.find(lost[0]);
          n.set_input(k, r != restored.end() ? r->second : restored[lost[0]] = copy_of(name, it->second, n, lost[0]));
          continue;
        }
      }
      if (!first_read && first >= 0 && k >= first)  // a layer's own parameter or statistic: one per input
        n.set_input(k, copy_of(name, it->second, n));
    }
  }
  return untied;
}

}  // namespace cbt
