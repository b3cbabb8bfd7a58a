// The training graph: the bound inference graph in training form, a loss on the chosen
// output, and backward nodes generated from the gradient-rule table.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/bind.h"

namespace cbt {

enum class LossKind { CrossEntropy, MeanSquaredError, BinaryCrossEntropy };

struct TrainingGraphOptions {
  std::string output;  // model output to train; "" = the first output
  LossKind loss = LossKind::CrossEntropy;
  float label_smoothing = 0.0f;
  // Initializers never trained: they become constants of the training graph (no gradient,
  // no update, not averaged), so they keep exactly their values. Tensors that a node
  // updates in place (BatchNorm running statistics) stay buffers.
  std::set<std::string> frozen;
  // Fuse a BatchNorm, Gemm or Conv and the Relu after it into one node, forward and backward,
  // and the softmax cross-entropy with its gradient (graph/fusion.h).
  bool fuse = true;
  // With `fuse`, also the fusions that pay with the GPU's kernels: SiLU as one Silu, a Linear
  // layer's MatMul and bias Add as one Gemm, the erf form of GELU as one Gelu and attention's
  // core as one SoftmaxAttention (graph/fusion.h). On the CPU the nodes
  // run faster apart (OpenBLAS's products; 0.55x ViT's CPU step fused): the Trainer sets it
  // where every learner is on a GPU.
  bool gpu_fusions = false;
  // --precision bf16: the convolutions, BatchNorms, residual Adds and ReluGrads in bfloat16,
  // channels-last (graph/channels_last.h). GPUs only: the Trainer refuses it elsewhere.
  bool bf16_channels_last = false;
};

struct TrainingGraph {
  Graph graph;  // forward (training form) + loss + backward
  std::map<std::string, ValueType> types;
  std::string data_input;                    // the model's data input
  std::string labels_input;                  // added graph input with the targets
  std::string loss;                          // scalar loss value
  std::string prediction;                    // value compared with labels for accuracy
  std::vector<std::string> params;           // trainable initializers (sorted by name)
  std::map<std::string, std::string> grads;  // param -> its gradient value
  std::vector<std::string> buffers;          // non-trainable float state (BatchNorm statistics)
  std::vector<std::string> frozen;           // parameters held constant (TrainingGraphOptions::frozen)
};

// Throws ModelError listing every op on the gradient path that has no gradient rule.
TrainingGraph build_training_graph(const BoundGraph& bound, const TrainingGraphOptions& opt);

// Float initializers that a run keeps and exports: everything but constants.
std::vector<std::string> state_initializers(const Graph& g);

}  // namespace cbt
