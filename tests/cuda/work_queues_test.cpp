// cbtrain asks the CUDA driver for 32 hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS) before
// its first CUDA call (the driver reads the variable when it starts), keeping a value the user
// set. Runs without a GPU: asking happens before any device is needed. That the driver then
// gives 32 queues shows only on a GPU, as throughput: docs/bench/h100_fp32_2026-11-25c/ab/
// (call 9: LeNet-5 b=32 K=16 720k img/s with nothing set, 552k with the variable set to 8).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/cuda/cuda_backend.h"

namespace cbt {
namespace {

// The environment as the process started, read before any test could touch CUDA.
const std::string kAtStart = [] {
  const char* v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  return std::string(v ? v : "");
}();

TEST(CudaWorkQueues, TheFirstCudaCallAsksForThirtyTwoUnlessTheUserChose) {
  (void)cuda_device_count();
  const char* v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  ASSERT_NE(v, nullptr) << "cuda_device_count() did not set CUDA_DEVICE_MAX_CONNECTIONS";
  EXPECT_EQ(std::string(v), kAtStart.empty() ? "32" : kAtStart);
}

}  // namespace
}  // namespace cbt
