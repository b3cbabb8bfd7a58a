// Timing copies side by side: what a configuration search skips.
#include "ops/cuda/copy_timing.h"

#include <gtest/gtest.h>

#include "common/gpu.h"
#include "spin_kernel.h"

namespace cbt::cuda {
namespace {

// A run of 200 us alone costs 8 copies side by side at least 0.19 / 8 ms each: against a best
// of 1 us it is not timed (its first run and its run alone, no graph); against 1 ms, or with
// nothing to beat, the 8 copies x 3 runs are captured and timed, and cost at least that bound.
TEST(CopyTiming, RunsThatCannotBeatTheBestAreNotTimedSideBySide) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  Streams side(8);
  int launches = 0;
  auto spin = [&](size_t, cudaStream_t s) {
    ++launches;
    test::spin_for(200'000, s);
    return cudaPeekAtLastError() == cudaSuccess;
  };
  const float bound = (0.2f - 0.01f) / 8;
  float ms = time_unless_slower(stream, side, 3, 0.001f, spin);
  EXPECT_EQ(launches, 2);
  EXPECT_GE(ms, bound);
  launches = 0;
  ms = time_unless_slower(stream, side, 3, 1.0f, spin);
  EXPECT_EQ(launches, 2 + 8 * 3);
  EXPECT_GE(ms, 0.9f * bound);
  EXPECT_LT(ms, 1.0f);
  launches = 0;
  ms = time_unless_slower(stream, side, 3, 0.0f, spin);
  EXPECT_EQ(launches, 1 + 8 * 3);
  EXPECT_GE(ms, 0.9f * bound);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace cbt::cuda
