// Initializers that an exporter writes for the inside of a PyTorch module it decomposes, which
// PyTorch keeps fixed: marked constant at load (Graph::constant_initializers) so that cbtrain
// trains what PyTorch trains. GroupNorm is exported as Reshape to (N, groups, -1),
// InstanceNormalization with a scale of ones and a bias of zeros (one a group), Reshape back,
// then the per-channel scale and shift; the dynamo exporter stores those ones and zeros as
// initializers (the TorchScript exporter as Constant nodes, constants already).
#pragma once
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

// Marks the scale and bias of every InstanceNormalization that sits between two Reshapes and
// whose scale is all ones and bias all zeros, where only such nodes read them. Returns their
// names.
std::vector<std::string> mark_decomposition_constants(Graph& g);

}  // namespace cbt
