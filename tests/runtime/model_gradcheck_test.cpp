// Whole-model gradient check in f64: the training graph's parameter gradients against
// central finite differences of the loss, on exported models with BatchNorm and residuals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "common/op_harness.h"
#include "common/paths.h"
#include "graph/autodiff.h"
#include "graph/composite_ops.h"
#include "onnx_import/model_io.h"
#include "runtime/inferencer.h"
#include "runtime/program.h"

namespace cbt {
namespace {

Graph to_f64(Graph g) {
  for (auto& [name, t] : g.initializers)
    if (t.dtype() == DType::Float32) t = cast_float(t, DType::Float64);
  for (auto& in : g.inputs)
    if (in.dtype == DType::Float32) in.dtype = DType::Float64;
  for (auto& n : g.nodes)  // a Cast to float32 (ONNX's type 1) casts to float64 (11)
    if (n.op_type == "Cast" && n.attrs.get_int("to", 0) == 1) n.attrs.set("to", int64_t{11});
  return g;
}

// `edit_data` may change the random data batch (e.g. zero a sample).
void check_graph(const std::string& file, Graph g, int64_t batch, int samples_per_param,
                 const TrainingGraphOptions& opt = {}, const std::function<void(Tensor&)>& edit_data = {}) {
  BindOptions bo;
  bo.batch = batch;
  BoundGraph bound = bind_graph(g, bo, cpu_evaluator(g.opset));
  TrainingGraph tg = build_training_graph(bound, opt);
  ASSERT_FALSE(tg.params.empty());
  for (const auto& f : opt.frozen) {  // frozen parameters get no gradient
    EXPECT_EQ(std::count(tg.params.begin(), tg.params.end(), f), 0) << f;
    EXPECT_TRUE(tg.graph.constant_initializers.count(f)) << f;
  }

  CpuBackend cpu;
  ProgramSpec spec;
  spec.nodes = tg.graph.nodes;
  spec.types = tg.types;
  spec.constants = tg.graph.initializers;
  spec.external[tg.data_input] = test::random_tensor(DType::Float64, tg.types.at(tg.data_input).shape, 11);
  if (edit_data) edit_data(spec.external[tg.data_input]);
  spec.external[tg.labels_input] = test::random_int_tensor({batch}, 0, 10, 12);
  spec.keep_alive.insert(tg.loss);
  for (const auto& [p, gname] : tg.grads) spec.keep_alive.insert(gname);
  spec.training = true;
  Program prog(std::move(spec), cpu);

  auto loss = [&] {
    prog.run(5);
    return prog.value(tg.loss).at_f64(0);
  };
  loss();
  std::map<std::string, Tensor> analytic;
  for (const auto& [p, gname] : tg.grads) analytic[p] = prog.value(gname).clone();
  for (const auto& [p, t] : analytic)
    for (int64_t i = 0; i < t.numel(); ++i)
      ASSERT_TRUE(std::isfinite(t.at_f64(i))) << file << ": " << p << "[" << i << "]";

  std::mt19937_64 rng(3);
  const double eps = 1e-7;  // small: a larger step can cross ReLU kinks of many activations
  int checked = 0;
  for (const auto& p : tg.params) {
    Tensor w = prog.value(p);
    for (int s = 0; s < samples_per_param; ++s) {
      int64_t i = static_cast<int64_t>(rng() % w.numel());
      double* v = w.ptr<double>() + i;
      double orig = *v;
      *v = orig + eps;
      double lp = loss();
      *v = orig - eps;
      double lm = loss();
      *v = orig;
      double numeric = (lp - lm) / (2 * eps);
      double a = analytic[p].at_f64(i);
      EXPECT_NEAR(a, numeric, 1e-6 + 1e-4 * std::max(std::fabs(a), std::fabs(numeric)))
          << file << ": parameter " << p << " element " << i;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
}

// A function that appends a node of the default domain (op, inputs, its one output, attributes)
// to g, for the tests that build their graph here.
auto node_adder(Graph& g) {
  return [&g](const char* op, std::vector<std::string> in, const char* out, Attributes a = {}) {
    Node n;
    n.op_type = op;
    n.name = out;
    n.inputs = std::move(in);
    n.outputs = {out};
    n.attrs = std::move(a);
    g.nodes.push_back(std::move(n));
  };
}

void check_model(const std::string& file, int64_t batch, int samples_per_param, const TrainingGraphOptions& opt = {}) {
  check_graph(file, to_f64(load_model(test::source_path(file)).graph), batch, samples_per_param, opt);
}

TEST(ModelGradCheck, LeNet5) { check_model("models/lenet5/lenet5.ts17.onnx", 3, 3); }

// The recipes through the whole model: label smoothing, MSE and BCE with logits on one-hot
// targets made from the class labels, and frozen parameters.
TEST(ModelGradCheck, LeNet5WithLabelSmoothing) {
  TrainingGraphOptions o;
  o.label_smoothing = 0.15f;
  check_model("models/lenet5/lenet5.ts17.onnx", 3, 3, o);
}
TEST(ModelGradCheck, MlpWithMseOnOneHotLabels) {
  TrainingGraphOptions o;
  o.loss = LossKind::MeanSquaredError;
  check_model("models/mlp/mlp.ts17.onnx", 2, 3, o);
}
TEST(ModelGradCheck, MlpWithBinaryCrossEntropyWithLogits) {
  TrainingGraphOptions o;
  o.loss = LossKind::BinaryCrossEntropy;
  check_model("models/mlp/mlp.ts17.onnx", 2, 3, o);
}
TEST(ModelGradCheck, LeNet5WithFrozenConvolutions) {
  TrainingGraphOptions o;
  o.frozen = {"conv1.weight", "conv1.bias", "conv2.weight"};
  check_model("models/lenet5/lenet5.ts17.onnx", 3, 3, o);
}
TEST(ModelGradCheck, ResNet20WithBatchNormAndResiduals) { check_model("models/resnet20/resnet20.ts17.onnx", 2, 1); }
// The recurrent fixtures: their gradients flow back through every unrolled step, both
// directions, the initial states, peepholes and biases.
TEST(ModelGradCheck, RecurrentOpsUnrolled) {
  check_model("tests/onnx_import/data/recurrent14.onnx", 3, 3);
  check_model("tests/onnx_import/data/recurrent9.onnx", 3, 3);
}

// Sequence lengths from the data: the steps past a sample's length hold its state (masks of
// Less and Cast); the gradient reaches every weight through the steps that count.
TEST(ModelGradCheck, RecurrentSequenceLengths) { check_model("tests/onnx_import/data/recurrent_lens.onnx", 3, 3); }

// LSTM with input_forget and HardSigmoid gates, GRU with LeakyRelu and ScaledTanh, RNN with Elu
// and Affine: the gradient through each function's parameters as unrolled.
TEST(ModelGradCheck, RecurrentActivationsWithParameters) {
  check_model("tests/onnx_import/data/recurrent_acts.onnx", 3, 3);
}
// F.normalize's form, ReduceL2 (expanded at load into Mul, ReduceSum, Sqrt), Max with an epsilon
// and Div, over a sample whose features are all zero: the norm's gradient there is 0 (as
// PyTorch's), not Sqrt's infinite derivative times zero.
TEST(ModelGradCheck, NormalizeOfAZeroSampleHasFiniteGradients) {
  // logits = Gemm(h / Max(ReduceL2(h), 1e-12), w2), h = MatMul(x, w1): no bias, so a zero
  // sample gives a zero row to normalise.
  Graph g;
  g.opset = 13;
  g.inputs.push_back({"x", DType::Float64, {Dim{-1, "N"}, Dim{6, ""}}});
  g.outputs.push_back({"logits", DType::Float64, {Dim{-1, "N"}, Dim{10, ""}}});
  g.initializers.emplace("w1", test::random_tensor(DType::Float64, {6, 4}, 21));
  g.initializers.emplace("w2", test::random_tensor(DType::Float64, {10, 4}, 22));
  g.initializers.emplace("eps", cast_float(Tensor::scalar_f32(1e-12f), DType::Float64));
  g.constant_initializers.insert("eps");
  auto node = node_adder(g);
  Attributes l2, gemm;
  l2.set("axes", std::vector<int64_t>{1});
  l2.set("keepdims", int64_t{1});
  gemm.set("transB", int64_t{1});
  node("MatMul", {"x", "w1"}, "h");
  node("ReduceL2", {"h"}, "norm", l2);
  node("Max", {"norm", "eps"}, "safe");
  node("Div", {"h", "safe"}, "unit");
  node("Gemm", {"unit", "w2"}, "logits", gemm);
  expand_composite_ops(g);
  check_graph("normalize", g, 3, 6, {}, [](Tensor& x) {
    for (int64_t j = 0; j < x.numel() / x.dim(0); ++j) x.ptr<double>()[j] = 0;  // sample 0
  });
}

// ReduceLogSumExp, ReduceLogSum, Max/Min chains, LRN and Shrink as expanded at load
// (composite_ops.h).
TEST(ModelGradCheck, CompositeOpsExpanded) {
  check_model("tests/onnx_import/data/composites13.onnx", 3, 3);
  check_model("tests/onnx_import/data/composites18.onnx", 3, 3);
  check_model("tests/onnx_import/data/lrn11.onnx", 3, 3);
  check_model("tests/onnx_import/data/lrn13.onnx", 3, 3);
  check_model("tests/onnx_import/data/shrink9.onnx", 3, 3);
}

// Einsum as rewritten when the graph is bound (einsum.h): nine equations, a trained weight.
TEST(ModelGradCheck, EinsumRewritten) {
  check_model("tests/onnx_import/data/einsum12.onnx", 3, 3);
  check_model("tests/onnx_import/data/einsum17.onnx", 3, 3);
}

// Einsum's diagonals (identity masks and sums): the gradient reaches the Gemm and the weight
// whose diagonal is taken.
TEST(ModelGradCheck, EinsumDiagonals) { check_model("tests/onnx_import/data/einsum_diag.onnx", 3, 3); }

// Attention, RMSNormalization and Swish as rewritten when the graph is bound (attention.h,
// rms_normalization.h) or loaded (composite_ops.h): the gradient reaches Q, K and V through the
// grouped heads, the soft cap, the guard of a query row no key may attend (a bool mask from the
// data), a trained float mask, the windows, and the norms' scales.
// ViT in float64 with the GPU's fusions (on the CPU's kernels): the attention cores as
// SoftmaxAttention (whose gradient recomputes the probabilities) and the GELUs as Gelu nodes.
TEST(ModelGradCheck, VitWithFusedAttentionAndGelu) {
  const std::string file = "models/architectures/vit.ts17.onnx";
  Graph g = to_f64(load_model(test::source_path(file)).graph);
  BindOptions bo;
  bo.batch = 2;
  TrainingGraphOptions gpu;
  gpu.gpu_fusions = true;
  const TrainingGraph tg = build_training_graph(bind_graph(g, bo, cpu_evaluator(g.opset)), gpu);
  auto count = [&](const char* op) {
    return std::count_if(tg.graph.nodes.begin(), tg.graph.nodes.end(), [&](const Node& n) { return n.op_type == op; });
  };
  EXPECT_EQ(count("SoftmaxAttentionGrad"), 2);
  EXPECT_EQ(count("GeluGrad"), 2);
  check_graph(file, g, 2, 2, gpu);
}

// Attention with a trained bias added to its scores (a relative-position bias, broadcast over
// the batch), fused into SoftmaxAttention with B as its fourth input: B's gradient is the
// scores' gradient (the backward's fourth output) summed to B's shape.
TEST(ModelGradCheck, FusedAttentionWithATrainedBias) {
  Graph g;
  g.opset = 17;
  g.inputs.push_back({"x", DType::Float64, {Dim{-1, "N"}, Dim{5, ""}, Dim{6, ""}}});
  g.outputs.push_back({"logits", DType::Float64, {Dim{-1, "N"}, Dim{10, ""}}});
  uint64_t seed = 40;
  for (auto [name, shape] : std::vector<std::pair<const char*, Shape>>{
           {"wq", {6, 4}}, {"wk", {6, 4}}, {"wv", {6, 3}}, {"bias", {5, 5}}, {"w2", {10, 15}}})
    g.initializers.emplace(name, test::random_tensor(DType::Float64, shape, ++seed));
  auto node = node_adder(g);
  Attributes perm, gemm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1});
  gemm.set("transB", int64_t{1});
  node("MatMul", {"x", "wq"}, "q");
  node("MatMul", {"x", "wk"}, "k");
  node("Transpose", {"k"}, "kt", perm);
  node("MatMul", {"x", "wv"}, "v");
  node("MatMul", {"q", "kt"}, "scores");
  node("Add", {"scores", "bias"}, "biased");
  node("Softmax", {"biased"}, "p");
  node("MatMul", {"p", "v"}, "o");
  node("Flatten", {"o"}, "flat");
  node("Gemm", {"flat", "w2"}, "logits", gemm);
  BindOptions bo;
  bo.batch = 3;
  TrainingGraphOptions gpu;
  gpu.gpu_fusions = true;
  const TrainingGraph tg = build_training_graph(bind_graph(g, bo, cpu_evaluator(g.opset)), gpu);
  int fused = 0, grads_with_ds = 0, sums = 0;
  for (const Node& n : tg.graph.nodes) {
    fused += n.op_type == "SoftmaxAttention" && n.inputs.size() == 4;
    grads_with_ds += n.op_type == "SoftmaxAttentionGrad" && n.outputs.size() == 4;
    sums += n.op_type == "ReduceSumTo";
  }
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(grads_with_ds, 1);
  EXPECT_GE(sums, 1);
  check_graph("attention_bias", g, 3, 6, gpu);
}

TEST(ModelGradCheck, AttentionAndRmsNormalization) { check_model("tests/onnx_import/data/attention23.onnx", 3, 3); }
TEST(ModelGradCheck, AttentionWindowsAndSwish) {
  check_model("tests/onnx_import/data/attention25.onnx", 3, 3);
  check_model("tests/onnx_import/data/swish24.onnx", 3, 3);
}

// RotaryEmbedding as rewritten when the graph is bound (rotary_embedding.h): the gradient
// reaches X through both forms; the caches are constants.
TEST(ModelGradCheck, RotaryEmbedding) { check_model("tests/onnx_import/data/rotary23.onnx", 3, 3); }

// SplitToSequence read by SequenceAt, a Split when bound (split_to_sequence.h): the gradient
// reaches every piece read, and none the pieces no one reads.
TEST(ModelGradCheck, SequenceSplit) { check_model("tests/onnx_import/data/sequence_split.onnx", 3, 3); }

// OneHot as rewritten when the graph is bound (one_hot.h): no gradient reaches its indices; the
// rest of the model, and its float depth, which is read and never trained.
TEST(ModelGradCheck, OneHotRewritten) { check_model("tests/onnx_import/data/onehot17.onnx", 3, 3); }

// GatherElements as rewritten when the graph is bound (gather_elements.h): the gradient reaches
// the gathered elements of the data.
TEST(ModelGradCheck, GatherElementsRewritten) { check_model("tests/onnx_import/data/gather17.onnx", 3, 3); }

// TopK: the gradient reaches g's selected values (largest along two axes, smallest) through
// TopKGrad; the indices' path carries none.
TEST(ModelGradCheck, TopKSelectedValues) { check_model("tests/onnx_import/data/topk11.onnx", 3, 3); }

// ScatterElements written and added (a repeated column): the gradient reaches both Gemms,
// the data's where no update overwrote it.
TEST(ModelGradCheck, ScatterElementsDataAndUpdates) { check_model("tests/onnx_import/data/scatter16.onnx", 3, 3); }

// GatherND and ScatterND (written and added): the gradient reaches both Gemms through them.
TEST(ModelGradCheck, GatherScatterND) { check_model("tests/onnx_import/data/nd16.onnx", 3, 3); }

// ScatterElements and ScatterND with max, min and mul: the gradient reaches both Gemms through
// data and updates, shared where an update ties with data, through Relu's zeros multiplied in
// (60 samples a parameter: the tie is in one row of the first Gemm's weight).
TEST(ModelGradCheck, ScatterReductions) { check_model("tests/onnx_import/data/scatter_reduce18.onnx", 3, 60); }

TEST(ModelGradCheck, MlpWithGelu) { check_model("models/mlp/mlp.ts17.onnx", 2, 3); }

}  // namespace
}  // namespace cbt
