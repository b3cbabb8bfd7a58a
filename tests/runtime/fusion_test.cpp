// Fusion (graph/fusion.h): BatchNorm, Gemm, Conv or a residual Add with the Relu after it as one
// node, a sum of two gradients with the ReluGrad after it, and the softmax cross-entropy with
// its gradient. The fused training step computes exactly what the
// unfused one does, with fewer nodes. The erf form of GELU as one Gelu node, the written-out
// RMSNorm as one RMSNorm node and attention's core as one SoftmaxAttention node: the same up to
// rounding.
#include "graph/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common/op_harness.h"
#include "common/paths.h"
#include "graph/layout_fusion.h"
#include "onnx_import/model_io.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

int count(const Graph& g, const std::string& op, bool relu_attr) {
  int n = 0;
  for (const Node& node : g.nodes)
    if (node.op_type == op && (!relu_attr || node.attrs.get_int("relu", 0) == 1)) ++n;
  return n;
}

std::map<std::string, Tensor> train(const Graph& model, bool fuse, Graph* step, bool gpu_fusions = true) {
  TrainerOptions to;
  to.batch_size = 4;
  to.deterministic = true;
  to.optimizer.lr = 0.05f;
  to.graph.fuse = fuse;
  to.graph.gpu_fusions = fuse && gpu_fusions;  // GELU and attention too, on the CPU's kernels
  Trainer trainer(model, to);
  *step = trainer.training_graph().graph;
  std::mt19937_64 rng(23);
  for (int s = 0; s < 4; ++s) {
    Tensor x = test::random_tensor(DType::Float32, {4, 1, 28, 28}, rng());
    Tensor y = test::random_int_tensor({4}, 0, 10, rng());
    trainer.step(x, y);
  }
  return trainer.trained_initializers();
}

// The fused and the unfused step trained the same weights bit for bit, and they did train
// (at least `min_moved` values left the model's).
void expect_same_training(const Graph& model, const std::map<std::string, Tensor>& fused,
                          const std::map<std::string, Tensor>& plain, int min_moved) {
  ASSERT_EQ(fused.size(), plain.size());
  int differ = 0;
  for (const auto& [name, t] : plain) {
    const Tensor& f = fused.at(name);
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.ptr<float>()[i] != f.ptr<float>()[i]) ++differ;
  }
  EXPECT_EQ(differ, 0) << "values that differ between the fused and the unfused step";
  // The steps did train: the weights moved away from the model's.
  int moved = 0;
  for (const auto& [name, t] : plain) {
    const Tensor& orig = model.initializers.at(name);
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.ptr<float>()[i] != orig.ptr<float>()[i]) ++moved;
  }
  EXPECT_GT(moved, min_moved);
}

// A model of models/ trained fused and unfused: both steps and both sets of weights.
struct FusedAndPlain {
  ImportedModel model;
  Graph fused_step, plain_step;
  std::map<std::string, Tensor> fused, plain;
  explicit FusedAndPlain(const std::string& path)
      : model(load_model(test::source_path(path))),
        fused(train(model.graph, true, &fused_step)),
        plain(train(model.graph, false, &plain_step)) {}
};

TEST(Fusion, BatchNormAndResidualAddReluTrainResNet20BitForBitAsTheSeparateNodes) {
  FusedAndPlain r("models/resnet20/resnet20.ts17.onnx");
  const Graph &fused_step = r.fused_step, &plain_step = r.plain_step;

  // ResNet-20: 19 Relus, 10 of them right after a BatchNorm (each fused pair also drops its
  // ReluGrad), the other 9 after a block's residual Add (the Add's gradient keeps the ReluGrad).
  EXPECT_EQ(count(plain_step, "Relu", false), 19);
  EXPECT_EQ(count(plain_step, "ReluGrad", false), 19);
  EXPECT_EQ(count(fused_step, "Relu", false), 0);
  EXPECT_EQ(count(fused_step, "BatchNormTraining", true), 10);
  EXPECT_EQ(count(fused_step, "BatchNormGrad", true), 10);
  EXPECT_EQ(count(fused_step, "Add", true), 9);
  EXPECT_EQ(count(fused_step, "ReluGrad", false), 9);
  // A block's input feeds its first convolution and its shortcut, so its gradient is a sum of
  // two, which the ReluGrad of the block before takes as its third input: 8 of the 9 (the last
  // block's output feeds only the pooling).
  int with_sum = 0;
  for (const Node& n : fused_step.nodes)
    if (n.op_type == "ReluGrad" && n.inputs.size() == 3) ++with_sum;
  EXPECT_EQ(with_sum, 8);
  // The loss and its gradient: one node.
  EXPECT_EQ(count(plain_step, "SoftmaxCrossEntropyGrad", false), 1);
  EXPECT_EQ(count(fused_step, "SoftmaxCrossEntropyGrad", false), 0);
  EXPECT_EQ(fused_step.nodes.size() + 10 + 9 + 1 + 8 + 10, plain_step.nodes.size());

  expect_same_training(r.model.graph, r.fused, r.plain, 100000);
}

TEST(Fusion, ConvAndGemmReluTrainLeNet5BitForBitAsTheSeparateNodes) {
  FusedAndPlain r("models/lenet5/lenet5.ts17.onnx");
  const Graph &fused_step = r.fused_step, &plain_step = r.plain_step;

  // LeNet-5: Conv, Relu, MaxPool twice, then Gemm, Relu twice and the output Gemm. Every Relu
  // follows a Conv or a Gemm; the output Gemm (the logits) keeps its own form.
  EXPECT_EQ(count(plain_step, "Relu", false), 4);
  EXPECT_EQ(count(fused_step, "Relu", false), 0);
  EXPECT_EQ(count(fused_step, "ReluGrad", false), 0);
  EXPECT_EQ(count(fused_step, "Conv", true), 2);
  EXPECT_EQ(count(fused_step, "ConvGrad", true), 2);
  EXPECT_EQ(count(fused_step, "Gemm", true), 2);
  EXPECT_EQ(count(fused_step, "GemmGrad", true), 2);
  EXPECT_EQ(count(fused_step, "Gemm", false), 3);
  EXPECT_EQ(count(fused_step, "SoftmaxCrossEntropyGrad", false), 0);
  // The loss node also writes the output Gemm's bias gradient; that GemmGrad no longer does.
  for (const Node& n : fused_step.nodes)
    if (n.op_type == "SoftmaxCrossEntropy") {
      ASSERT_EQ(n.outputs.size(), 4u);
      EXPECT_TRUE(n.outputs[1].empty());
      EXPECT_FALSE(n.outputs[3].empty());
    }
  EXPECT_EQ(fused_step.nodes.size() + 9, plain_step.nodes.size());
  expect_same_training(r.model.graph, r.fused, r.plain, 50000);
}

