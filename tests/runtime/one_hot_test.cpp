// OneHot rewritten when the graph is bound (graph/one_hot.h): what it refuses, naming the node.
// Its values against onnxruntime (every axis, negative, float and out-of-range indices):
// Cli.OneHotModelsMatchOnnxruntimeAndTrain; gradients: ModelGradCheck.OneHotRewritten.
#include <gtest/gtest.h>

#include <functional>

#include "graph/bind.h"
#include "graph/errors.h"
#include "runtime/inferencer.h"

namespace cbt {
namespace {

// OneHot of data indices (N, 3) with depth 4 and values (0, 1), after `edit`; binding's error.
std::string bind_error(const std::function<void(Node&, Graph&)>& edit) {
  Graph g;
  g.opset = 17;
  g.inputs.push_back({"i", DType::Int64, {Dim{-1, "N"}, Dim{3, ""}}});
  g.initializers.emplace("depth", Tensor::from_i64({4}, {}));
  g.initializers.emplace("values", Tensor::from_f32({0.0f, 1.0f}, {2}));
  Node n;
  n.op_type = "OneHot";
  n.name = "hot";
  n.inputs = {"i", "depth", "values"};
  n.outputs = {"y"};
  edit(n, g);
  g.nodes.push_back(n);
  g.outputs.push_back({"y", DType::Float32, {}});
  BindOptions bo;
  bo.batch = 2;
  try {
    BoundGraph b = bind_graph(g, bo, cpu_evaluator(g.opset));
    EXPECT_EQ(b.types.at("y").shape.size(), 3u);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(OneHotTest, RefusesWhatItCannotRewriteNamingTheNode) {
  EXPECT_EQ(bind_error([](Node&, Graph&) {}), "");
  const struct {
    const char* what;
    std::function<void(Node&, Graph&)> edit;
    const char* message;
  } cases[] = {
      {"depth from the data",
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
      {"axis 3 of a rank-3 output", [](Node& n, Graph&) { n.attrs.set("axis", int64_t{3}); }, "axis 3 is out of range"},
      {"no values", [](Node& n, Graph&) { n.inputs.resize(2); }, "takes indices, depth and values"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string err = bind_error(c.edit);
    EXPECT_NE(err.find("OneHot 'hot'"), std::string::npos) << err;
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace cbt
