// Program construction (planning, binding) and execution.
#include "runtime/program.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "graph/bind.h"
#include "graph/op_schema.h"
#include "ops/start_costs.h"

namespace cbt {

Program::Program(ProgramSpec spec, Backend& backend)
    : nodes_(std::move(spec.nodes)), backend_(backend), training_(spec.training) {
  use_graph_ = spec.use_graph;
  for (const Node& n : nodes_)
    if (n.op_type == "Dropout" || n.op_type.rfind("Random", 0) == 0) use_graph_ = false;
  std::set<std::string> external;
  for (const auto& [name, t] : spec.external) {
    CBT_CHECK(t.device() == backend.device(), "value ", name, " is on ", t.device().str());
    values_[name] = t;
    external.insert(name);
  }
  for (const auto& [name, t] : spec.constants) {
    if (values_.count(name)) continue;
    values_[name] = backend.upload(t);
    external.insert(name);
  }
  plan_ = plan_memory(nodes_, spec.types, external, spec.keep_alive);
  arena_ = backend.allocate(plan_.arena_bytes);
  for (const auto& [name, off] : plan_.offset) {
    const ValueType& t = spec.types.at(name);
    values_[name] = Tensor::view(t.dtype, t.shape, arena_.get() + off, backend.device(), arena_);
  }
  // View ops' outputs share their input's bytes (their copy kernels then copy nothing).
  for (const auto& [name, of] : plan_.alias) {
    auto it = values_.find(of);
    CBT_CHECK(it != values_.end(), "value ", of, " has no storage for its view ", name);
    const ValueType& t = spec.types.at(name);
    values_[name] = Tensor::view(t.dtype, t.shape, it->second.data(), backend.device(), it->second.storage());
  }
  std::map<std::string, std::shared_ptr<std::shared_ptr<void>>> cache_of;  // by each output of a step
  for (const Node& n : nodes_) {
    Step s{&n, find_kernel(n.domain, n.op_type, backend.device().kind), {}, {}, nullptr};
    auto shared = cache_of.find(n.attrs.get_string(kStateOfAttr, ""));
    s.state = shared != cache_of.end() ? shared->second : std::make_shared<std::shared_ptr<void>>();
    for (const auto& out : n.outputs)
      if (!out.empty()) cache_of[out] = s.state;
    CBT_MODEL_CHECK(s.fn, "no ", backend.device().str(), " kernel for op ", n.op_type, " (node ", n.describe(), ")");
    for (const auto& in : n.inputs) {
      if (in.empty()) {
        s.inputs.emplace_back();
        continue;
      }
      auto it = values_.find(in);
      CBT_CHECK(it != values_.end(), "value ", in, " has no storage");
      s.inputs.push_back(it->second);
    }
    for (const auto& out : n.outputs) {
      auto it = out.empty() ? values_.end() : values_.find(out);
      s.outputs.push_back(it == values_.end() ? Tensor() : it->second);
    }
    steps_.push_back(std::move(s));
  }
}

void Program::run(uint64_t seed) {
  // The first run goes directly: kernels set up their caches (algorithm choice, constant
  // parameters read back to the host) there, which a capture must not contain.
  if (graph_) {
    backend_.replay(graph_);
  } else if (use_graph_ && runs_ >= 1 && backend_.begin_capture()) {
    try {
      StartCost cost("graph captures");
      run_steps(seed);
      graph_ = backend_.end_capture();
    } catch (const InternalError& e) {
      // A kernel that cannot be captured (it synchronises): end the capture and run the
      // steps directly from now on (CBT_LOG_CAPTURE=1 says which call refused).
      if (std::getenv("CBT_LOG_CAPTURE"))
        std::fprintf(stderr, "cbtrain: a CUDA graph capture failed, running the steps directly: %s\n", e.what());
      try {
        backend_.end_capture();
      } catch (const InternalError&) {
      }
      use_graph_ = false;
      run_steps(seed);
    }
    if (graph_) backend_.replay(graph_);
  } else if (runs_ == 0) {
    StartCost cost("first runs");  // the kernels' set-up, convolution searches included
    run_steps(seed);
  } else {
    run_steps(seed);
  }
  ++runs_;
}

void Program::run_steps(uint64_t seed) {
  void* ctx = backend_.kernel_context();
  // A first run with CBT_LOG_START=1 also says which ops' set-up took its time.
  const bool by_op = runs_ == 0 && log_start_costs();
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    KernelContext kc{*s.node, s.inputs, s.outputs, training_, rng_hash(seed, i), ctx, s.state.get()};
    if (by_op) {
      StartCost cost("first runs of " + s.node->op_type);
      s.fn(kc);
    } else {
      s.fn(kc);
    }
  }
}

const Tensor& Program::value(const std::string& name) const {
  auto it = values_.find(name);
  CBT_CHECK(it != values_.end(), "no value ", name);
  return it->second;
}

std::vector<std::string> unsupported_ops(const Graph& g, DeviceKind device) {
  std::set<std::string> missing;
  for (const Node& n : g.nodes) {
    std::string label = (n.domain.empty() ? "" : n.domain + ".") + n.op_type;
    if (rewritten_at_binding(n)) continue;  // into ops that every device has
    if (!find_schema(n.domain, n.op_type) || !find_kernel(n.domain, n.op_type, device)) missing.insert(label);
  }
  return {missing.begin(), missing.end()};
}

void check_supported(const Graph& g, Device device) {
  auto missing = unsupported_ops(g, device.kind);
  if (missing.empty()) return;
  std::string msg = "the model uses " + std::to_string(missing.size()) + " op(s) that cbtrain does not support on " +
                    device.str() + ":";
  for (const auto& m : missing) msg += " " + m;
  throw ModelError(msg + " (see `cbtrain ops` for the supported ones)");
}

}  // namespace cbt
