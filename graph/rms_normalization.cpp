// RMSNormalization as Mul, ReduceMean, Add, Sqrt, Div and Mul (rms_normalization.h).
#include "graph/rms_normalization.h"

#include <vector>

#include "graph/errors.h"

namespace cbt {

bool is_rms_normalization(const Node& n) { return n.domain.empty() && n.op_type == "RMSNormalization"; }

Expansion expand_rms_normalization(const Node& n, const std::map<std::string, ValueType>& types,
                                   const FreshName& fresh) {
  auto fail = [&n](const std::string& msg) { throw ModelError("node " + n.describe() + ": " + msg); };
  if (!n.has_input(0) || !n.has_input(1) || n.outputs.empty() || n.outputs[0].empty())
    fail("RMSNormalization takes X and scale and gives Y");
  const ValueType& x = types.at(n.inputs[0]);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
    fail(std::string("X must be float32 or float64, is ") + dtype_name(x.dtype));
  if (types.at(n.inputs[1]).dtype != x.dtype) fail("scale must have X's type");
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attrs.get_int("axis", -1);
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for X of rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);

  ExpansionWriter w(n.name.empty() ? n.outputs[0] : n.name, fresh);
  auto add = [&w](const std::string& op, std::vector<std::string> in, Attributes a = {}, const std::string& out = "") {
    return w.add(op, std::move(in), std::move(a), op, out);
  };
  Tensor eps = Tensor::from_f32({n.attrs.get_float("epsilon", 1e-5f)}, {});
  if (x.dtype == DType::Float64) eps = cast_float(eps, DType::Float64);
  Attributes keep;
  keep.set("keepdims", int64_t{1});
  const std::string& in = n.inputs[0];
  const std::string mean = add("ReduceMean", {add("Mul", {in, in}), w.ints(axes, "axes")}, keep);
  const std::string rms = add("Sqrt", {add("Add", {mean, w.constant(eps, "epsilon")})});
  add("Mul", {add("Div", {in, rms}), n.inputs[1]}, {}, n.outputs[0]);
  return std::move(w.ex);
}

std::pair<std::string, std::string> rms_normalization_op_summary() {
  return {"RMSNormalization",
          "root-mean-square norm over axis.. (epsilon, scale; in X's type): Mul, ReduceMean, Add, Sqrt, Div, Mul at "
          "binding"};
}

}  // namespace cbt
