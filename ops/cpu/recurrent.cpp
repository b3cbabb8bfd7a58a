// LSTM, GRU, RNN and RecurrentGrad on the CPU, for the nodes kept whole (graph/bind.h's
// fused_recurrent; on the CPU itself they are unrolled when the graph is bound): the unrolled
// ops (graph/recurrent.h) run one by one, and RecurrentGrad's backward applies their gradient
// rules in reverse. The reference the CUDA backend's cuDNN kernels are tested against.
#include "graph/recurrent.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ops/eager.h"

namespace cbt::cpu {
namespace {

constexpr int64_t kOpset = 17;  // the form the unrolled nodes are written in

// Unrolls `node` over the values of its inputs in `e` and runs it there (opset kOpset).
Unrolled unroll_and_run(EagerEmitter& e, const Node& node) {
  std::map<std::string, ValueType> types;
  std::map<std::string, Tensor> consts;
  for (const auto& name : node.inputs)
    if (!name.empty()) types[name] = e.type(name);
  if (node.has_input(4)) consts[node.inputs[4]] = e.values.at(node.inputs[4]);
  Unrolled u = unroll_recurrent(node, types, consts, kOpset, [&e](const std::string& h) { return e.fresh(h); });
  for (auto& [name, t] : u.constants) e.values[name] = t;
  for (const Node& n : u.nodes) e.run(n);
  return u;
}

void copy_into(Tensor& dst, const Tensor& src) { std::memcpy(dst.data(), src.data(), src.nbytes()); }

void recurrent_forward(KernelContext& ctx) {
  EagerEmitter e({false, 0, kOpset});
  for (size_t i = 0; i < ctx.node.inputs.size(); ++i)
    if (ctx.has_in(i)) e.values[ctx.node.inputs[i]] = ctx.in(i);
  unroll_and_run(e, ctx.node);
  for (size_t i = 0; i < ctx.node.outputs.size(); ++i)
    if (ctx.has_out(i)) copy_into(ctx.out(i), e.values.at(ctx.node.outputs[i]));
}

// Adds b into a (float tensors of one shape).
void accumulate(Tensor& a, const Tensor& b) {
  dispatch_float(a.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < a.numel(); ++i) a.ptr<T>()[i] += b.ptr<T>()[i];
  });
}

// Inputs X, W, R, B, initial_h, initial_c, dY, dY_h, dY_c; outputs their gradients.
void recurrent_grad(KernelContext& ctx) {
  EagerEmitter e({false, 0, kOpset});
  Node fwd;
  fwd.op_type = ctx.node.attrs.get_string("cell", "");
  fwd.name = "forward";
  fwd.attrs = ctx.node.attrs;
  fwd.attrs.erase("cell");
  fwd.attrs.erase(kStateOfAttr);
  const char* names[] = {"X", "W", "R", "B", "", "h0", "c0"};
  const size_t from[] = {0, 1, 2, 3, 4, 4, 5};  // RecurrentGrad input of each forward input
  for (size_t i = 0; i < 7; ++i) {
    const bool present = i != 4 && ctx.has_in(from[i]);
    fwd.inputs.push_back(present ? names[i] : "");
    if (present) e.values[names[i]] = ctx.in(from[i]);
  }
  fwd.outputs = {"Y", "Y_h"};
  if (fwd.op_type == "LSTM") fwd.outputs.push_back("Y_c");
  Unrolled u = unroll_and_run(e, fwd);

  std::map<std::string, Tensor> grads;  // of the values a gradient reached
  for (size_t k = 0; k < fwd.outputs.size(); ++k)
    if (ctx.has_in(6 + k)) grads[fwd.outputs[k]] = ctx.in(6 + k).clone();
  for (auto it = u.nodes.rbegin(); it != u.nodes.rend(); ++it) {
    const Node& n = *it;
    std::vector<std::string> dy;
    bool any = false;
    for (const auto& out : n.outputs) {
      auto g = grads.find(out);
      dy.push_back(g == grads.end() ? "" : e.fresh("dY"));
      if (g != grads.end()) e.values[dy.back()] = g->second, any = true;
    }
    if (!any) continue;
    const OpSchema* s = find_schema(n.domain, n.op_type);
    CBT_CHECK(s && s->grad, "no gradient rule for unrolled ", n.op_type);
    std::vector<bool> wants(n.inputs.size(), false);
    for (int i : s->diff_inputs)
      if (static_cast<size_t>(i) < n.inputs.size() && n.has_input(i)) wants[i] = is_floating(e.type(n.inputs[i]).dtype);
    GradContext gc{n, dy, wants, e};
    const std::vector<std::string> dx = s->grad(gc);
    for (size_t i = 0; i < dx.size() && i < n.inputs.size(); ++i) {
      if (dx[i].empty()) continue;
      auto g = grads.find(n.inputs[i]);
      if (g == grads.end())
        grads[n.inputs[i]] = e.values.at(dx[i]).clone();
      else
        accumulate(g->second, e.values.at(dx[i]));
    }
  }
  for (size_t k = 0; k < 6; ++k) {
    if (!ctx.has_out(k)) continue;
    const std::string& name = fwd.inputs[k < 4 ? k : k + 1];
    auto g = name.empty() ? grads.end() : grads.find(name);
    if (g == grads.end())
      std::memset(ctx.out(k).data(), 0, ctx.out(k).nbytes());
    else
      copy_into(ctx.out(k), g->second);
  }
}

}  // namespace

CBT_REGISTER_KERNEL("", "LSTM", DeviceKind::CPU, recurrent_forward);
CBT_REGISTER_KERNEL("", "GRU", DeviceKind::CPU, recurrent_forward);
CBT_REGISTER_KERNEL("", "RNN", DeviceKind::CPU, recurrent_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "RecurrentGrad", DeviceKind::CPU, recurrent_grad);

}  // namespace cbt::cpu
