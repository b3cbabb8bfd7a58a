// Peephole fusions of the training step's nodes. fuse_relu, fuse_gradient_sum_relu and
// fuse_loss_gradient keep its arithmetic: each turns a pair of nodes into one, saving a pass
// over an activation and the tensor between them. fuse_silu, fuse_gelu, fuse_rms_norm and
// fuse_attention turn chains of nodes into one node with a kernel of its own, and fuse_linear
// (graph/layout_fusion.h) a MatMul and its bias Add into one Gemm, the same up to rounding. The training graph makes
// SiLU's, the Linear layers', GELU's and attention's where every learner is on a GPU
// (TrainingGraphOptions::gpu_fusions): on the CPU their kernels lose to the nodes' (SiLU's
// gradient recomputes the sigmoid, a scalar exp an element: EfficientNet's CPU step fused ran
// at 0.77×) or gain nothing (the Linear layers': ViT's and Swin's CPU steps within 2%).
// RMSNorm's is faster on the CPU too. The gradient rules of the fused nodes emit
// correspondingly fused backward nodes.
#pragma once
#include <map>
#include <set>
#include <string>

#include "graph/ir.h"
#include "graph/op_schema.h"

namespace cbt {

// A node followed by a Relu becomes one node with relu=1 (Y = max(node's result, 0)) wherever
// its result feeds nothing but that Relu and is not in `exposed` (values the caller reads).
// The nodes that take relu=1: BatchNormTraining (its gradient BatchNormGrad relu=1), Gemm and
// Conv (GemmGrad / ConvGrad relu=1); every gradient of a fused node takes the fused output Y
// as an extra input and counts dY where Y > 0, as ReluGrad does. An Add of two float tensors
// of its output's shape (a residual connection) takes relu=1 too; its gradient is the Relu's
// ReluGrad on Y. Returns the pairs fused.
int fuse_relu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

// GELU written out as exporters before opset 20 write it, X * 0.5 * (1 + Erf(X / sqrt 2)),
// becomes one Gelu node (approximate none; its gradient one GeluGrad) wherever the chain's
// values feed nothing but the chain and are not in `exposed`. The chain is matched as
// Div(X, sqrt 2) or Mul(X, 1/sqrt 2), Erf, Add 1, and the product of X, that sum and 0.5 in
// any of the three orders of two Muls (operands either way round); the constants are float
// scalars of the graph's constant initializers, within 1e-6 of their values. Five forward
// nodes and their gradients become two kernels; the arithmetic differs by rounding only.
// Returns the chains fused.
int fuse_gelu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

// SiLU (swish) as exporters write it, Mul(X, Sigmoid(X)) with the operands either way round,
// becomes one Silu node (cbtrain's domain; its gradient one SiluGrad) wherever the Sigmoid's
// output feeds nothing but that Mul and is not in `exposed`, and the product has X's type. The
// forward computes what the two nodes do bit for bit; the gradient, one node instead of four
// that recomputes the sigmoid, differs by rounding. Returns the pairs fused.
int fuse_silu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

// The root-mean-square norm written out as exporters write it (PyTorch's RMSNorm, and cbtrain's
// own rewrite of RMSNormalization at binding), X * Reciprocal(Sqrt(ReduceMean(X^2) + eps)) or
// X / Sqrt(...), X^2 a Pow by 2.0 or X * X, the mean over the trailing dims with kept dims, eps
// a float scalar constant, and then, where it follows, a Mul by a scale of one value a
// normalised column, becomes one RMSNorm node (cbtrain's domain: X, scale? -> Y, InvRms; its
// gradient one RMSNormGrad) wherever the chain's values feed nothing but the chain and are not
// in `exposed`. Six forward nodes and about ten backward ones become two kernels, the
// LayerNormalization ones without the mean (ops/norm_rows.h's RowNormForm); the arithmetic
// differs by rounding (the rows' sums in double). Returns the chains fused.
int fuse_rms_norm(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

// The core of attention as exporters write it, MatMul(X, Y), optionally an Add of a mask or
// bias B (or two such Adds, B1 then B2: B is then an Add of B1 and B2 made in the second's
// place), Softmax over the last axis and MatMul(that, V), becomes one SoftmaxAttention node
// (graph/softmax_attention.h; its gradient one SoftmaxAttentionGrad, and B's gradient, where
// one is wanted, the scores' summed to B's shape) wherever the scores, their sums with B and the
// probabilities feed nothing but the chain and are not in `exposed`, X, Y and V are float and
// share their leading dims (no broadcasting), B broadcasts to the scores without changing their
// shape, and one matrix's working set fits kAttentionMaxFloats. Returns the chains fused.
int fuse_attention(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

// Whether `n` is an op that fuse_relu folds a following Relu into (an Add only where its
// operands have its output's type, which `types` tells).
bool takes_fused_relu(const Node& n, const std::map<std::string, ValueType>& types);

// A sum of two gradients (an Add of two float tensors of one shape) that feeds nothing but a
// ReluGrad becomes that ReluGrad's third input: ReluGrad(a, Y, b) = (a + b) where Y > 0, one
// pass instead of two. The sum of a residual block's two paths meets the Relu of the block
// before it this way. Run after the backward nodes are emitted. Returns the pairs fused.
int fuse_gradient_sum_relu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

// The softmax cross-entropy and its gradient as one node, when the gradient's dLoss is a
// constant (the loss's seed): SoftmaxCrossEntropy takes dLoss as a third input and writes
// dLogits as a third output, exactly as SoftmaxCrossEntropyGrad would, and the log-
// probabilities between them are no longer kept. When the logits are a Gemm's (beta 1, a bias
// of shape (C)) and that Gemm's gradient takes dLogits as they are, the node also writes the
// bias gradient (dLogits' column sums, as GemmGrad sums them) as a fourth output, and GemmGrad
// no longer computes it. Run after the backward nodes are emitted. Returns the pairs fused.
int fuse_loss_gradient(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

}  // namespace cbt
