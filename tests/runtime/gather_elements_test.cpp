// GatherElements rewritten when the graph is bound (graph/gather_elements.h): what it refuses,
// naming the node. Its values against onnxruntime (axes 1 and 2, negative and int32 indices,
// indices narrower than the data): Cli.GatherElementsModelsMatchOnnxruntimeAndTrain;
// gradients: ModelGradCheck.GatherElementsRewritten.
#include <gtest/gtest.h>

#include <functional>

#include "common/op_harness.h"
#include "graph/bind.h"
#include "graph/errors.h"
#include "runtime/inferencer.h"

namespace cbt {
namespace {

// GatherElements of data (N, 4, 5) at constant indices (2, 4, 3) along axis 2, after `edit`;
// binding's error ("" when it binds).
std::string bind_error(const std::function<void(Node&, Graph&)>& edit) {
  Graph g;
  g.opset = 17;
  g.inputs.push_back({"x", DType::Float32, {Dim{-1, "N"}, Dim{4, ""}, Dim{5, ""}}});
  g.initializers.emplace("i", test::random_int_tensor({2, 4, 3}, -5, 5, 94));
  Node n;
  n.op_type = "GatherElements";
  n.name = "pick";
  n.inputs = {"x", "i"};
  n.outputs = {"y"};
  n.attrs.set("axis", int64_t{2});
  edit(n, g);
  g.nodes.push_back(n);
  g.outputs.push_back({"y", DType::Float32, {}});
  BindOptions bo;
  bo.batch = 2;
  try {
    BoundGraph b = bind_graph(g, bo, cpu_evaluator(g.opset));
    EXPECT_EQ(b.types.at("y").shape, (Shape{2, 4, 3}));
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(GatherElementsTest, RefusesWhatItCannotRewriteNamingTheNode) {
  EXPECT_EQ(bind_error([](Node&, Graph&) {}), "");
  const struct {
    const char* what;
    std::function<void(Node&, Graph&)> edit;
    const char* message;
  } cases[] = {
      {"indices of another rank",
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
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string err = bind_error(c.edit);
    EXPECT_NE(err.find("GatherElements 'pick'"), std::string::npos) << err;
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace cbt
