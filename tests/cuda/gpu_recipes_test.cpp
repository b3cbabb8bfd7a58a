// Training recipes on the GPU: gradient clipping (inside each learner's CUDA graph, and on
// the averaged gradient of synchronous SGD) and frozen parameters give the CPU's results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "common/gpu.h"
#include "common/op_harness.h"
#include "common/paths.h"
#include "onnx_import/model_io.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

std::map<std::string, Tensor> train(const Graph& g, Device device, Algorithm algo, int rounds) {
  TrainerOptions to;
  to.batch_size = 16;
  to.learners = 2;
  to.algorithm = algo;
  to.device = device;
  to.optimizer.lr = 0.05f;
  to.clip_grad_norm = 0.3f;  // below LeNet-5's gradient norms at the start: clipping acts
  to.graph.frozen = {"conv1.weight", "fc2.bias"};
  Trainer t(g, to);
  for (int r = 0; r < rounds; ++r) {
    std::vector<Tensor> xs, ys;
    for (int j = 0; j < 2; ++j) {
      xs.push_back(test::random_tensor(DType::Float32, t.input_type().shape, 700 + 10 * r + j));
      ys.push_back(test::random_int_tensor({16}, 0, 10, 900 + 10 * r + j));
    }
    t.round(xs, ys);
  }
  return t.trained_initializers();
}

TEST(GpuRecipes, ClippingAndFreezingMatchTheCpu) {
  CBT_SKIP_WITHOUT_GPU();
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  for (Algorithm a : {Algorithm::Sma, Algorithm::Ssgd}) {
    auto cpu = train(m.graph, Device{}, a, 6);
    auto gpu = train(m.graph, Device{DeviceKind::CUDA, 0}, a, 6);
    ASSERT_EQ(cpu.size(), gpu.size());
    EXPECT_EQ(gpu.count("conv1.weight"), 0u) << "frozen: not replaced in the export";
    for (const auto& [name, want] : cpu) {
      const Tensor& got = gpu.at(name);
      double num = 0, den = 0;
      for (int64_t i = 0; i < want.numel(); ++i) {
        num += std::pow(got.at_f64(i) - want.at_f64(i), 2);
        den += std::pow(want.at_f64(i), 2);
      }
      EXPECT_LT(std::sqrt(num / std::max(den, 1e-30)), 1e-4) << name << (a == Algorithm::Sma ? " sma" : " ssgd");
    }
  }
}

}  // namespace
}  // namespace cbt
