// `cbtrain inspect MODEL.onnx [--plan]` and `cbtrain ops`.
#include <iostream>
#include <map>
#include <set>

#include "graph/bind.h"
#include "graph/op_schema.h"
#include "onnx_import/model_io.h"
#include "runtime/backend.h"
#include "runtime/trainer.h"
#include "tools/commands.h"

namespace cbt::cli {

namespace {
std::string dims_str(const ValueInfo& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ", ";
    s += v.dims[i].is_static() ? std::to_string(v.dims[i].value) : (v.dims[i].symbol.empty() ? "?" : v.dims[i].symbol);
  }
  return s + ")";
}

// "what (N nodes): Add×9 Conv×21 ..."
void print_op_counts(const char* what, const std::vector<Node>& nodes) {
  std::map<std::string, int> counts;
  for (const auto& n : nodes) counts[n.op_type]++;
  std::cout << what << " (" << nodes.size() << " nodes):";
  for (const auto& [op, c] : counts) std::cout << " " << op << "×" << c;
}
}  // namespace

int run_inspect(const InspectArgs& a) {
  ImportedModel m = load_model(a.model);
  const Graph& g = m.graph;
  std::cout << "model: " << a.model << "\n"
            << "producer: " << m.producer_name << " " << m.producer_version << ", opset " << g.opset << ", IR version "
            << m.ir_version << "\n";
  for (const auto& in : g.inputs)
    std::cout << "input:  " << in.name << " " << dtype_name(in.dtype) << " " << dims_str(in) << "\n";
  for (const auto& out : g.outputs)
    std::cout << "output: " << out.name << " " << dtype_name(out.dtype) << " " << dims_str(out) << "\n";
  print_op_counts("ops", g.nodes);
  std::cout << "\n";
  int64_t params = 0, tensors = 0;
  for (const auto& [name, t] : g.initializers)
    if (is_floating(t.dtype()) && !g.constant_initializers.count(name)) params += t.numel(), ++tensors;
  std::cout << "float initializers (parameters and statistics): " << tensors << " tensors, " << params << " values\n";
  if (!m.untied.empty())
    std::cout << "untied: " << m.untied.size()
              << " copies of tensors the exporter had merged (first: " << m.untied.front() << ")\n";
  if (m.folded_batch_norms > 0)
    std::cout << "folded by the exporter: " << m.folded_batch_norms
              << " BatchNorm layers (inside the convolutions; export with optimize=False to train them)\n";
  if (!m.exporter_made.empty())
    std::cout << "made by the exporter's optimiser (trained as parameters; export with optimize=False to train "
                 "PyTorch's own): "
              << m.exporter_made.size() << " tensors (first: " << m.exporter_made.front() << ")\n";
  auto missing = unsupported_ops(g, DeviceKind::CPU);
  if (missing.empty()) {
    std::cout << "support: every op is supported on cpu\n";
  } else {
    std::cout << "unsupported on cpu:";
    for (const auto& op : missing) std::cout << " " << op;
    std::cout << "\n";
  }
  if (a.plan) {
    TrainerOptions to;
    to.batch_size = a.batch_size;
    Trainer trainer(g, to);
    const MemoryPlan& p = trainer.training_program().plan();
    double saved = p.naive_bytes ? 100.0 * (1.0 - double(p.arena_bytes) / p.naive_bytes) : 0;
    std::cout << "memory plan of one training step at batch " << a.batch_size << ": " << p.offset.size()
              << " intermediate tensors, naive " << format_bytes(p.naive_bytes) << ", planned "
              << format_bytes(p.arena_bytes) << " (" << static_cast<int>(saved + 0.5) << "% saved)\n"
              << "parameters: " << trainer.num_parameters() << " values in one flat buffer\n";
    print_op_counts("training step", trainer.training_graph().graph.nodes);
    std::cout << "\n";
  }
  if (!missing.empty()) return 2;
  return 0;
}

int run_ops() {
  std::set<std::string> cpu, cuda;
  for (auto& [d, op] : kernels_for(DeviceKind::CPU))
    if (d.empty()) cpu.insert(op);
  for (auto& [d, op] : kernels_for(DeviceKind::CUDA))
    if (d.empty()) cuda.insert(op);
  std::map<std::string, std::string> rows;  // by op name
  for (const OpSchema* s : all_schemas()) {
    if (!s->domain.empty()) continue;
    rows[s->op_type] = std::string(cpu.count(s->op_type) ? "yes" : "no") + " | " +
                       (cuda.count(s->op_type) ? "yes" : "no") + " | " + (s->grad ? "gradient" : "no gradient") +
                       " | " + s->summary;
  }
  // Rewritten at binding into ops of this table (tests check that both devices have them).
  for (const auto& [op, summary] : binding_rewrite_summaries()) rows[op] = "yes | yes | gradient | " + summary;
  std::cout << "| op | cpu | cuda | training | summary |\n|---|---|---|---|---|\n";
  for (const auto& [op, row] : rows) std::cout << "| " << op << " | " << row << " |\n";
  return 0;
}

}  // namespace cbt::cli
