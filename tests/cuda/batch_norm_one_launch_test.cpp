// BatchNorm's one-launch CUDA kernels (thread-block clusters) against its two-launch path
// (CBT_BN_ONE_LAUNCH): the same statistics, outputs and gradients bit for bit, for chunks of
// every size the kernels take, ragged chunks and the fused Relu included, and the path each
// learner count takes by default. The
// CUDA-vs-CPU cases (dense_cases.cpp, BatchNormalization/* and BatchNormTraining/*) compare
// the one-launch path with the CPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/gpu.h"
#include "common/op_harness.h"
#include "cuda/run_cuda_node.h"
#include "ops/cuda/batch_norm.h"
#include "ops/kernel.h"
#include "runtime/cuda/cuda_backend.h"

namespace cbt::test {
namespace {

// Sets CBT_BN_ONE_LAUNCH to `how` for the scope ("" unsets it).
struct OneLaunch {
  explicit OneLaunch(const std::string& how) {
    if (how.empty())
      unsetenv("CBT_BN_ONE_LAUNCH");
    else
      setenv("CBT_BN_ONE_LAUNCH", how.c_str(), 1);
  }
  ~OneLaunch() { unsetenv("CBT_BN_ONE_LAUNCH"); }
};

// Runs `node`'s CUDA kernel (run_cuda_node) with float32 outputs of `out_shapes`; returns the
// outputs and then the inputs, downloaded.
std::vector<Tensor> run(Backend& b, const Node& node, const std::vector<Tensor>& in,
                        const std::vector<Shape>& out_shapes) {
  std::vector<ValueType> types;
  for (const Shape& s : out_shapes) types.push_back({DType::Float32, s});
  return run_cuda_node(b, node, in, types);
}

struct Results {
  std::vector<Tensor> forward, backward;
};

// BatchNormTraining on x (shifted by 2, as after a Relu), then BatchNormGrad with random dY,
// on the path that CBT_BN_ONE_LAUNCH = `how` and the learner count select.
Results forward_and_backward(Backend& b, const Shape& x_shape, bool relu, uint64_t seed, const std::string& how) {
  OneLaunch env(how);
  const int64_t c = x_shape[1];
  Tensor x = random_tensor(DType::Float32, x_shape, seed);
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 2.0f;
  Tensor var = random_tensor(DType::Float32, {c}, seed + 4);
  for (int64_t i = 0; i < c; ++i) var.ptr<float>()[i] = 1.0f + std::abs(var.ptr<float>()[i]);
  Attributes a;
  a.set("epsilon", 1e-5f);
  a.set("momentum", 0.9f);
  a.set("relu", int64_t{relu});
  Node fwd = make_node("BatchNormTraining", 5, 3, a, kCbtDomain);
  Results r;
  r.forward = run(b, fwd,
                  {x, random_tensor(DType::Float32, {c}, seed + 1), random_tensor(DType::Float32, {c}, seed + 2),
                   random_tensor(DType::Float32, {c}, seed + 3), var},
                  {x_shape, {c}, {c}});
  // dY, X, scale, saved mean, saved 1/std (, Y with the fused Relu)
  std::vector<Tensor> in{random_tensor(DType::Float32, x_shape, seed + 5), x,
                         random_tensor(DType::Float32, {c}, seed + 1), r.forward[1], r.forward[2]};
  if (relu) in.push_back(r.forward[0]);
  Attributes g;
  g.set("epsilon", 1e-5f);
  g.set("relu", int64_t{relu});
  Node bwd = make_node("BatchNormGrad", in.size(), 3, g, kCbtDomain);
  r.backward = run(b, bwd, in, {x_shape, {c}, {c}});
  return r;
}

const char* const kForward[] = {"Y",     "saved mean", "saved 1/std",  "X",
                                "scale", "bias",       "running mean", "running variance"};
const char* const kBackward[] = {"dX", "dScale", "dBias"};

void expect_same(const Results& one, const Results& two, const std::string& what) {
  for (size_t i = 0; i < one.forward.size(); ++i)
    if (i != 3)  // X: read only
      EXPECT_TRUE(same_bytes(one.forward[i], two.forward[i])) << what << ": " << kForward[i];
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(same_bytes(one.backward[i], two.backward[i])) << what << ": " << kBackward[i];
}

// With one learner a GPU (blocks of about 1024 elements) the default path is one launch.
TEST(CudaBatchNorm, OneLaunchKernelsGiveTheTwoLaunchResultsBitForBit) {
  CBT_SKIP_WITHOUT_GPU();
  if (!cuda::batch_norm_one_launch_supported(0))
    GTEST_SKIP() << "this GPU or build has no thread-block clusters: the one-launch path is off";
  struct Case {
    Shape x;
    bool one_launch;  // whether the kernels apply (a channel fits one cluster)
  };
  // ResNet-32's three stages at batch 32 (8 blocks of 16 and 4 values a thread, 2 blocks),
  // ragged chunks, a channel of one block, rank 2, and one channel too large for a cluster.
  const Case cases[] = {{{32, 16, 32, 32}, true}, {{32, 32, 16, 16}, true}, {{32, 64, 8, 8}, true},
                        {{5, 3, 17, 13}, true},   {{3, 4, 7}, true},        {{20, 6}, true},
                        {{3, 2, 100, 120}, false}};
  uint64_t seed = 100;
  for (const Case& k : cases)
    for (bool relu : {false, true}) {
      const std::string what = shape_str(k.x) + (relu ? " relu" : "");
      const uint64_t before = cuda::batch_norm_one_launch_runs();
      Results one = forward_and_backward(gpu(1), k.x, relu, seed, "");
      EXPECT_EQ(cuda::batch_norm_one_launch_runs() - before, k.one_launch ? 2u : 0u) << what;
      expect_same(one, forward_and_backward(gpu(1), k.x, relu, seed, "off"), what);
      seed += 10;
    }
}

// With 16 learners a GPU (blocks of about 4096 elements) the default path is two launches;
// CBT_BN_ONE_LAUNCH=on takes one, with the same results.
TEST(CudaBatchNorm, ManyLearnersTakeTwoLaunchesUnlessToldOtherwise) {
  CBT_SKIP_WITHOUT_GPU();
  if (!cuda::batch_norm_one_launch_supported(0))
    GTEST_SKIP() << "this GPU or build has no thread-block clusters: the one-launch path is off";
  uint64_t seed = 500;
  for (const Shape& x : {Shape{32, 16, 32, 32}, Shape{32, 32, 16, 16}, Shape{7, 3, 9, 11}}) {
    const std::string what = shape_str(x);
    uint64_t before = cuda::batch_norm_one_launch_runs();
    Results two = forward_and_backward(gpu(16), x, true, seed, "");
    EXPECT_EQ(cuda::batch_norm_one_launch_runs(), before) << what;
    before = cuda::batch_norm_one_launch_runs();
    Results one = forward_and_backward(gpu(16), x, true, seed, "on");
    EXPECT_EQ(cuda::batch_norm_one_launch_runs() - before, 2u) << what;
    expect_same(one, two, what);
    seed += 10;
  }
}

}  // namespace
}  // namespace cbt::test
