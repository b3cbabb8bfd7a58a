// --precision bf16 on GPUs: the convolutions, BatchNorms, residual Adds and ReluGrads of the
// training step run in bfloat16 with their activations stored channels-last, (N, H, W, C), the
// layout in which cuDNN's bfloat16 convolutions run on tensor cores. The parameters, their
// gradients, the BatchNorm statistics and everything outside the region stay float32.
#pragma once
#include <map>
#include <set>
#include <string>

#include "graph/ir.h"

namespace cbt {

// The attribute of a Conv, ConvGrad, BatchNormTraining or BatchNormGrad whose 4-D tensors are
// bfloat16 stored channels-last (logical shapes unchanged: (N, C, H, W) stored (N, H, W, C), a
// filter (M, C, KH, KW) stored (M, KH, KW, C)).
inline constexpr const char* kChannelsLastAttr = "channels_last";

struct ChannelsLastCounts {
  int nodes = 0;        // nodes that run in bfloat16
  int conversions = 0;  // ToChannelsLast and FromChannelsLast nodes added
};

// Rewrites the whole training step (forward, loss and backward nodes), after the fusions.
// Which nodes run in bfloat16: 2-D Convs without a bias or a fused Relu, padded alike on both
// sides of each axis, of multiples of 8 channels in and out, and their ConvGrads,
// BatchNormTrainings of 4-D inputs and their BatchNormGrads, and the Adds and ReluGrads of
// float32 tensors of one 4-D shape of which at least one input comes from such a node. Their
// 4-D values become bfloat16 (renamed); where a float32 value meets them a ToChannelsLast is
// added before its first reader (a float32 convolution's output, the filters, the pooling's
// gradient), and where one of theirs is read as float32 or is in `exposed` (a parameter's
// gradient, the pooling's input) a FromChannelsLast writes it back under its own name. The
// initializers (the filters) are converted by one node before the first of their readers, and
// the values nothing in the step reads (their gradients) by one node at its end. Returns the
// counts.
ChannelsLastCounts to_channels_last_bf16(Graph& g, std::map<std::string, ValueType>& types,
                                         const std::set<std::string>& exposed);

}  // namespace cbt
