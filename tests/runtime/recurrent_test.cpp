// LSTM, GRU and RNN unrolled at binding (graph/recurrent.h): what cannot be unrolled is refused
// naming the node and the reason, and the ops they become have kernels on both devices (which
// `cbtrain ops` claims for them). Their values against onnxruntime and their gradients are
// tested on the fixtures (Cli.RecurrentModelsMatchOnnxruntimeAndTrain,
// ModelGradCheck.RecurrentOpsUnrolled), and PyTorch's layers by models/seqnet's trajectories.
#include "graph/recurrent.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "common/op_harness.h"
#include "common/paths.h"
#include "graph/bind.h"
#include "graph/errors.h"
#include "onnx_import/model_io.h"
#include "ops/kernel.h"
#include "runtime/inferencer.h"
#include "runtime/program.h"

namespace cbt {
namespace {

// An LSTM of hidden size 3 over the batch's x (N, 4, 5) made time-major, with `edit` applied to
// the node and graph.
Graph lstm_graph(const std::function<void(Node&, Graph&)>& edit) {
  Graph g;
  g.opset = 17;
  g.inputs.push_back({"x", DType::Float32, {Dim{-1, "N"}, Dim{4, ""}, Dim{5, ""}}});
  Node t;
  t.op_type = "Transpose";
  t.inputs = {"x"};
  t.outputs = {"xt"};
  t.attrs.set("perm", std::vector<int64_t>{1, 0, 2});
  g.nodes.push_back(t);
  g.initializers.emplace("W", test::random_tensor(DType::Float32, {1, 12, 5}, 1));
  g.initializers.emplace("R", test::random_tensor(DType::Float32, {1, 12, 3}, 2));
  Node n;
  n.op_type = "LSTM";
  n.name = "lstm";
  n.inputs = {"xt", "W", "R"};
  n.outputs = {"Y"};
  n.attrs.set("hidden_size", int64_t{3});
  edit(n, g);
  g.nodes.push_back(n);
  g.outputs.push_back({"Y", DType::Float32, {}});
  return g;
}

std::string bind_error(const Graph& g) {
  BindOptions bo;
  bo.batch = 2;
  try {
    bind_graph(g, bo, cpu_evaluator(g.opset));
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(RecurrentTest, UnrollsOverTheBoundSequence) {
  BindOptions bo;
  bo.batch = 2;
  Graph g = lstm_graph([](Node&, Graph&) {});
  BoundGraph b = bind_graph(g, bo, cpu_evaluator(g.opset));
  EXPECT_EQ(b.types.at("Y").shape, (Shape{4, 1, 2, 3}));
  size_t matmuls = 0;
  for (const Node& n : b.graph.nodes) matmuls += n.op_type == "MatMul";
  EXPECT_EQ(matmuls, 1u + 3u) << "one projection of every step's input, one recurrence after the first step";
  for (const Node& n : b.graph.nodes) EXPECT_FALSE(is_recurrent(n)) << n.describe();
}

TEST(RecurrentTest, RefusesWhatItCannotUnrollNamingTheNode) {
  struct Case {
    const char* what;
    std::function<void(Node&, Graph&)> edit;
    const char* message;
  };
  const Case cases[] = {
      {"sequence_lens beyond the sequence",
       [](Node& n, Graph& g) {
         g.initializers.emplace("lens", Tensor::from_i64({5, 3}, {2}));
         n.inputs = {"xt", "W", "R", "", "lens"};
       },
       "sequence_lens holds 5, outside [0, 4]"},
      {"float sequence_lens",
       [](Node& n, Graph& g) {
         g.initializers.emplace("lens", Tensor::from_f32({4, 3}, {2}));
         n.inputs = {"xt", "W", "R", "", "lens"};
       },
       "sequence_lens must be int32 or int64 of shape (2)"},
      {"more activation parameters than the functions take",
       [](Node& n, Graph&) { n.attrs.set("activation_alpha", std::vector<float>{0.1f}); },
       "activation_alpha or activation_beta holds more values than its activations take"},
      {"unknown activation",
       [](Node& n, Graph&) {
         n.attrs.set("activations", std::vector<std::string>{"Sigmoid", "Tanh", "Gelu"});
       },
       "activation 'Gelu' is not supported"},
      {"too few activations", [](Node& n, Graph&) { n.attrs.set("activations", std::vector<std::string>{"Sigmoid"}); },
       "activations lists 1 functions, expected 3"},
      {"direction", [](Node& n, Graph&) { n.attrs.set("direction", std::string("sideways")); }, "direction must be"},
      {"R no node produces", [](Node& n, Graph&) { n.inputs[2] = "ghost"; },
       "input 'ghost' is not produced by any earlier node"},
      {"W of another hidden size", [](Node& n, Graph&) { n.attrs.set("hidden_size", int64_t{4}); }, "W has shape"},
      {"bidirectional with one direction's weights",
       [](Node& n, Graph&) { n.attrs.set("direction", std::string("bidirectional")); }, "W has shape (1, 12, 5)"},
      {"negative clip", [](Node& n, Graph&) { n.attrs.set("clip", -1.0f); }, "clip must be positive"},
      {"layout", [](Node& n, Graph&) { n.attrs.set("layout", int64_t{2}); }, "layout must be 0 or 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string err = bind_error(lstm_graph(c.edit));
    EXPECT_NE(err.find("LSTM 'lstm'"), std::string::npos) << err;
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
  }
}

TEST(RecurrentTest, GruAndRnnRefuseLstmOnlyInputs) {
  Graph g = lstm_graph([](Node& n, Graph& g) {
    n.op_type = "GRU";
    g.initializers["W"] = test::random_tensor(DType::Float32, {1, 9, 5}, 1);
    g.initializers["R"] = test::random_tensor(DType::Float32, {1, 9, 3}, 2);
    g.initializers.emplace("c0", test::random_tensor(DType::Float32, {1, 2, 3}, 3));
    n.inputs = {"xt", "W", "R", "", "", "", "c0"};
  });
  EXPECT_NE(bind_error(g).find("only LSTM has initial_c"), std::string::npos) << bind_error(g);
}

// The forms a fused kernel computes, kept whole (as for a GPU): their CPU kernels (the CUDA
// kernels' reference) run the unrolled ops, and RecurrentGrad's gradients, checked in f64
// against finite differences, are right for every input.
TEST(RecurrentTest, WholeNodesHaveRightGradients) {
  struct Case {
    const char* op;
    int64_t gates, dirs;
    std::vector<std::string> activations;
  };
  const Case cases[] = {
      {"LSTM", 4, 2, {}}, {"LSTM", 4, 1, {}}, {"GRU", 3, 1, {}}, {"RNN", 1, 2, {"Relu", "Relu"}}, {"RNN", 1, 1, {}}};
  const int64_t T = 3, N = 2, I = 4, H = 3;
  uint64_t seed = 40;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " dirs " + std::to_string(c.dirs));
    Attributes a;
    a.set("hidden_size", H);
    if (c.dirs == 2) a.set("direction", std::string("bidirectional"));
    if (!c.activations.empty()) a.set("activations", c.activations);
    if (std::string(c.op) == "GRU") a.set("linear_before_reset", int64_t{1});
    const bool lstm = std::string(c.op) == "LSTM";
    Node n = test::make_node(c.op, lstm ? 7 : 6, lstm ? 3 : 2, a);
    n.inputs[4] = "";  // no sequence_lens
    std::vector<Tensor> in{test::random_tensor(DType::Float64, {T, N, I}, ++seed),
                           test::random_tensor(DType::Float64, {c.dirs, c.gates * H, I}, ++seed, 0.5),
                           test::random_tensor(DType::Float64, {c.dirs, c.gates * H, H}, ++seed, 0.5),
                           test::random_tensor(DType::Float64, {c.dirs, 2 * c.gates * H}, ++seed, 0.3),
                           Tensor(),
                           test::random_tensor(DType::Float64, {c.dirs, N, H}, ++seed, 0.5)};
    if (lstm) in.push_back(test::random_tensor(DType::Float64, {c.dirs, N, H}, ++seed, 0.5));
    test::GradCheckOptions o;
    o.check_inputs = lstm ? std::vector<int>{0, 1, 2, 3, 5, 6} : std::vector<int>{0, 1, 2, 3, 5};
    const test::GradCheckResult r = test::grad_check(n, in, o);
    EXPECT_TRUE(r.ok) << r.report;
  }
}

// Bound for a GPU, PyTorch's exports keep their recurrent nodes whole (cuDNN runs them); the
// forms no fused kernel computes are unrolled all the same.
TEST(RecurrentTest, GpuBindingKeepsTheFusedFormsWhole) {
  auto count = [](const std::string& file, bool fused) {
    ImportedModel m = load_model(test::source_path(file));
    BindOptions bo;
    bo.batch = 4;
    bo.fused_recurrent = fused;
    BoundGraph b = bind_graph(m.graph, bo, cpu_evaluator(m.graph.opset));
    int64_t kept = 0;
    for (const Node& n : b.graph.nodes) kept += is_recurrent(n);
    return kept;
  };
  EXPECT_EQ(count("models/seqnet/seqnet.ts17.onnx", true), 4) << "two LSTM layers, the GRU and the RNN";
  EXPECT_EQ(count("models/seqnet/seqnet.ts17.onnx", false), 0);
  // recurrent14: the batch-first LSTM with peepholes and the reverse GRU with clip are unrolled;
  // the GRU with linear_before_reset, the Relu RNN and the LSTM with full sequence_lens are not.
  EXPECT_EQ(count("tests/onnx_import/data/recurrent14.onnx", true), 3);
  EXPECT_EQ(count("tests/onnx_import/data/recurrent9.onnx", true), 0) << "clip; GRU without linear_before_reset";
  EXPECT_EQ(count("tests/onnx_import/data/recurrent_lens.onnx", true), 0) << "sequence lengths from the data";
}

TEST(RecurrentTest, UnrolledOpsHaveKernelsOnBothDevices) {
  std::set<std::string> ops;
  for (const char* file : {"tests/onnx_import/data/recurrent14.onnx", "tests/onnx_import/data/recurrent_lens.onnx"}) {
    ImportedModel m = load_model(test::source_path(file));
    BindOptions bo;
    bo.batch = 3;
    BoundGraph b = bind_graph(m.graph, bo, cpu_evaluator(m.graph.opset));
    for (const Node& n : b.graph.nodes) ops.insert(n.op_type);
    EXPECT_TRUE(unsupported_ops(m.graph, DeviceKind::CPU).empty()) << file;
  }
  EXPECT_TRUE(ops.count("Less")) << "no sequence masks";
  EXPECT_TRUE(ops.count("MatMul") && ops.count("Sigmoid") && ops.count("Split")) << "not unrolled";
  const bool cuda_built = !kernels_for(DeviceKind::CUDA).empty();
  for (const auto& op : ops) {
    EXPECT_TRUE(find_kernel("", op, DeviceKind::CPU)) << op;
    if (cuda_built) EXPECT_TRUE(find_kernel("", op, DeviceKind::CUDA)) << op;
  }
}

}  // namespace
}  // namespace cbt
