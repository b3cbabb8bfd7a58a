// BatchNorm + Relu fusion (graph/fusion.h): the fused training step computes exactly what the
// unfused one does, with fewer nodes.
#include <gtest/gtest.h>

#include <random>

#include "common/op_harness.h"
#include "common/paths.h"
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

std::map<std::string, Tensor> train(const Graph& model, bool fuse, Graph* step) {
  TrainerOptions to;
  to.batch_size = 4;
  to.deterministic = true;
  to.optimizer.lr = 0.05f;
  to.graph.fuse = fuse;
  Trainer trainer(model, to);
  *step = trainer.training_graph().graph;
  std::mt19937_64 rng(23);
  for (int s = 0; s < 4; ++s) {
    Tensor x = test::random_tensor(DType::Float32, {4, 1, 28, 28}, rng());
    Tensor y(DType::Int64, {4});
    for (int64_t i = 0; i < 4; ++i) y.ptr<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
    trainer.step(x, y);
  }
  return trainer.trained_initializers();
}

TEST(Fusion, BatchNormReluTrainsResNet20BitForBitAsTheSeparateNodes) {
  ImportedModel m = load_model(test::source_path("models/resnet20/resnet20.ts17.onnx"));
  Graph fused_step, plain_step;
  auto fused = train(m.graph, true, &fused_step);
  auto plain = train(m.graph, false, &plain_step);

  // ResNet-20: 19 Relus, 10 of them right after a BatchNorm (the other 9 follow the residual
  // Add); each fused pair also drops its ReluGrad.
  EXPECT_EQ(count(plain_step, "Relu", false), 19);
  EXPECT_EQ(count(fused_step, "Relu", false), 9);
  EXPECT_EQ(count(fused_step, "BatchNormTraining", true), 10);
  EXPECT_EQ(count(fused_step, "BatchNormGrad", true), 10);
  EXPECT_EQ(count(fused_step, "ReluGrad", false), count(plain_step, "ReluGrad", false) - 10);
  EXPECT_EQ(fused_step.nodes.size() + 20, plain_step.nodes.size());

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
    const Tensor& orig = m.graph.initializers.at(name);
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.ptr<float>()[i] != orig.ptr<float>()[i]) ++moved;
  }
  EXPECT_GT(moved, 100000);
}

}  // namespace
}  // namespace cbt
