// The reductions of ScatterElements and ScatterND (ONNX's `reduction`): their names, the opset
// that brought each, and which backward reads a tally; shared by the schemas and the kernels
// (ops/scatter_reduction.h), one truth for the names.
#pragma once
#include <cstdint>
#include <string>

#include "graph/errors.h"
#include "graph/ir.h"

namespace cbt {

enum class ScatterReduction : uint8_t { None, Add, Mul, Max, Min };

// The reduction named by ONNX's attribute value and the opset that brought it (add and mul 16,
// max and min 18), or false (an unknown name).
inline bool parse_scatter_reduction(const std::string& name, ScatterReduction& r, int64_t* since = nullptr) {
  struct Named {
    const char* name;
    ScatterReduction r;
    int64_t since;
  };
  static constexpr Named kNames[] = {{"none", ScatterReduction::None, 0},
                                     {"add", ScatterReduction::Add, 16},
                                     {"mul", ScatterReduction::Mul, 16},
                                     {"max", ScatterReduction::Max, 18},
                                     {"min", ScatterReduction::Min, 18}};
  for (const auto& n : kNames)
    if (name == n.name) {
      r = n.r;
      if (since) *since = n.since;
      return true;
    }
  return false;
}

// A scatter node's reduction (its schema refused any other name: another is a bug).
inline ScatterReduction scatter_reduction_of(const Node& node) {
  const std::string name = node.attrs.get_string("reduction", "none");
  ScatterReduction r = ScatterReduction::None;
  CBT_CHECK(parse_scatter_reduction(name, r), "node ", node.describe(), ": unknown reduction ", name);
  return r;
}

// Whether the backward needs a tally (mul, max, min) or only dY at the targets (none, add).
constexpr bool needs_tally(ScatterReduction r) { return r >= ScatterReduction::Mul; }

}  // namespace cbt
