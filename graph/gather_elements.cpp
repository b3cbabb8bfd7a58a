// GatherElements as a one-hot selection (gather_elements.h).
#include "graph/gather_elements.h"

#include <vector>

#include "graph/errors.h"
#include "graph/one_hot.h"

namespace cbt {

bool is_gather_elements(const Node& n) { return n.domain.empty() && n.op_type == "GatherElements"; }

Expansion expand_gather_elements(const Node& n, const std::map<std::string, ValueType>& types, int64_t opset,
                                 const FreshName& fresh) {
  auto fail = [&n](const std::string& msg) { throw ModelError("node " + n.describe() + ": " + msg); };
  if (n.inputs.size() != 2 || !n.has_input(0) || !n.has_input(1) || n.outputs.empty() || n.outputs[0].empty())
    fail("GatherElements takes data and indices and gives one output");
  const ValueType& data = types.at(n.inputs[0]);
  const ValueType& indices = types.at(n.inputs[1]);
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0 || static_cast<int64_t>(indices.shape.size()) != rank)
    fail("data " + shape_str(data.shape) + " and indices " + shape_str(indices.shape) + " must have one rank (>= 1)");
  if (indices.dtype != DType::Int64 && indices.dtype != DType::Int32) fail("indices must be int64 or int32");
  int64_t axis = n.attrs.get_int("axis", 0);
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  const int64_t depth = data.shape[static_cast<size_t>(axis)];

  ExpansionWriter w(n.name.empty() ? n.outputs[0] : n.name, fresh);
  auto add = [&w](const std::string& op, std::vector<std::string> in, Attributes a = {}, const std::string& out = "") {
    return w.add(op, std::move(in), std::move(a), op, out);
  };
  // The data cut to the indices' extent along every other axis.
  std::string x = n.inputs[0];
  std::vector<int64_t> starts, ends, axes;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) continue;
    const int64_t want = indices.shape[static_cast<size_t>(d)], have = data.shape[static_cast<size_t>(d)];
    if (want > have)
      fail("indices " + shape_str(indices.shape) + " exceed data " + shape_str(data.shape) + " along axis " +
           std::to_string(d));
    if (want < have) starts.push_back(0), ends.push_back(want), axes.push_back(d);
  }
  if (!axes.empty()) {
    if (opset >= 10) {
      x = add("Slice", {x, w.ints(starts, "starts"), w.ints(ends, "ends"), w.ints(axes, "axes")});
    } else {
      Attributes a;
      a.set("starts", starts);
      a.set("ends", ends);
      a.set("axes", axes);
      x = add("Slice", {x}, a);
    }
  }
  // The one-hot mask of the indices along a new axis after `axis`; the data with a 1 at `axis`
  // broadcast against it.
  const std::string hot = write_one_hot_mask(w, n.inputs[1], indices, depth, axis + 1);
  Shape data_shape = indices.shape;
  data_shape[static_cast<size_t>(axis)] = depth;
  data_shape.insert(data_shape.begin() + axis, 1);
  Tensor zero(data.dtype, Shape{});
  const std::string picked =
      add("Where", {hot, add("Reshape", {x, w.ints(data_shape, "data_shape")}), w.constant(zero, "zero_value")});
  w.reduce_sum(picked, {axis + 1}, opset, n.outputs[0]);
  return std::move(w.ex);
}

std::pair<std::string, std::string> gather_elements_op_summary() {
  return {"GatherElements",
          "elements of data along axis at indices (negative from the end): a one-hot selection at binding "
          "(memory: the output times the axis' size)"};
}

}  // namespace cbt
