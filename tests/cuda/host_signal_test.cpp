// signal_host: the number reaches host memory only after the stream's earlier work, and the
// host sees it without a CUDA call (the NCCL watchdog's way of following its sums).
#include "ops/cuda/host_signal.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "spin_kernel.h"
#include "tests/common/gpu.h"

namespace cbt {
namespace {

TEST(HostSignal, TheNumberArrivesAfterTheEarlierWorkAndIsReadWithoutACudaCall) {
  CBT_SKIP_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* mem = nullptr;
  ASSERT_EQ(cudaHostAlloc(&mem, 2 * sizeof(uint64_t), cudaHostAllocMapped | cudaHostAllocPortable), cudaSuccess);
  auto* slots = static_cast<uint64_t*>(mem);
  slots[0] = slots[1] = 7;
  uint64_t* on_device = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&on_device), mem, 0), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto read = [&](int i) { return std::atomic_ref<uint64_t>(slots[i]).load(std::memory_order_acquire); };

  // Earlier work of 1.5 s on the stream, then the number. Both kernels are loaded first: a
  // kernel's first launch loads its code, which waits for the work running on the GPU.
  cuda::load_signal_host_kernel();
  test::spin_for(1000, stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const auto t0 = std::chrono::steady_clock::now();
  test::spin_for(1'500'000'000ULL, stream);
  cuda::signal_host(on_device + 1, 0x123456789abcULL, stream);
  const double queued = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_LT(queued, 0.5) << "queueing the two kernels waited for the first";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(read(1), 7u) << "the number arrived before the work queued ahead of it";

  const auto deadline = t0 + std::chrono::seconds(20);
  while (read(1) != 0x123456789abcULL && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();  // no CUDA call: the watchdog reads the same way
  const double arrived = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(read(1), 0x123456789abcULL) << "the number never reached host memory";
  EXPECT_GT(arrived, 1.0) << "the number arrived " << arrived << " s after queueing, before the work";
  EXPECT_EQ(read(0), 7u) << "the neighbouring slot was written";

  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(mem), cudaSuccess);
}

}  // namespace
}  // namespace cbt
