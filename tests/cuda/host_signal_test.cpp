// signal_host: the number reaches host memory only after the stream's earlier work, and the
// host sees it without a CUDA call (the NCCL watchdog's way of following its sums).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "ops/cuda/host_signal.h"
#include "spin_kernel.h"
#include "tests/common/gpu.h"

namespace cbt {
namespace {

TEST(HostSignal, TheNumberArrivesAfterTheEarlierWorkAndIsReadWithoutACudaCall) {
  CBT_SKIP_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  // Two number slots and, after them, the flag that holds the stream.
  void* mem = nullptr;
  ASSERT_EQ(cudaHostAlloc(&mem, 3 * sizeof(uint64_t), cudaHostAllocMapped | cudaHostAllocPortable), cudaSuccess);
  auto* slots = static_cast<uint64_t*>(mem);
  slots[0] = slots[1] = 7;
  auto* open = reinterpret_cast<uint32_t*>(slots + 2);
  *open = 0;
  uint64_t* on_device = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&on_device), mem, 0), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);

  test::spin_until_set(reinterpret_cast<const uint32_t*>(on_device + 2), stream);
  cuda::signal_host(on_device + 1, 0x123456789abcULL, stream);
  auto read = [&](int i) { return std::atomic_ref<uint64_t>(slots[i]).load(std::memory_order_acquire); };
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(read(1), 7u) << "the number arrived before the work queued ahead of it";

  std::atomic_ref<uint32_t>(*open).store(1, std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (read(1) != 0x123456789abcULL && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();  // no CUDA call: the watchdog reads the same way
  EXPECT_EQ(read(1), 0x123456789abcULL) << "the number never reached host memory";
  EXPECT_EQ(read(0), 7u) << "the neighbouring slot was written";

  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(mem), cudaSuccess);
}

}  // namespace
}  // namespace cbt