Node node_of(const std::string& op, std::vector<std::string> in, std::string out, const std::string& domain = "") {
  Node n;
  n.op_type = op;
  n.domain = domain;
  n.inputs = std::move(in);
  n.outputs = {std::move(out)};
  n.name = n.outputs[0];
  return n;
}

// A Relu whose input is also read elsewhere, or is the model's output, stays a node of its
// own: the value before the Relu must exist.
TEST(Fusion, AReluWhoseInputIsReadElsewhereIsNotFused) {
  Graph g;
  g.nodes.push_back(node_of("Gemm", {"x", "w1", "b1"}, "h1"));
  g.nodes.push_back(node_of("Relu", {"h1"}, "r1"));
  g.nodes.push_back(node_of("Add", {"r1", "h1"}, "s"));  // h1 read twice: not fused
  g.nodes.push_back(node_of("Conv", {"s", "w2"}, "h2"));
  g.nodes.push_back(node_of("Relu", {"h2"}, "r2"));  // fused
  g.nodes.push_back(node_of("Gemm", {"r2", "w3"}, "out"));
  g.nodes.push_back(node_of("Relu", {"out"}, "r3"));  // `out` exposed: not fused
  std::map<std::string, ValueType> types;
  for (const char* v : {"h1", "r1", "s", "h2", "r2", "out", "r3"}) types[v] = ValueType{DType::Float32, {2, 3}};
  EXPECT_EQ(fuse_relu(g, types, {"out"}), 1);
  ASSERT_EQ(g.nodes.size(), 6u);
  EXPECT_EQ(g.nodes[0].attrs.get_int("relu", 0), 0);
  EXPECT_EQ(g.nodes[3].op_type, "Conv");
  EXPECT_EQ(g.nodes[3].attrs.get_int("relu", 0), 1);
  EXPECT_EQ(g.nodes[3].outputs[0], "r2");
  EXPECT_EQ(types.count("h2"), 0u);
  EXPECT_EQ(g.nodes[4].attrs.get_int("relu", 0), 0);
  EXPECT_EQ(g.nodes[5].op_type, "Relu");
}

// An Add takes the Relu after it only where both operands have its output's type (a residual
// connection): a broadcast bias or integer data keep their Relu.
TEST(Fusion, OnlyAnAddOfTwoFloatTensorsOfItsShapeTakesTheRelu) {
  Graph g;
  g.nodes.push_back(node_of("Add", {"a", "b"}, "s1"));
  g.nodes.push_back(node_of("Relu", {"s1"}, "r1"));  // fused
  g.nodes.push_back(node_of("Add", {"r1", "c"}, "s2"));
  g.nodes.push_back(node_of("Relu", {"s2"}, "r2"));  // c is a broadcast bias: not fused
  g.nodes.push_back(node_of("Add", {"i", "j"}, "s3"));
  g.nodes.push_back(node_of("Relu", {"s3"}, "r3"));  // int64: not fused
  const ValueType f{DType::Float32, {2, 3}}, i64{DType::Int64, {2, 3}};
  std::map<std::string, ValueType> types{
      {"a", f},   {"b", f},   {"s1", f},   {"r1", f},  {"s2", f}, {"r2", f}, {"c", ValueType{DType::Float32, {3}}},
      {"i", i64}, {"j", i64}, {"s3", i64}, {"r3", i64}};
  EXPECT_EQ(fuse_relu(g, types, {}), 1);
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(g.nodes[0].attrs.get_int("relu", 0), 1);
  EXPECT_EQ(g.nodes[0].outputs[0], "r1");
  EXPECT_EQ(g.nodes[1].attrs.get_int("relu", 0), 0);
  EXPECT_EQ(g.nodes[2].op_type, "Relu");
  EXPECT_EQ(g.nodes[3].attrs.get_int("relu", 0), 0);
  EXPECT_EQ(g.nodes[4].op_type, "Relu");
}

// A sum of two gradients becomes the ReluGrad's third input only where nothing else reads the
// sum, nobody outside the step does, and its operands have its shape.
TEST(Fusion, AGradientSumJoinsTheReluGradOnlyWhenItFeedsNothingElse) {
  enum Case { kFused, kReadElsewhere, kExposed, kBroadcast };
  auto make = [](Case c) {
    Graph g;
    g.nodes.push_back(node_of("Add", {"g1", c == kBroadcast ? "bias" : "g2"}, "sum"));
    g.nodes.push_back(node_of("ReluGrad", {"sum", "y"}, "dx", kCbtDomain));
    if (c == kReadElsewhere) g.nodes.push_back(node_of("Neg", {"sum"}, "other"));
    const ValueType f{DType::Float32, {4, 5}};
    std::map<std::string, ValueType> types{{"g1", f}, {"g2", f}, {"sum", f},
                                           {"y", f},  {"dx", f}, {"bias", ValueType{DType::Float32, {5}}}};
    const int fused =
        fuse_gradient_sum_relu(g, types, c == kExposed ? std::set<std::string>{"sum"} : std::set<std::string>{});
    return std::tuple{fused, g, types};
  };
  auto [fused, g, types] = make(kFused);
  EXPECT_EQ(fused, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "ReluGrad");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"g1", "y", "g2"}));
  EXPECT_EQ(types.count("sum"), 0u);
  EXPECT_EQ(std::get<0>(make(kReadElsewhere)), 0);
  EXPECT_EQ(std::get<0>(make(kExposed)), 0);
  EXPECT_EQ(std::get<0>(make(kBroadcast)), 0);
}

