// GPU presence for tests: CUDA tests skip, saying so, on machines without a usable device.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace cbt::test {

inline bool gpu_available() {
  static const bool available = [] {
    // Without the NVIDIA driver's device node, asking the CUDA runtime costs seconds per
    // test process (each CTest test is one) and can only say no.
    if (!std::filesystem::exists("/dev/nvidiactl") && !std::filesystem::exists("/dev/dxg")) return false;
    int n = 0;
    bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();  // a failed query is not sticky; keep it out of later checks
    return ok;
  }();
  return available;
}

}  // namespace cbt::test

#define CBT_SKIP_WITHOUT_GPU()                                                    \
  do {                                                                            \
    if (!::cbt::test::gpu_available()) GTEST_SKIP() << "no CUDA device: skipped"; \
  } while (0)
