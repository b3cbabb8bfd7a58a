// --precision bf16 on the GPU (graph/channels_last.h): ResNet-20's step with its convolutions,
// BatchNorms and residual Adds in bfloat16 channels-last computes what the float32 step does
// within bfloat16's rounding, and it learns.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/gpu.h"
#include "common/op_harness.h"
#include "common/paths.h"
#include "onnx_import/model_io.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

constexpr Device kGpu{DeviceKind::CUDA, 0};

struct TrainedRun {
  std::vector<float> losses;
  std::map<std::string, Tensor> weights;
  int conversions = 0;
};

// `steps` steps of ResNet-20 at batch 16 on the GPU; with `repeat` every step takes the first
// batch again (the loss of a batch learnt by heart must fall).
TrainedRun train(bool bf16, int steps, bool repeat) {
  ImportedModel m = load_model(test::source_path("models/resnet20/resnet20.ts17.onnx"));
  TrainerOptions to;
  to.batch_size = 16;
  to.device = kGpu;
  to.optimizer.lr = 0.05f;
  to.optimizer.momentum = 0.9f;
  to.graph.bf16_channels_last = bf16;
  Trainer trainer(m.graph, to);
  TrainedRun r;
  for (const Node& n : trainer.training_graph().graph.nodes)
    r.conversions += n.op_type == "ToChannelsLast" || n.op_type == "FromChannelsLast";
  std::mt19937_64 rng(5);
  Tensor x, y;
  for (int s = 0; s < steps; ++s) {
    if (s == 0 || !repeat) {
      x = test::random_tensor(DType::Float32, {16, 1, 28, 28}, rng());
      y = test::random_int_tensor({16}, 0, 10, rng());
    }
    r.losses.push_back(trainer.step(x, y));
  }
  r.weights = trainer.trained_initializers();
  return r;
}

TEST(Bf16Training, ResNet20sStepsFollowTheFloat32OnesWithinBfloat16Rounding) {
  CBT_SKIP_WITHOUT_GPU();
  const TrainedRun f32 = train(false, 4, false), bf16 = train(true, 4, false);
  EXPECT_EQ(f32.conversions, 0);
  EXPECT_EQ(bf16.conversions, 23 + 22);
  // The first loss is the forward pass alone; later ones carry earlier steps' rounding.
  EXPECT_NEAR(bf16.losses[0], f32.losses[0], 0.01 * f32.losses[0]);
  for (size_t s = 1; s < f32.losses.size(); ++s)
    EXPECT_NEAR(bf16.losses[s], f32.losses[s], 0.05 * f32.losses[s]) << "step " << s;
  // The weights stay float32 and move as the float32 run's do: the change of each tensor within
  // 10% of the float32 change's norm.
  ImportedModel m = load_model(test::source_path("models/resnet20/resnet20.ts17.onnx"));
  int compared = 0;
  for (const auto& [name, w] : f32.weights) {
    const Tensor& b = bf16.weights.at(name);
    ASSERT_EQ(b.dtype(), DType::Float32) << name;
    const Tensor& w0 = m.graph.initializers.at(name);
    double moved = 0, apart = 0;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const double d = w.ptr<float>()[i] - w0.ptr<float>()[i];
      const double e = b.ptr<float>()[i] - w.ptr<float>()[i];
      moved += d * d;
      apart += e * e;
      ASSERT_TRUE(std::isfinite(b.ptr<float>()[i])) << name;
    }
    if (moved == 0) continue;  // BatchNorm's tracked-batches counter and the like
    EXPECT_LT(std::sqrt(apart), 0.1 * std::sqrt(moved)) << name;
    ++compared;
  }
  EXPECT_GT(compared, 60);
}

TEST(Bf16Training, ResNet20LearnsABatchByHeartInBfloat16) {
  CBT_SKIP_WITHOUT_GPU();
  const TrainedRun bf16 = train(true, 30, true);
  EXPECT_LT(bf16.losses.back(), 0.2 * bf16.losses.front())
      << "first loss " << bf16.losses.front() << ", last " << bf16.losses.back();
}

}  // namespace
}  // namespace cbt