// The loss gradient is fused only where its dLoss is a constant (the seed) and nothing else
// reads the log-probabilities; the fused node takes dLoss and writes dLogits.
TEST(Fusion, TheLossGradientJoinsTheLossOnlyWhenItsLogProbsAreItsAlone) {
  auto make = [](const std::string& dloss, bool lp_read_elsewhere, bool lp_exposed) {
    Graph g;
    g.initializers["seed"] = Tensor::scalar_f32(1.0f);
    g.constant_initializers.insert("seed");
    Node loss = test::make_node("SoftmaxCrossEntropy", 2, 2, {}, kCbtDomain);
    loss.inputs = {"logits", "labels"};
    loss.outputs = {"loss", "lp"};
    Node grad = test::make_node("SoftmaxCrossEntropyGrad", 3, 1, {}, kCbtDomain);
    grad.inputs = {dloss, "lp", "labels"};
    grad.outputs = {"dlogits"};
    g.nodes = {loss, grad};
    if (lp_read_elsewhere) {
      Node exp = test::make_node("Exp", 1, 1);
      exp.inputs = {"lp"};
      exp.outputs = {"probs"};
      g.nodes.push_back(exp);
    }
    std::map<std::string, ValueType> types{{"lp", ValueType{DType::Float32, {4, 3}}}};
    const int fused = fuse_loss_gradient(g, types, lp_exposed ? std::set<std::string>{"lp"} : std::set<std::string>{});
    return std::tuple{fused, g, types};
  };
  auto [fused, g, types] = make("seed", false, false);
  EXPECT_EQ(fused, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"logits", "labels", "seed"}));
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"loss", "", "dlogits"}));
  EXPECT_EQ(types.count("lp"), 0u);
  EXPECT_EQ(g.nodes[0].outputs.size(), 3u);                         // the logits are no Gemm's: no bias gradient
  EXPECT_EQ(std::get<0>(make("computed_dloss", false, false)), 0);  // not a constant
  EXPECT_EQ(std::get<0>(make("seed", true, false)), 0);             // lp read by Exp
  EXPECT_EQ(std::get<0>(make("seed", false, true)), 0);             // lp exposed
}

// The fused and the unfused step trained the same weights up to rounding (a relative 1e-4 of
// every value), and they did train (at least `min_moved` values left the model's).
void expect_close_training(const FusedAndPlain& r, int min_moved) {
  ASSERT_EQ(r.fused.size(), r.plain.size());
  int moved = 0;
  double worst = 0;
  for (const auto& [name, t] : r.plain) {
    const Tensor &f = r.fused.at(name), &orig = r.model.graph.initializers.at(name);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float p = t.ptr<float>()[i], q = f.ptr<float>()[i];
      worst = std::max(worst, std::abs(double(p) - q) / (1e-3 + std::abs(double(p))));
      if (p != orig.ptr<float>()[i]) ++moved;
    }
  }
  EXPECT_LT(worst, 1e-4) << "largest relative difference of a trained value, fused against the nodes";
  EXPECT_GT(moved, min_moved);
}

// ConvNeXt's four GELUs (TorchScript's export at opset 17 writes each as Div, Erf, Add, Mul,
// Mul) become Gelu nodes, and the step trains as the chains do up to rounding.
TEST(Fusion, ConvNeXtsGeluChainsBecomeGeluNodesAndTrainAsTheChains) {
  FusedAndPlain r("models/architectures/convnext.ts17.onnx");
  EXPECT_EQ(count(r.plain_step, "Erf", false), 4);
  EXPECT_EQ(count(r.plain_step, "Gelu", false), 0);
  EXPECT_EQ(count(r.fused_step, "Erf", false), 0);
  EXPECT_EQ(count(r.fused_step, "Gelu", false), 4);
  EXPECT_EQ(count(r.fused_step, "GeluGrad", false), 4);
  EXPECT_EQ(count(r.fused_step, "ErfGrad", false) + count(r.plain_step, "GeluGrad", false), 0);
  expect_close_training(r, 20000);
}

// ViT's two attention layers (nn.MultiheadAttention as TorchScript exports it: the scaled
// queries times the transposed keys, Softmax, times the values, for 4 heads of 32 images) each
// become one SoftmaxAttention, and the step trains as the nodes do up to rounding.
TEST(Fusion, ViTsAttentionBecomesSoftmaxAttentionAndTrainsAsTheNodes) {
  FusedAndPlain r("models/architectures/vit.ts17.onnx");
  EXPECT_EQ(count(r.plain_step, "Softmax", false), 2);
  EXPECT_EQ(count(r.fused_step, "Softmax", false), 0);
  EXPECT_EQ(count(r.fused_step, "SoftmaxGrad", false), 0);
  EXPECT_EQ(count(r.fused_step, "SoftmaxAttention", false), 2);
  EXPECT_EQ(count(r.fused_step, "SoftmaxAttentionGrad", false), 2);
  // Four MatMuls into the attention nodes; the Linear layers' went into Gemms (fuse_linear).
  const int to_gemms = count(r.fused_step, "Gemm", false) - count(r.plain_step, "Gemm", false);
  EXPECT_GT(to_gemms, 0);
  EXPECT_EQ(count(r.plain_step, "MatMul", false) - count(r.fused_step, "MatMul", false) - to_gemms, 4);
  expect_close_training(r, 20000);
}

// Swin's Linear layers over its tokens (TorchScript writes each as MatMul by the transposed
// weight, then Add of the bias first) become Reshape, Gemm, Reshape: four a block, two blocks;
// the head's Linear is a Gemm already. The step trains as the pairs do up to rounding.
TEST(Fusion, SwinsLinearLayersBecomeGemmsAndTrainAsThePairs) {
  FusedAndPlain r("models/architectures/swin.ts17.onnx");
  EXPECT_EQ(count(r.plain_step, "Gemm", false), 1);
  EXPECT_EQ(count(r.fused_step, "Gemm", false), 9);
  // Eight MatMuls into Gemms and the attentions' four into SoftmaxAttention nodes.
  EXPECT_EQ(count(r.plain_step, "MatMul", false) - count(r.fused_step, "MatMul", false), 8 + 4);
  EXPECT_EQ(count(r.fused_step, "GemmGrad", false), 9);
  // Two Reshapes around each Gemm; the masks' two Reshapes an attention fold away.
  EXPECT_EQ(count(r.plain_step, "Reshape", false) + 2 * 8 - 2 * 2, count(r.fused_step, "Reshape", false));
  expect_close_training(r, 15000);
}

