// Thread counts of the CPU kernels (OpenBLAS and OpenMP).
#pragma once

namespace cbt::cpu {

// Sets the threads each CPU kernel may use. Small per-step matrix products run fastest on
// one BLAS thread (measured: LeNet-5 at batch 32 trains 4x faster than with OpenBLAS's
// default threading on 2 cores), and CPU learners bring their own parallelism.
void set_kernel_threads(int n);

}  // namespace cbt::cpu
