// The constants inside exported decompositions (graph/decomposition_constants.h): the dynamo
// export of GroupNorm trains what the TorchScript export and PyTorch train; an
// InstanceNormalization of its own, or ones read by another node too, stay parameters.
#include "graph/decomposition_constants.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/paths.h"
#include "onnx_import/model_io.h"

namespace cbt {
namespace {

// The float initializers that train (not constants), and how many values they hold.
std::pair<std::set<std::string>, int64_t> trainable(const Graph& g) {
  std::set<std::string> names;
  int64_t values = 0;
  for (const auto& [name, t] : g.initializers)
    if (is_floating(t.dtype()) && !g.constant_initializers.count(name)) names.insert(name), values += t.numel();
  return {names, values};
}

TEST(DecompositionConstants, DynamoGroupNormTrainsWhatTorchScriptsDoes) {
  const Graph dynamo = load_model(test::source_path("models/upnet/upnet.dynamo.onnx")).graph;
  const Graph ts = load_model(test::source_path("models/upnet/upnet.ts17.onnx")).graph;
  EXPECT_TRUE(dynamo.constant_initializers.count("val_9") && dynamo.constant_initializers.count("val_12"))
      << "GroupNorm's ones and zeros (4 groups)";
  const auto [names, values] = trainable(dynamo);
  EXPECT_EQ(values, trainable(ts).second);
  EXPECT_EQ(names.size(), trainable(ts).first.size());
  EXPECT_TRUE(names.count("inorm.weight") && names.count("inorm.bias")) << "InstanceNorm2d's own scale and shift";
}

// x -> Reshape -> InstanceNormalization(ones, zeros) -> Reshape, and variants.
Graph group_norm_graph(bool reshape_back, bool ones_read_elsewhere) {
  Graph g;
  g.opset = 17;
  g.initializers.emplace("shape_in", Tensor::from_i64({0, 2, -1}, {3}));
  g.initializers.emplace("shape_out", Tensor::from_i64({0, 4, 3}, {3}));
  g.initializers.emplace("ones", Tensor::from_f32({1, 1}, {2}));
  g.initializers.emplace("zeros", Tensor::from_f32({0, 0}, {2}));
  auto node = [&g](const char* op, std::vector<std::string> in, std::string out) {
    Node n;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = {std::move(out)};
    g.nodes.push_back(n);
  };
  node("Reshape", {"x", "shape_in"}, "groups");
  node("InstanceNormalization", {"groups", "ones", "zeros"}, "normed");
  node(reshape_back ? "Reshape" : "Relu",
       reshape_back ? std::vector<std::string>{"normed", "shape_out"} : std::vector<std::string>{"normed"}, "y");
  if (ones_read_elsewhere) node("Mul", {"y", "ones"}, "z");
  return g;
}

TEST(DecompositionConstants, OnlyTheGroupNormPatternIsMarked) {
  Graph g = group_norm_graph(true, false);
  EXPECT_EQ(mark_decomposition_constants(g), (std::vector<std::string>{"ones", "zeros"}));
  Graph own = group_norm_graph(false, false);  // not reshaped back: an InstanceNormalization of its own
  EXPECT_TRUE(mark_decomposition_constants(own).empty());
  Graph shared = group_norm_graph(true, true);  // the ones also scale another value: a parameter
  EXPECT_EQ(mark_decomposition_constants(shared), (std::vector<std::string>{"zeros"}));
  Graph trained = group_norm_graph(true, false);  // values moved away from ones: trained, a parameter
  trained.initializers.at("ones").ptr<float>()[1] = 1.25f;
  EXPECT_TRUE(mark_decomposition_constants(trained).empty());
}

}  // namespace
}  // namespace cbt