// Swin's attention adds its relative-position bias, then its window masks through a Reshape to
// (windows of an image, windows, heads, 16, 16) and back. The masks fold into one constant laid
// out over (32 x 9 windows, 1, 16, 16) for the shifted block; the unshifted block's are zeros
// and go. Both attentions become SoftmaxAttention nodes, the shifted one's bias the sum of the
// position bias and the masks; the step trains as the nodes do up to rounding.
TEST(Fusion, SwinsAttentionTakesItsBiasAndWindowMasksAndTrainsAsTheNodes) {
  FusedAndPlain r("models/architectures/swin.ts17.onnx");
  EXPECT_EQ(count(r.plain_step, "Softmax", false), 2);
  EXPECT_EQ(count(r.fused_step, "Softmax", false), 0);
  EXPECT_EQ(count(r.fused_step, "SoftmaxAttention", false), 2);
  EXPECT_EQ(count(r.fused_step, "SoftmaxAttentionGrad", false), 2);
  // Each attention's bias: the shifted block's an Add of the position bias and the laid-out
  // masks, the other's the position bias itself (an Unsqueeze of the gathered table).
  std::vector<std::string> bias_makers;
  for (const Node& n : r.fused_step.nodes) {
    if (n.op_type != "SoftmaxAttention" || n.inputs.size() != 4) continue;
    for (const Node& p : r.fused_step.nodes)
      if (p.outputs[0] == n.inputs[3])
        bias_makers.push_back(p.op_type + (p.op_type == "Add" && p.inputs[1].find("_laid_out") != std::string::npos
                                               ? " of the masks"
                                               : ""));
  }
  EXPECT_EQ(bias_makers, (std::vector<std::string>{"Unsqueeze", "Add of the masks"}));
  int laid_out = 0;
  for (const auto& [name, t] : r.fused_step.initializers)
    if (name.find("_laid_out") != std::string::npos) {
      ++laid_out;
      EXPECT_EQ(t.shape(), (Shape{4 * 9, 1, 16, 16}));  // batch 4 of train()
      EXPECT_TRUE(r.fused_step.constant_initializers.count(name));
    }
  EXPECT_EQ(laid_out, 1);
  expect_close_training(r, 15000);
}

// Reshape, Add of a constant, Reshape back folds into one Add of the constant laid out in the
// first shape, kept at size 1 where it does not vary; a mask of zeros goes altogether. A trained
// M, a Reshape back to another shape, an exposed sum or an M that widens the sum do not fold.
TEST(Fusion, AConstantAddedThroughAReshapePairFoldsIntoOneAdd) {
  enum Case { kWindowMask, kZeros, kTrained, kOtherShape, kSumExposed, kWidens };
  for (Case c : {kWindowMask, kZeros, kTrained, kOtherShape, kSumExposed, kWidens}) {
    SCOPED_TRACE(c);
    Graph g;
    // a (6, 2, 4) seen as (3, 2, 2, 4): the mask (2, 1, 4) varies along the second and last dims,
    // so laid out over a it varies along the first (6 = 3 x 2) and last, not along the middle.
    std::vector<float> mask(c == kWidens ? 16 : 8);
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = c == kZeros ? 0.0f : -100.0f * float(i % 3) + float(i);
    g.initializers["m"] = Tensor::from_f32(mask, c == kWidens ? Shape{2, 2, 4} : Shape{2, 1, 4});
    if (c != kTrained) g.constant_initializers.insert("m");
    g.nodes.push_back(node_of("Relu", {"in"}, "a"));
    g.nodes.push_back(node_of("Reshape", {"a", "s1"}, "r1"));
    g.nodes.push_back(node_of("Add", {"r1", "m"}, "sum"));
    g.nodes.push_back(node_of("Reshape", {"sum", "s0"}, "r2"));
    g.nodes.push_back(node_of("Neg", {"r2"}, "out"));
    std::map<std::string, ValueType> types;
    const Shape s0{6, 2, 4}, s1{3, 2, 2, 4};
    types["in"] = types["a"] = ValueType{DType::Float32, s0};
    types["r1"] = ValueType{DType::Float32, s1};
    types["sum"] = ValueType{DType::Float32, c == kWidens ? Shape{3, 2, 2, 4} : s1};
    if (c == kWidens) types["r1"] = ValueType{DType::Float32, {3, 1, 2, 4}};
    types["r2"] = types["out"] = ValueType{DType::Float32, c == kOtherShape ? Shape{12, 4} : s0};
    if (c == kOtherShape) types["out"] = types["r2"];
    types["m"] = ValueType{DType::Float32, g.initializers.at("m").shape()};
    const int folded = fold_reshaped_constant_adds(
        g, types, c == kSumExposed ? std::set<std::string>{"sum"} : std::set<std::string>{});
    const bool folds = c == kWindowMask || c == kZeros;
    EXPECT_EQ(folded, folds ? 1 : 0);
    EXPECT_EQ(count(g, "Reshape", false), folds ? 0 : 2);
    if (c == kZeros) {
      ASSERT_EQ(g.nodes.size(), 2u);
      EXPECT_EQ(g.nodes[1].inputs, std::vector<std::string>{"a"});
      EXPECT_EQ(types.count("r2"), 0u);
    }
    if (c != kWindowMask) continue;
    ASSERT_EQ(g.nodes.size(), 3u);
    const Node& add = g.nodes[1];
    EXPECT_EQ(add.op_type, "Add");
    EXPECT_EQ(add.outputs, std::vector<std::string>{"r2"});
    ASSERT_EQ(add.inputs.size(), 2u);
    EXPECT_EQ(add.inputs[0], "a");
    const Tensor& laid = g.initializers.at(add.inputs[1]);
    ASSERT_EQ(laid.shape(), (Shape{6, 1, 4}));
    EXPECT_TRUE(g.constant_initializers.count(add.inputs[1]));
    // Row i of a is (i / 2, i % 2) of s1's first two dims: the mask's row i % 2.
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(laid.ptr<float>()[i * 4 + k], mask[size_t((i % 2) * 4 + k)]);
    for (const char* v : {"r1", "sum"}) EXPECT_EQ(types.count(v), 0u) << v;
  }
}

