// cbtrain asks the CUDA driver for 32 hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS) before
// it makes a context, keeping a value the user set. Runs without a GPU: asking happens before
// any device is needed.
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
