// Host tensors: an allocation the machine cannot give is a user error with the figures, raised
// before any byte is written (a zeroed allocation larger than the free memory would otherwise be
// ended by the kernel's out-of-memory killer, not refused).
#include "graph/tensor.h"

#include <gtest/gtest.h>

#include <string>

namespace cbt {
namespace {

TEST(Tensor, HostAllocationBeyondTheMachineIsAUserErrorWithTheFigures) {
  const int64_t values = int64_t{1} << 40;  // 4 TiB of floats
  try {
    Tensor t(DType::Float32, Shape{values}, Device{});
    ADD_FAILURE() << "a 4 TiB tensor was allocated";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of host memory: 4194304 MiB requested"), std::string::npos) << msg;
    EXPECT_NE(msg.find("MiB available of"), std::string::npos) << msg;
    EXPECT_NE(msg.find("use a smaller batch size"), std::string::npos) << msg;
  }
  // A small one still works, zeroed.
  Tensor small(DType::Float32, Shape{3, 5}, Device{});
  for (int64_t i = 0; i < small.numel(); ++i) EXPECT_EQ(small.ptr<float>()[i], 0.0f);
}

}  // namespace
}  // namespace cbt