// Swin's shifted block rolls its tokens by two rows and two columns before its windows and back
// after (torch.roll over two dims: TorchScript writes two Slices and a Concat an axis). Each
// roll becomes one Roll over both axes, and the step trains bit for bit as the Slices and
// Concats do (the fusions of every device alone: a Roll moves the same values).
TEST(Fusion, SwinsRollsBecomeRollNodesAndTrainBitForBitAsTheSlices) {
  const ImportedModel model = load_model(test::source_path("models/architectures/swin.ts17.onnx"));
  Graph fused_step, plain_step;
  const auto fused = train(model.graph, true, &fused_step, false);
  const auto plain = train(model.graph, false, &plain_step);
  EXPECT_EQ(count(plain_step, "Concat", false), 4);
  EXPECT_EQ(count(fused_step, "Concat", false) + count(fused_step, "ConcatGrad", false), 0);
  EXPECT_EQ(count(plain_step, "Slice", false) - count(fused_step, "Slice", false), 8);
  EXPECT_EQ(count(fused_step, "Roll", false), 4);  // two forward, two rolling the gradient back
  int both_axes = 0;
  for (const Node& n : fused_step.nodes)
    if (n.op_type == "Roll" && n.attrs.get_ints("axes").size() == 2) ++both_axes;
  EXPECT_EQ(both_axes, 4);
  expect_same_training(model.graph, fused, plain, 15000);
}

