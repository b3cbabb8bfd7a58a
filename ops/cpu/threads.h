// Thread counts of the CPU kernels (OpenBLAS and OpenMP).
#pragma once

namespace cbt::cpu {

// Sets the threads each CPU kernel may use, in the calling thread and in OpenBLAS. Learners
// times threads should not exceed the cores: OpenMP teams that share cores wait at every
// barrier for a time slice (LeNet-5 on 2 cores: 3 learners x 2 threads train 15x slower
// than 2 learners x 1).
void set_kernel_threads(int n);

// The count last set by set_kernel_threads (1 before any call).
int kernel_threads();

// The cores this process may use for its kernels: OMP_NUM_THREADS when set, else the CPUs of
// its affinity mask shared with the other processes that a launcher (mpirun, torchrun)
// started on this machine; at least 1.
int available_cores();

// Makes the calling thread's OpenMP regions use n threads. OpenMP keeps this count per
// thread: a thread that never set it starts teams of OpenMP's default size (one per core).
void use_kernel_threads(int n);

// set_kernel_threads(n) for a scope; the count before is set again at its end.
class ScopedKernelThreads {
 public:
  explicit ScopedKernelThreads(int n) : saved_(kernel_threads()) { set_kernel_threads(n); }
  ~ScopedKernelThreads() { set_kernel_threads(saved_); }
  ScopedKernelThreads(const ScopedKernelThreads&) = delete;
  ScopedKernelThreads& operator=(const ScopedKernelThreads&) = delete;

 private:
  int saved_;
};

}  // namespace cbt::cpu
