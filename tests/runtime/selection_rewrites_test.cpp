// OneHot and GatherElements rewritten when the graph is bound (graph/one_hot.h,
// graph/gather_elements.h, one one-hot mask): what they refuse, naming the node. Their values
// against onnxruntime: Cli.OneHotModelsMatchOnnxruntimeAndTrain,
// Cli.GatherElementsModelsMatchOnnxruntimeAndTrain; gradients: ModelGradCheck.OneHotRewritten,
// ModelGradCheck.GatherElementsRewritten.
#include <gtest/gtest.h>

#include <functional>

#include "common/op_harness.h"
#include "graph/bind.h"
#include "graph/errors.h"
#include "runtime/inferencer.h"

namespace cbt {
namespace {

using Edit = std::function<void(Node&, Graph&)>;

struct Refusal {
  const char* what;
  Edit edit;
  const char* message;
};

// One node `n` over the data input x of `x_dims` (dim 0 the batch, bound to 2) and `g`'s
// initializers: binds without `edit` to an output of `out_rank`, and with each refusal's edit
// fails with a message naming the node and the problem.
void expect_refusals(const Node& n, Graph g, const std::vector<Dim>& x_dims, DType x_type, size_t out_rank,
                     const std::vector<Refusal>& refusals) {
  auto bind_error = [&](const Edit& edit) -> std::string {
    Graph h = g;
    h.opset = 17;
    h.inputs.insert(h.inputs.begin(), ValueInfo{"x", x_type, x_dims});
    Node node = n;
    edit(node, h);
    h.nodes.push_back(node);
    h.outputs.push_back({"y", DType::Float32, {}});
    BindOptions bo;
    bo.batch = 2;
    try {
      BoundGraph b = bind_graph(h, bo, cpu_evaluator(h.opset));
      EXPECT_EQ(b.types.at("y").shape.size(), out_rank);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(bind_error([](Node&, Graph&) {}), "");
  for (const Refusal& r : refusals) {
    SCOPED_TRACE(r.what);
    const std::string err = bind_error(r.edit);
    EXPECT_NE(err.find(n.describe()), std::string::npos) << err;
    EXPECT_NE(err.find(r.message), std::string::npos) << err;
  }
}

Node node(const char* op, std::vector<std::string> inputs) {
  Node n;
  n.op_type = op;
  n.name = "sel";
  n.inputs = std::move(inputs);
  n.outputs = {"y"};
  return n;
}

// OneHot of data indices (N, 3) with depth 4 and values (0, 1).
TEST(SelectionRewritesTest, OneHotRefusesNamingTheNode) {
  Graph g;
  g.initializers.emplace("depth", Tensor::from_i64({4}, {}));
  g.initializers.emplace("values", Tensor::from_f32({0.0f, 1.0f}, {2}));
  expect_refusals(node("OneHot", {"x", "depth", "values"}), g, {Dim{-1, "N"}, Dim{3, ""}}, DType::Int64, 3,
                  {{"depth from the data",
                    [](Node& n, Graph& g) {
                      g.inputs.push_back({"d", DType::Int64, {Dim{-1, "N"}}});
                      n.inputs[1] = "d";
                    },
                    "depth must be a constant of one value"},
                   {"depth 0", [](Node&, Graph& g) { g.initializers["depth"] = Tensor::from_i64({0}, {}); },
                    "depth must be positive"},
                   {"three values",
                    [](Node&, Graph& g) {
                      g.initializers["values"] = Tensor::from_f32({0.0f, 1.0f, 2.0f}, {3});
                    },
                    "values must hold two values"},
                   {"axis 3 of a rank-3 output", [](Node& n, Graph&) { n.attrs.set("axis", int64_t{3}); },
                    "axis 3 is out of range"},
                   {"no values", [](Node& n, Graph&) { n.inputs.resize(2); }, "takes indices, depth and values"},
                   {"values no node produces", [](Node& n, Graph&) { n.inputs[2] = "ghost"; },
                    "input 'ghost' is not produced by any earlier node"}});
}

// GatherElements of data (N, 4, 5) at constant indices (2, 4, 3) along axis 2.
TEST(SelectionRewritesTest, GatherElementsRefusesNamingTheNode) {
  Graph g;
  g.initializers.emplace("i", test::random_int_tensor({2, 4, 3}, -5, 5, 94));
  Node n = node("GatherElements", {"x", "i"});
  n.attrs.set("axis", int64_t{2});
  expect_refusals(
      n, g, {Dim{-1, "N"}, Dim{4, ""}, Dim{5, ""}}, DType::Float32, 3,
      {{"indices of another rank",
        [](Node&, Graph& g) {
          g.initializers["i"] = test::random_int_tensor({2, 4}, 0, 5, 95);
        },
        "must have one rank"},
       {"axis 3", [](Node& n, Graph&) { n.attrs.set("axis", int64_t{3}); }, "axis 3 is out of range for rank 3"},
       {"indices wider than the data",
        [](Node&, Graph& g) {
          g.initializers["i"] = test::random_int_tensor({2, 6, 3}, 0, 5, 96);
        },
        "exceed data (2, 4, 5) along axis 1"},
       {"float indices",
        [](Node&, Graph& g) {
          g.initializers["i"] = test::random_tensor(DType::Float32, {2, 4, 3}, 97);
        },
        "indices must be int64 or int32"},
       {"one input", [](Node& n, Graph&) { n.inputs.resize(1); }, "takes data and indices"},
       {"indices no node produces", [](Node& n, Graph&) { n.inputs[1] = "ghost"; },
        "input 'ghost' is not produced by any earlier node"}});
}

}  // namespace
}  // namespace cbt
