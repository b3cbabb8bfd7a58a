// Timing copies side by side: several configurations in one CUDA graph against one graph each.
#include "ops/cuda/copy_timing.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/gpu.h"
#include "spin_kernel.h"

namespace cbt::cuda {
namespace {

// Configurations that hold a stream for 40, 10 and 80 us, and one whose launch fails: in one
// graph each is timed as a graph of its own times it (within a quarter), at least its 3 runs of
// 8 one-thread kernels side by side (3 x t / (3 x 8) per copy), in the order of their lengths;
// the failing one is -1.
TEST(CopyTiming, ConfigurationsTimedInOneGraphTimeAsOneGraphEach) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const std::vector<uint64_t> ns = {40'000, 10'000, 80'000, 0};
  Streams side(8);
  auto launch = [&](size_t i, size_t, cudaStream_t s) {
    if (ns[i] == 0) return false;
    test::spin_for(ns[i], s);
    return cudaPeekAtLastError() == cudaSuccess;
  };
  const std::vector<float> ms = time_each_side_by_side(stream, side, 3, ns.size(), launch);
  ASSERT_EQ(ms.size(), ns.size());
  EXPECT_EQ(ms[3], -1.0f);
  EXPECT_LT(ms[1], ms[0]);
  EXPECT_LT(ms[0], ms[2]);
  for (size_t i = 0; i < 3; ++i) {
    const float alone = time_side_by_side(stream, side, 3, [&](size_t copy, cudaStream_t s) { return launch(i, copy, s); });
    EXPECT_GE(ms[i], 0.9f * static_cast<float>(ns[i]) * 1e-6f / 8) << i;
    EXPECT_NEAR(ms[i], alone, 0.25f * alone) << i;
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace cbt::cuda
