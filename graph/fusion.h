// Peephole fusions of the training step's forward nodes that keep its arithmetic; each turns
// a pair of nodes into one, saving a pass over an activation and the tensor between them.
// The gradient rules of the fused nodes emit correspondingly fused backward nodes.
#pragma once
#include <map>
#include <set>
#include <string>

#include "graph/ir.h"
#include "graph/op_schema.h"

namespace cbt {

// BatchNormTraining followed by Relu becomes BatchNormTraining with relu=1
// (Y = max(BN(X), 0)), wherever the normalised value feeds nothing but that Relu and is not
// in `exposed` (values the caller reads). Its gradient is BatchNormGrad with relu=1.
// Returns the number of pairs fused.
int fuse_batch_norm_relu(Graph& g, std::map<std::string, ValueType>& types,
                         const std::set<std::string>& exposed);

}  // namespace cbt
