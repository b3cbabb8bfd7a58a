// spin_until_set: see spin_kernel.h.
#include "spin_kernel.h"

namespace cbt::test {
namespace {
__global__ void spin_kernel(const volatile uint32_t* flag) {
  while (*flag == 0) __nanosleep(1000);
}
}  // namespace

void spin_until_set(const uint32_t* flag, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(flag);
}

}  // namespace cbt::test
