// CUDA-vs-CPU cases of the SMA updates and the buffer reduction (in place over flat buffers:
// the harness compares the updated inputs and the outputs).
#include "common/op_harness.h"
#include "cuda/cuda_cases.h"

namespace cbt::test {
namespace {

Tensor hyper(std::vector<float> v) {
  v.resize(8, 0.0f);
  return Tensor::from_f32(v, {8});
}

std::vector<CudaCase> sma_cases() {
  std::vector<CudaCase> cases;
  for (int64_t n : {int64_t{1}, int64_t{1003}, int64_t{(1 << 21) + 5}}) {
    CudaCase learner;
    learner.name = "SMALearnerUpdate/n" + std::to_string(n);
    learner.node = make_node("SMALearnerUpdate", 6, 0, {}, kCbtDomain);
    learner.inputs = {random_tensor(DType::Float32, {n}, 1),      random_tensor(DType::Float32, {n}, 2),
                      random_tensor(DType::Float32, {n}, 3, 0.1), random_tensor(DType::Float32, {n}, 4),
                      random_tensor(DType::Float32, {n}, 5),      hyper({0.05f, 0.9f, 5e-4f, 0.25f})};
    learner.check_backward = false;
    cases.push_back(learner);

    CudaCase central;
    central.name = "SMACentralUpdate/n" + std::to_string(n);
    central.node = make_node("SMACentralUpdate", 4, 0, {}, kCbtDomain);
    central.inputs = {random_tensor(DType::Float32, {n}, 6), random_tensor(DType::Float32, {n}, 7),
                      random_tensor(DType::Float32, {n}, 8, 0.1), hyper({0.9f})};
    central.check_backward = false;
    cases.push_back(central);

    for (size_t k : {size_t{1}, size_t{3}, size_t{16}}) {
      CudaCase sum;
      sum.name = "SumBuffers/n" + std::to_string(n) + "_k" + std::to_string(k);
      Attributes a;
      a.set("scale", 1.0f / static_cast<float>(k));
      sum.node = make_node("SumBuffers", k, 1, a, kCbtDomain);
      for (size_t j = 0; j < k; ++j) sum.inputs.push_back(random_tensor(DType::Float32, {n}, 20 + j));
      sum.check_backward = false;
      sum.rtol = 1e-6;
      sum.atol = 1e-6;
      cases.push_back(sum);
    }
  }
  return cases;
}

CBT_CUDA_CASES(sma_cases);

}  // namespace
}  // namespace cbt::test
