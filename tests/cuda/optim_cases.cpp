// CUDA-vs-CPU cases of the optimizer updates (in place over flat buffers: the harness compares
// the updated inputs).
#include <cmath>

#include "common/op_harness.h"
#include "cuda/cuda_cases.h"

namespace cbt::test {
namespace {

Tensor hyper(std::vector<float> v) {
  v.resize(8, 0.0f);  // the trainer's hyper tensor has 8 slots
  return Tensor::from_f32(v, {8});
}

Tensor abs_random(int64_t n, uint64_t seed) {
  Tensor t = random_tensor(DType::Float32, {n}, seed);
  for (int64_t i = 0; i < n; ++i) t.ptr<float>()[i] = std::fabs(t.ptr<float>()[i]);
  return t;
}

std::vector<CudaCase> optim_cases() {
  std::vector<CudaCase> cases;
  // 1, odd, and more elements than one grid covers (grid-stride loop).
  for (int64_t n : {int64_t{1}, int64_t{1003}, int64_t{(1 << 21) + 5}}) {
    CudaCase sgd;
    sgd.name = "SGDMomentum/n" + std::to_string(n);
    sgd.node = make_node("SGDMomentum", 4, 0, {}, kCbtDomain);
    sgd.inputs = {random_tensor(DType::Float32, {n}, 1), random_tensor(DType::Float32, {n}, 2),
                  random_tensor(DType::Float32, {n}, 3, 0.1), hyper({0.05f, 0.9f, 5e-4f, 0.5f})};
    sgd.check_backward = false;
    cases.push_back(sgd);

    CudaCase adam;
    adam.name = "AdamW/n" + std::to_string(n);
    adam.node = make_node("AdamW", 5, 0, {}, kCbtDomain);
    adam.inputs = {random_tensor(DType::Float32, {n}, 4), random_tensor(DType::Float32, {n}, 5),
                   random_tensor(DType::Float32, {n}, 6, 0.1), abs_random(n, 7),
                   hyper({1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 3.0f, 0.5f})};
    adam.check_backward = false;
    cases.push_back(adam);

    // Clipping by global norm: a bound below the norm (clips) and above it (leaves g).
    for (float max_norm : {0.5f, 1e6f}) {
      Attributes a;
      a.set("max_norm", max_norm);
      a.set("scale", 0.5f);
      CudaCase clip;
      clip.name = "ClipGradNorm/n" + std::to_string(n) + (max_norm < 1 ? "/clipped" : "/kept");
      clip.node = make_node("ClipGradNorm", 1, 0, a, kCbtDomain);
      clip.inputs = {random_tensor(DType::Float32, {n}, 8, 2.0)};
      clip.check_backward = false;
      cases.push_back(clip);
    }
  }
  return cases;
}

CBT_CUDA_CASES(optim_cases);

}  // namespace
}  // namespace cbt::test