// Slice [k, n) then [0, k) of one X along the Concat's axis becomes a Roll by k, negative starts
// and ends included; Slices the other way round, with a step, over another axis too, of two
// tensors, or read elsewhere stay.
TEST(Fusion, RollFusesOnlyTheTwoSlicesOfARoll) {
  enum Case { kLeft, kRightNegative, kSwapped, kStep, kOtherAxisToo, kTwoTensors, kReadElsewhere };
  for (Case c : {kLeft, kRightNegative, kSwapped, kStep, kOtherAxisToo, kTwoTensors, kReadElsewhere}) {
    SCOPED_TRACE(c);
    Graph g;
    auto ints = [&g](const std::string& name, std::vector<int64_t> v) {
      g.initializers[name] = Tensor::from_i64(v, {static_cast<int64_t>(v.size())});
      g.constant_initializers.insert(name);
    };
    const int64_t big = std::numeric_limits<int64_t>::max();
    // X (3, 8, 5), the Concat along axis 1: torch.roll(x, -3, 1) is [3, 8) then [0, 3);
    // torch.roll(x, 2, 1) is [-2, end) then [0, -2).
    ints("s1", {c == kRightNegative ? -2 : 3});
    ints("e1", {big});
    ints("s2", {0});
    ints("e2", {c == kRightNegative ? -2 : 3});
    ints("axis", {1});
    ints("step", {c == kStep ? 2 : 1});
    ints("s1b", {3, 1});
    ints("e1b", {big, big});
    ints("axesb", {1, 2});
    g.nodes.push_back(node_of("Relu", {"in"}, "x"));
    g.nodes.push_back(node_of("Relu", {"in"}, "x2"));
    Node first = node_of("Slice", {"x", "s1", "e1", "axis", "step"}, "a");
    if (c == kOtherAxisToo) first.inputs = {"x", "s1b", "e1b", "axesb"};
    Node second = node_of("Slice", {c == kTwoTensors ? "x2" : "x", "s2", "e2", "axis"}, "b");
    g.nodes.push_back(first);
    g.nodes.push_back(second);
    Node cat =
        node_of("Concat", c == kSwapped ? std::vector<std::string>{"b", "a"} : std::vector<std::string>{"a", "b"}, "y");
    cat.attrs.set("axis", int64_t{1});
    g.nodes.push_back(cat);
    g.nodes.push_back(node_of("Neg", {"y"}, "out"));
    if (c == kReadElsewhere) g.nodes.push_back(node_of("Neg", {"a"}, "other"));
    std::map<std::string, ValueType> types;
    for (const char* v : {"in", "x", "x2", "y", "out"}) types[v] = ValueType{DType::Float32, {3, 8, 5}};
    types["a"] = ValueType{DType::Float32, {3, c == kRightNegative ? 2 : 5, 5}};
    types["b"] = ValueType{DType::Float32, {3, c == kRightNegative ? 6 : 3, 5}};
    const int fused = fuse_roll(g, types, {});
    const bool fuses = c == kLeft || c == kRightNegative;
    EXPECT_EQ(fused, fuses ? 1 : 0);
    EXPECT_EQ(count(g, "Slice", false), fuses ? 0 : 2);
    if (!fuses) continue;
    const Node& roll = g.nodes[2];
    EXPECT_EQ(roll.op_type, "Roll");
    EXPECT_EQ(roll.domain, kCbtDomain);
    EXPECT_EQ(roll.inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(roll.outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(roll.attrs.get_ints("axes"), std::vector<int64_t>{1});
    EXPECT_EQ(roll.attrs.get_ints("shifts"), std::vector<int64_t>{c == kRightNegative ? 6 : 3});
  }
}

// A MatMul by a matrix plus a bias over its columns fuses, the bias on either side, with
// Reshapes around the Gemm for an X of three dims and none for two; a product read elsewhere or
// exposed, a batch of weights, a bias of a whole row per row, or an integer product does not.
TEST(Fusion, LinearFusesOnlyAMatMulByAMatrixPlusAColumnBias) {
  enum Case { kTokens, kBiasFirst, kRows, kReadElsewhere, kExposed, kBatchedWeight, kFullBias, kIntegers };
  for (Case c : {kTokens, kBiasFirst, kRows, kReadElsewhere, kExposed, kBatchedWeight, kFullBias, kIntegers}) {
    SCOPED_TRACE(c);
    Graph g;
    g.nodes.push_back(node_of("Relu", {"in"}, "x"));
    g.nodes.push_back(node_of("MatMul", {"x", "w"}, "p"));
    g.nodes.push_back(
        node_of("Add", c == kBiasFirst ? std::vector<std::string>{"b", "p"} : std::vector<std::string>{"p", "b"}, "y"));
    g.nodes.push_back(node_of("Neg", {"y"}, "out"));
    if (c == kReadElsewhere) g.nodes.push_back(node_of("Neg", {"p"}, "other"));
    const DType dt = c == kIntegers ? DType::Int64 : DType::Float32;
    const Shape rows = c == kRows ? Shape{6} : Shape{2, 3};
    auto with = [](Shape lead, int64_t last) {
      lead.push_back(last);
      return lead;
    };
    std::map<std::string, ValueType> types;
    for (const char* v : {"in", "x"}) types[v] = ValueType{dt, with(rows, 4)};
    for (const char* v : {"p", "y", "out", "other"}) types[v] = ValueType{dt, with(rows, 5)};
    types["w"] = ValueType{dt, c == kBatchedWeight ? Shape{2, 4, 5} : Shape{4, 5}};
    types["b"] = ValueType{dt, c == kFullBias ? with(rows, 5) : Shape{5}};
    const int fused = fuse_linear(g, types, c == kExposed ? std::set<std::string>{"p"} : std::set<std::string>{});
    const bool fuses = c == kTokens || c == kBiasFirst || c == kRows;
    EXPECT_EQ(fused, fuses ? 1 : 0);
    EXPECT_EQ(count(g, "MatMul", false), fuses ? 0 : 1);
    if (!fuses) continue;
    const size_t reshapes = c == kRows ? 0 : 2;
    ASSERT_EQ(g.nodes.size(), 3u + reshapes);
    const Node& gemm = g.nodes[1 + reshapes / 2];
    EXPECT_EQ(gemm.op_type, "Gemm");
    EXPECT_EQ(gemm.inputs.size(), 3u);
    EXPECT_EQ(gemm.inputs[1], "w");
    EXPECT_EQ(gemm.inputs[2], "b");
    EXPECT_EQ(types.at(gemm.outputs[0]).shape, (Shape{6, 5}));
    EXPECT_EQ(types.at(gemm.inputs[0]).shape, (Shape{6, 4}));
    EXPECT_EQ(types.count("p"), 0u);
    if (c == kRows) {
      EXPECT_EQ(gemm.inputs[0], "x");
      EXPECT_EQ(gemm.outputs[0], "y");
      continue;
    }
    const Node &flat = g.nodes[1], &back = g.nodes[3];
    EXPECT_EQ(flat.op_type, "Reshape");
    EXPECT_EQ(flat.inputs[0], "x");
    EXPECT_EQ(back.op_type, "Reshape");
    EXPECT_EQ(back.outputs, std::vector<std::string>{"y"});
    const Tensor &to_rows = g.initializers.at(flat.inputs[1]), &to_y = g.initializers.at(back.inputs[1]);
    EXPECT_EQ(std::vector<int64_t>(to_rows.ptr<int64_t>(), to_rows.ptr<int64_t>() + to_rows.numel()),
              (std::vector<int64_t>{-1, 4}));
    EXPECT_EQ(std::vector<int64_t>(to_y.ptr<int64_t>(), to_y.ptr<int64_t>() + to_y.numel()),
              (std::vector<int64_t>{-1, 3, 5}));
    EXPECT_TRUE(g.constant_initializers.count(flat.inputs[1]));
  }
}

// Attention with a mask added to the scores fuses too, the mask an input of SoftmaxAttention:
// the decoder's causal mask (a constant, no gradient) in the dynamo exporter's form and in
// opset 23's Attention op (rewritten at binding into these nodes). Both train as the nodes do
// up to rounding.
TEST(Fusion, AttentionWithAMaskFusesAndTrainsAsTheNodes) {
  for (const char* file : {"models/architectures/rowgpt.dynamo_noopt.onnx", "models/architectures/rowgpt.op23.onnx"}) {
    SCOPED_TRACE(file);
    FusedAndPlain r(file);
    const int softmaxes = count(r.plain_step, "Softmax", false);
    EXPECT_GE(softmaxes, 2);
    EXPECT_EQ(count(r.fused_step, "Softmax", false), 0);
    EXPECT_EQ(count(r.fused_step, "SoftmaxAttention", false), softmaxes);
    int with_bias = 0;
    for (const Node& n : r.fused_step.nodes)
      if (n.op_type == "SoftmaxAttention" && n.inputs.size() == 4) ++with_bias;
    EXPECT_EQ(with_bias, softmaxes);
    expect_close_training(r, 10000);
  }
}

// Every order in which exporters write the product X * 0.5 * (1 + Erf(X / sqrt 2)) fuses; a
// chain with a value read elsewhere or exposed, another constant, or a trained one does not.
TEST(Fusion, EveryOrderOfTheGeluProductFusesAndOnlyWholeChainsOfConstants) {
  enum Case {
    kDivThenXSumHalf,
    kMulThenXSumHalfSwapped,
    kSumHalfThenX,
    kXHalfThenSum,
    kErfReadElsewhere,
    kSumExposed,
    kOtherHalf,
    kTrainedScale,
    kTimesATensor
  };
  auto make = [](Case c) {
    Graph g;
    auto constant = [&g](const std::string& name, float v) {
      g.initializers[name] = Tensor::scalar_f32(v);
      g.constant_initializers.insert(name);
    };
    constant("sqrt2", 1.41421356f);
    constant("rsqrt2", 0.70710678f);
    constant("one", 1.0f);
    constant("half", c == kOtherHalf ? 0.6f : 0.5f);
    if (c == kTrainedScale) g.constant_initializers.erase("sqrt2");
    g.nodes.push_back(node_of("Relu", {"in"}, "x"));
    if (c == kMulThenXSumHalfSwapped)
      g.nodes.push_back(node_of("Mul", {"rsqrt2", "x"}, "scaled"));
    else
      g.nodes.push_back(node_of("Div", {"x", "sqrt2"}, "scaled"));
    g.nodes.push_back(node_of("Erf", {"scaled"}, "erf"));
    g.nodes.push_back(node_of(
        "Add", {c == kMulThenXSumHalfSwapped ? "one" : "erf", c == kMulThenXSumHalfSwapped ? "erf" : "one"}, "sum"));
    if (c == kSumHalfThenX) {
      g.nodes.push_back(node_of("Mul", {"half", "sum"}, "p"));
      g.nodes.push_back(node_of("Mul", {"x", "p"}, "y"));
    } else if (c == kXHalfThenSum) {
      g.nodes.push_back(node_of("Mul", {"x", "half"}, "p"));
      g.nodes.push_back(node_of("Mul", {"sum", "p"}, "y"));
    } else {
      g.nodes.push_back(node_of(
          "Mul",
          c == kMulThenXSumHalfSwapped ? std::vector<std::string>{"sum", "x"} : std::vector<std::string>{"x", "sum"},
          "p"));
      g.nodes.push_back(node_of(
          "Mul",
          c == kMulThenXSumHalfSwapped ? std::vector<std::string>{"half", "p"} : std::vector<std::string>{"p", "half"},
          "y"));
    }
    if (c == kTimesATensor) g.nodes.back().inputs = {"p", "bias"};  // p * bias: not 0.5
    g.nodes.push_back(node_of("Neg", {"y"}, "out"));
    if (c == kErfReadElsewhere) g.nodes.push_back(node_of("Neg", {"erf"}, "other"));
    const ValueType f{DType::Float32, {4, 6}};
    std::map<std::string, ValueType> types;
    for (const char* v : {"in", "x", "scaled", "erf", "sum", "p", "y", "out", "other"}) types[v] = f;
    types["bias"] = ValueType{DType::Float32, {6}};
    const int fused = fuse_gelu(g, types, c == kSumExposed ? std::set<std::string>{"sum"} : std::set<std::string>{});
    return std::tuple{fused, g, types};
  };
  for (Case c : {kDivThenXSumHalf, kMulThenXSumHalfSwapped, kSumHalfThenX, kXHalfThenSum}) {
    SCOPED_TRACE(c);
    auto [fused, g, types] = make(c);
    EXPECT_EQ(fused, 1);
    ASSERT_EQ(g.nodes.size(), 3u);
    EXPECT_EQ(g.nodes[1].op_type, "Gelu");
    EXPECT_EQ(g.nodes[1].inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(g.nodes[1].outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(g.nodes[1].attrs.get_string("approximate", ""), "none");
    EXPECT_EQ(g.nodes[2].inputs, std::vector<std::string>{"y"});
    for (const char* v : {"scaled", "erf", "sum", "p"}) EXPECT_EQ(types.count(v), 0u) << v;
  }
  for (Case c : {kErfReadElsewhere, kSumExposed, kOtherHalf, kTrainedScale, kTimesATensor}) {
    SCOPED_TRACE(c);
    auto [fused, g, types] = make(c);
    EXPECT_EQ(fused, 0);
    EXPECT_EQ(count(g, "Gelu", false), 0);
    EXPECT_EQ(count(g, "Erf", false), 1);
  }
}

// The decoder's five RMSNorms become RMSNorm nodes, each with its weight as the scale: PyTorch's
// nn.RMSNorm as the dynamo exporter writes it (Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul, Mul
// by the weight) and opset 23's RMSNormalization (rewritten at binding into Mul, ReduceMean,
// Add, Sqrt, Div, Mul). The step trains as the chains do up to rounding.
TEST(Fusion, TheDecodersRMSNormsBecomeRMSNormNodesAndTrainAsTheChains) {
  for (const char* file : {"models/architectures/rowgpt.dynamo_noopt.onnx", "models/architectures/rowgpt.op23.onnx"}) {
    SCOPED_TRACE(file);
    FusedAndPlain r(file);
    EXPECT_EQ(count(r.plain_step, "RMSNorm", false), 0);
    EXPECT_EQ(count(r.plain_step, "ReduceMean", false) - count(r.fused_step, "ReduceMean", false), 5);
    EXPECT_EQ(count(r.plain_step, "Sqrt", false) - count(r.fused_step, "Sqrt", false), 5);
    EXPECT_EQ(count(r.fused_step, "RMSNormGrad", false), 5);
    int scaled = 0;
    for (const Node& n : r.fused_step.nodes)
      if (n.op_type == "RMSNorm" && n.inputs.size() == 2 && n.outputs.size() == 2) ++scaled;
    EXPECT_EQ(scaled, 5);
    expect_close_training(r, 10000);
  }
}

// EfficientNet's thirteen SiLUs (TorchScript's export writes nn.SiLU as Sigmoid, Mul) become Silu
// nodes; its squeeze-excite gates (a Sigmoid times another tensor) stay. The step trains as the
// pairs do up to rounding.
TEST(Fusion, EfficientNetsSilusBecomeSiluNodesAndTrainAsThePairs) {
  FusedAndPlain r("models/architectures/efficientnet.ts17.onnx");
  EXPECT_EQ(count(r.plain_step, "Sigmoid", false), 17);
  EXPECT_EQ(count(r.fused_step, "Sigmoid", false), 4);
  EXPECT_EQ(count(r.fused_step, "Silu", false), 13);
  EXPECT_EQ(count(r.fused_step, "SiluGrad", false), 13);
  // Each pair's Mul and the two Muls of its gradient.
  EXPECT_EQ(count(r.plain_step, "Mul", false) - count(r.fused_step, "Mul", false), 3 * 13);
  expect_close_training(r, 20000);
}

// X * Sigmoid(X) fuses with the operands either way round; a Sigmoid read elsewhere or exposed,
// or times another tensor, does not.
TEST(Fusion, SiluFusesOnlyASigmoidTimesItsOwnInput) {
  enum Case { kXTimesS, kSTimesX, kReadElsewhere, kExposed, kOtherOperand };
  for (Case c : {kXTimesS, kSTimesX, kReadElsewhere, kExposed, kOtherOperand}) {
    SCOPED_TRACE(c);
    Graph g;
    g.nodes.push_back(node_of("Relu", {"in"}, "x"));
    g.nodes.push_back(node_of("Sigmoid", {"x"}, "s"));
    g.nodes.push_back(node_of("Mul",
                              c == kSTimesX ? std::vector<std::string>{"s", "x"}
                                            : std::vector<std::string>{c == kOtherOperand ? "in" : "x", "s"},
                              "y"));
    g.nodes.push_back(node_of("Neg", {"y"}, "out"));
    if (c == kReadElsewhere) g.nodes.push_back(node_of("Neg", {"s"}, "other"));
    std::map<std::string, ValueType> types;
    for (const char* v : {"in", "x", "s", "y", "out", "other"}) types[v] = ValueType{DType::Float32, {3, 5}};
    const int fused = fuse_silu(g, types, c == kExposed ? std::set<std::string>{"s"} : std::set<std::string>{});
    const bool fuses = c == kXTimesS || c == kSTimesX;
    EXPECT_EQ(fused, fuses ? 1 : 0);
    EXPECT_EQ(count(g, "Sigmoid", false), fuses ? 0 : 1);
    if (fuses) {
      ASSERT_EQ(g.nodes.size(), 3u);
      EXPECT_EQ(g.nodes[1].op_type, "Silu");
      EXPECT_EQ(g.nodes[1].domain, kCbtDomain);
      EXPECT_EQ(g.nodes[1].inputs, std::vector<std::string>{"x"});
      EXPECT_EQ(g.nodes[1].outputs, std::vector<std::string>{"y"});
      EXPECT_EQ(types.count("s"), 0u);
    }
  }
}

// Each form of the chain fuses (Pow or Mul for the square, Reciprocal and Mul or Div, with or
// without a scale); a chain with a value read elsewhere or exposed, a mean over a leading dim,
// a trained epsilon, or a square by 3 does not; a scale over more than the normalised dims
// stays a Mul after an RMSNorm without one.
TEST(Fusion, EveryFormOfTheRMSNormChainFusesAndOnlyThose) {
  enum Case {
    kPowReciprocalScale,
    kMulDivScaleFirst,
    kNoScale,
    kMeanReadElsewhere,
    kRmsExposed,
    kLeadingAxis,
    kTrainedEpsilon,
    kCube,
    kScaleOverRows
  };
  auto make = [](Case c) {
    Graph g;
    g.initializers["two"] = Tensor::scalar_f32(c == kCube ? 3.0f : 2.0f);
    g.initializers["eps"] = Tensor::scalar_f32(1e-6f);
    g.initializers["axes"] = Tensor::from_i64({c == kLeadingAxis ? 0 : -1}, {1});
    for (const char* k : {"two", "eps", "axes"}) g.constant_initializers.insert(k);
    if (c == kTrainedEpsilon) g.constant_initializers.erase("eps");
    g.nodes.push_back(node_of("Relu", {"in"}, "x"));
    if (c == kMulDivScaleFirst)
      g.nodes.push_back(node_of("Mul", {"x", "x"}, "sq"));
    else
      g.nodes.push_back(node_of("Pow", {"x", "two"}, "sq"));
    g.nodes.push_back(node_of("ReduceMean", {"sq", "axes"}, "mean"));
    g.nodes.push_back(node_of("Add", {"eps", "mean"}, "meps"));
    g.nodes.push_back(node_of("Sqrt", {"meps"}, "rms"));
    if (c == kMulDivScaleFirst) {
      g.nodes.push_back(node_of("Div", {"x", "rms"}, "normed"));
    } else {
      g.nodes.push_back(node_of("Reciprocal", {"rms"}, "inv"));
      g.nodes.push_back(node_of("Mul", {"inv", "x"}, "normed"));
    }
    const char* scale = c == kScaleOverRows ? "rowscale" : "w";
    if (c == kNoScale)
      g.nodes.push_back(node_of("Neg", {"normed"}, "y"));
    else if (c == kMulDivScaleFirst)
      g.nodes.push_back(node_of("Mul", {scale, "normed"}, "y"));
    else
      g.nodes.push_back(node_of("Mul", {"normed", scale}, "y"));
    g.nodes.push_back(node_of("Neg", {"y"}, "out"));
    if (c == kMeanReadElsewhere) g.nodes.push_back(node_of("Neg", {"mean"}, "other"));
    const ValueType f{DType::Float32, {4, 3, 6}}, stat{DType::Float32, {4, 3, 1}};
    std::map<std::string, ValueType> types;
    for (const char* v : {"in", "x", "sq", "normed", "y", "out"}) types[v] = f;
    for (const char* v : {"mean", "meps", "rms", "other"}) types[v] = stat;
    if (c != kMulDivScaleFirst) types["inv"] = stat;
    if (c == kLeadingAxis)
      for (const char* v : {"mean", "meps", "rms", "inv"}) types[v] = ValueType{DType::Float32, {1, 3, 6}};
    types["w"] = ValueType{DType::Float32, {6}};
    types["rowscale"] = ValueType{DType::Float32, {3, 6}};
    const int fused =
        fuse_rms_norm(g, types, c == kRmsExposed ? std::set<std::string>{"rms"} : std::set<std::string>{});
    return std::tuple{fused, g, types};
  };
  for (Case c : {kPowReciprocalScale, kMulDivScaleFirst, kNoScale, kScaleOverRows}) {
    SCOPED_TRACE(c);
    auto [fused, g, types] = make(c);
    EXPECT_EQ(fused, 1);
    const bool scaled = c == kPowReciprocalScale || c == kMulDivScaleFirst;
    ASSERT_EQ(g.nodes.size(), scaled ? 3u : 4u);
    const Node& n = g.nodes[1];
    EXPECT_EQ(n.op_type, "RMSNorm");
    EXPECT_EQ(n.domain, kCbtDomain);
    EXPECT_EQ(n.inputs, (scaled ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}));
    ASSERT_EQ(n.outputs.size(), 2u);
    EXPECT_EQ(n.outputs[0], scaled ? "y" : "normed");
    EXPECT_EQ(types.at(n.outputs[1]).shape, (Shape{4, 3, 1}));
    EXPECT_EQ(n.attrs.get_int("axis", 0), 2);
    EXPECT_FLOAT_EQ(n.attrs.get_float("epsilon", 0), 1e-6f);
    if (c == kScaleOverRows) EXPECT_EQ(g.nodes[2].inputs, (std::vector<std::string>{"normed", "rowscale"}));
    for (const char* v : {"sq", "mean", "meps", "rms", "inv"}) EXPECT_EQ(types.count(v), 0u) << v;
  }
  for (Case c : {kMeanReadElsewhere, kRmsExposed, kLeadingAxis, kTrainedEpsilon, kCube}) {
    SCOPED_TRACE(c);
    auto [fused, g, types] = make(c);
    EXPECT_EQ(fused, 0);
    EXPECT_EQ(count(g, "RMSNorm", false), 0);
    EXPECT_EQ(count(g, "Sqrt", false), 1);
  }
}

}  // namespace
}  // namespace cbt
