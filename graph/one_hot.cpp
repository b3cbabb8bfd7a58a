// OneHot as Cast, Less, Add, Where, Reshape, Equal and Where (one_hot.h).
#include "graph/one_hot.h"

#include <vector>

#include "graph/errors.h"

namespace cbt {

bool is_one_hot(const Node& n) { return n.domain.empty() && n.op_type == "OneHot"; }

std::string write_one_hot_mask(ExpansionWriter& w, const std::string& indices, const ValueType& type, int64_t depth,
                               int64_t axis) {
  auto add = [&w](const std::string& op, std::vector<std::string> in, Attributes a = {}) {
    return w.add(op, std::move(in), std::move(a), op);
  };
  // Indices as int64 (floats truncated), negative ones counted from depth.
  std::string idx = indices;
  if (type.dtype != DType::Int64) {
    Attributes to;
    to.set("to", int64_t{7});  // TensorProto.INT64
    idx = add("Cast", {idx}, to);
  }
  idx = add("Where", {add("Less", {idx, w.constant(Tensor::from_i64({0}, {}), "zero")}),
                      add("Add", {idx, w.constant(Tensor::from_i64({depth}, {}), "depth")}), idx});
  // The indices with a dim of 1 at `axis`, against 0..depth-1 along it.
  const auto rank = static_cast<int64_t>(type.shape.size());
  Shape with_axis = type.shape, range_shape(static_cast<size_t>(rank + 1), 1);
  with_axis.insert(with_axis.begin() + axis, 1);
  range_shape[static_cast<size_t>(axis)] = depth;
  std::vector<int64_t> range(static_cast<size_t>(depth));
  for (int64_t k = 0; k < depth; ++k) range[static_cast<size_t>(k)] = k;
  return add("Equal", {add("Reshape", {idx, w.ints(with_axis, "shape")}),
                       w.constant(Tensor::from_i64(range, range_shape), "range")});
}

Expansion expand_one_hot(const Node& n, const std::map<std::string, ValueType>& types, const ConstantOf& constant_of,
                         const FreshName& fresh) {
  auto fail = [&n](const std::string& msg) { throw ModelError("node " + n.describe() + ": " + msg); };
  if (n.inputs.size() != 3 || !n.has_input(0) || !n.has_input(1) || !n.has_input(2) || n.outputs.empty())
    fail("OneHot takes indices, depth and values and gives one output");
  const ValueType& indices = types.at(n.inputs[0]);
  const ValueType& values = types.at(n.inputs[2]);
  const Tensor* depth_value = constant_of(n.inputs[1]);
  if (!depth_value || depth_value->numel() != 1)
    fail("depth must be a constant of one value (cbtrain needs the output's shape when it binds the graph)");
  const int64_t depth = static_cast<int64_t>(depth_value->at_f64(0));
  if (depth <= 0) fail("depth must be positive, is " + std::to_string(depth));
  if (values.shape.size() != 1 || values.shape[0] != 2) fail("values must hold two values: off and on");
  const auto rank = static_cast<int64_t>(indices.shape.size());
  int64_t axis = n.attrs.get_int("axis", -1);
  if (axis < -rank - 1 || axis > rank) fail("axis " + std::to_string(axis) + " is out of range for the output");
  if (axis < 0) axis += rank + 1;

  ExpansionWriter w(n.name.empty() ? n.outputs[0] : n.name, fresh);
  auto add = [&w](const std::string& op, std::vector<std::string> in, Attributes a = {}, const std::string& out = "") {
    return w.add(op, std::move(in), std::move(a), op, out);
  };
  auto constant = [&w](Tensor t, const std::string& hint) { return w.constant(std::move(t), hint); };
  const std::string hot = write_one_hot_mask(w, n.inputs[0], indices, depth, axis);
  Attributes a0, a1;
  a0.set("axis", int64_t{0});
  a1.set("axis", int64_t{0});
  const std::string off = add("Gather", {n.inputs[2], constant(Tensor::from_i64({0}, {}), "off")}, a0);
  const std::string on = add("Gather", {n.inputs[2], constant(Tensor::from_i64({1}, {}), "on")}, a1);
  add("Where", {hot, on, off}, {}, n.outputs[0]);
  return std::move(w.ex);
}

std::pair<std::string, std::string> one_hot_op_summary() {
  return {"OneHot",
          "one-hot along axis (negative indices from the end, constant depth, off/on values): Equal against a "
          "range and Where at binding"};
}

}  // namespace cbt
