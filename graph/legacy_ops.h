// Ops of old opsets rewritten into the current form of the same op at load, so that one
// schema and one kernel serve both (the written model keeps the original nodes).
#pragma once
#include "graph/ir.h"

namespace cbt {

// Upsample (opsets 7 to 9; its scales an attribute before 9, input 1 from 9) and Resize of
// opset 10 (X, scales) become Resize (X, "", scales) with coordinate_transformation_mode
// asymmetric and, for nearest, nearest_mode "simple": the floor of the source coordinate when
// enlarging, its ceiling when shrinking, as those opsets sample. Upsample-7's scales become a
// constant initializer. Throws ModelError naming the node when its mode or scales are not
// ones these opsets define.
void upgrade_legacy_ops(Graph& g);

}  // namespace cbt
