// Rewrites Upsample and opset-10 Resize into Resize's current form (legacy_ops.h).
#include "graph/legacy_ops.h"

#include <string>
#include <vector>

#include "graph/errors.h"
#include "graph/ops/resize_params.h"

namespace cbt {

void upgrade_legacy_ops(Graph& g) {
  for (Node& n : g.nodes) {
    if (!n.domain.empty()) continue;
    const bool upsample = n.op_type == "Upsample";
    if (!upsample && !(n.op_type == "Resize" && g.opset < 11)) continue;
    CBT_MODEL_CHECK(n.has_input(0), "node ", n.describe(), ": input 0 (X) is required");
    try {  // Resize's own check of the mode, naming the node before it is renamed
      parse_resize_mode(n.attrs);
    } catch (const ModelError& e) {
      throw ModelError("node " + n.describe() + ": " + e.what());
    }
    std::string scales = n.input(1);
    if (upsample && g.opset < 9) {
      CBT_MODEL_CHECK(n.attrs.has("scales"), "node ", n.describe(), ": Upsample before opset 9 needs attribute scales");
      const std::vector<float> v = n.attrs.get_floats("scales");
      scales = (n.name.empty() ? "upsample" : n.name) + "_scales";
      while (g.initializers.count(scales)) scales += "_";
      g.initializers.emplace(scales, Tensor::from_f32(v, {static_cast<int64_t>(v.size())}));
      g.constant_initializers.insert(scales);
      n.attrs.erase("scales");
    }
    CBT_MODEL_CHECK(!scales.empty(), "node ", n.describe(), ": input 1 (scales) is required");
    n.op_type = "Resize";
    n.inputs = {n.inputs.at(0), "", scales};
    n.attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
    n.attrs.set("nearest_mode", std::string("simple"));
  }
}

}  // namespace cbt
