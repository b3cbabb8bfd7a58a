// The engine search of cuDNN's backend API (choose_engine): which kinds of engine it takes
// under each precision.
#include "ops/cuda/cudnn_engine.h"

#include <cudnn.h>
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>

#include "common/gpu.h"
#include "ops/cuda/library_warm_up.h"

namespace cbt::cuda {
namespace {

// A cuDNN handle and a stream of their own (the test is skipped without a GPU).
class CudnnEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    CBT_SKIP_WITHOUT_GPU();
    ASSERT_EQ(cudnnCreate(&handle), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream) EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
    if (handle) EXPECT_EQ(cudnnDestroy(handle), CUDNN_STATUS_SUCCESS);
  }
  cudnnHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
};

// A 3x3 convolution of 128 channels at 32x32, batch 32: tensor cores run it several times
// faster than FMA. Under --precision tf32 every op takes a tensor-core engine, which must pass
// the accuracy check against a float32 engine (it rejected every TF32 engine while its
// tolerance was float32's); in float32 none does.
TEST_F(CudnnEngine, Tf32TakesTensorCoresAndFp32Never) {
  EngineConv conv;
  const int64_t image[4] = {32, 128, 32, 32}, filter[4] = {128, 128, 3, 3};
  for (int i = 0; i < 4; ++i) {
    conv.image[i] = image[i];
    conv.filter[i] = filter[i];
    conv.grid[i] = image[i];
  }
  conv.pad[0] = conv.pad[1] = 1;
  for (ConvOp op : {ConvOp::Forward, ConvOp::BackwardData, ConvOp::BackwardFilter}) {
    for (bool tf32 : {false, true}) {
      EngineSearch search;
      search.tf32 = tf32;
      search.workspace_budget = size_t{256} << 20;
      const std::optional<EngineId> id = choose_engine(handle, stream, conv, op, search);
      ASSERT_TRUE(id.has_value()) << static_cast<int>(op) << " tf32 " << tf32;
      EXPECT_EQ(id->tensor_core, tf32) << "op " << static_cast<int>(op) << ": engine " << id->global_index;
      EXPECT_GT(id->ms, 0.0f);
    }
  }
}

// The plain implicit-GEMM engine (engine 0, built without asking for cuDNN's fallback list) is
// a candidate of every op, and the reference the others' results are compared with: its own
// error is exactly 0. The log names each search's laps, the fallback engine's included.
TEST_F(CudnnEngine, ThePlainImplicitGemmEngineIsEveryOpsReference) {
  EngineConv conv;
  const int64_t image[4] = {8, 16, 14, 14}, filter[4] = {24, 16, 3, 3}, grid[4] = {8, 24, 14, 14};
  for (int i = 0; i < 4; ++i) conv.image[i] = image[i], conv.filter[i] = filter[i], conv.grid[i] = grid[i];
  conv.pad[0] = conv.pad[1] = 1;
  for (ConvOp op : {ConvOp::Forward, ConvOp::BackwardData, ConvOp::BackwardFilter}) {
    EngineSearch search;
    search.workspace_budget = size_t{64} << 20;
    search.concurrency = 4;
    search.log = true;
    testing::internal::CaptureStderr();
    const std::optional<EngineId> id = choose_engine(handle, stream, conv, op, search);
    const std::string log = testing::internal::GetCapturedStderr();
    ASSERT_TRUE(id.has_value()) << log;
    EXPECT_NE(log.find(" e0/0k/"), std::string::npos) << log;
    EXPECT_TRUE(std::regex_search(log, std::regex(R"( e0/0k/[-0-9.]+ms/[0-9]+B/det/err0\.0e\+00/)"))) << log;
    for (const char* lap : {"heuristics ", " + fallbacks ", " + checks ", " + replay1 ", " + replays "})
      EXPECT_NE(log.find(lap), std::string::npos) << lap << " in " << log;
  }
}

}  // namespace
}  // namespace cbt::cuda

namespace cbt::cuda {
namespace {

// The warm-up of the libraries (library_warm_up.h) swallows errors, so a graph cuDNN refuses
// would silently warm nothing: every op's small graph, float32 and bfloat16, must build, be
// offered engines and give a plan.
TEST_F(CudnnEngine, TheWarmUpsGraphsAreAllAccepted) {
  int plans = -1;
  EXPECT_NO_THROW(plans = warm_up_engines(handle));
  EXPECT_EQ(plans, 6);  // forward, backward data and filter, in float32 NCHW and bfloat16 NHWC
  EXPECT_NO_THROW(warm_up_libraries());
}

}  // namespace
}  // namespace cbt::cuda
