// Scratch: how CUDA kernels carve their temporaries out of the stream's workspace. Only
// pointer arithmetic and limits: it runs without a GPU (a host buffer stands in for the
// workspace, and no Workspace maps memory behind it).
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {
namespace {

CudaContext context_over(std::vector<std::byte>& bytes, size_t size) {
  CudaContext cc;
  cc.workspace = bytes.data();
  cc.workspace_bytes = size;
  return cc;
}

TEST(CudaScratch, TakesAre256ByteAlignedOneAfterTheOther) {
  std::vector<std::byte> mem(4096);
  CudaContext cc = context_over(mem, 4096);
  Scratch s(cc);
  std::byte* base = mem.data();
  EXPECT_EQ(reinterpret_cast<std::byte*>(s.take<float>(3, "a")), base);
  EXPECT_EQ(reinterpret_cast<std::byte*>(s.take<double>(33, "b")), base + 256);  // 12 B, then 264 B
  EXPECT_EQ(reinterpret_cast<std::byte*>(s.take<int>(1, "c")), base + 256 + 512);
  EXPECT_EQ(s.left(), 4096u - 1024u);
}

TEST(CudaScratch, TheRestIsLentWithoutBeingTaken) {
  std::vector<std::byte> mem(2048);
  CudaContext cc = context_over(mem, 2048);
  Scratch s(cc);
  s.take<float>(10, "a");
  void* rest = s.rest(1000, "a library call");
  EXPECT_EQ(rest, mem.data() + 256);
  EXPECT_EQ(s.left(), 2048u - 256u);
  EXPECT_EQ(static_cast<void*>(s.take<float>(1, "b")), rest);
}

TEST(CudaScratch, RequestsBeyondTheWorkspaceNameWhatAsked) {
  std::vector<std::byte> mem(1000);
  CudaContext cc = context_over(mem, 1000);  // 768 usable: whole 256-byte units only
  Scratch s(cc);
  EXPECT_EQ(s.left(), 768u);
  s.take<float>(100, "first");  // 400 B: 512 taken, 256 left
  try {
    s.take<float>(200, "the partial sums");
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("the partial sums"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.rest(257, "cuDNN"), ModelError);
  EXPECT_NO_THROW(s.rest(256, "cuDNN"));
}

TEST(CudaScratch, NoWorkspaceLendsNothingButAnEmptyRest) {
  CudaContext cc;
  Scratch s(cc);
  EXPECT_EQ(s.left(), 0u);
  EXPECT_NO_THROW(s.rest(0, "an algorithm without workspace"));
  EXPECT_THROW(s.take<float>(1, "anything"), ModelError);
}

}  // namespace
}  // namespace cbt::cuda
