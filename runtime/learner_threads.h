// The threads of CPU learners: one per learner, kept for the trainer's life. Each runs the CPU
// kernels with the thread count set for them (ops/cpu/threads.h): OpenMP keeps that count per
// thread, and a thread started without it gets OpenMP's default, one thread per core, so K
// learners would each start a team as large as the machine on the same cores.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace cbt {

class LearnerThreads {
 public:
  // n threads whose CPU kernels use kernel_threads threads each.
  LearnerThreads(size_t n, int kernel_threads);
  ~LearnerThreads();
  LearnerThreads(const LearnerThreads&) = delete;
  LearnerThreads& operator=(const LearnerThreads&) = delete;

  // Runs f(j) on thread j for every j in [0, size()) and returns when all have returned;
  // rethrows the first exception any of them threw.
  void run(const std::function<void(size_t)>& f);
  size_t size() const { return threads_.size(); }

 private:
  void work(size_t j, int kernel_threads);

  std::mutex m_;
  std::condition_variable start_, done_;
  const std::function<void(size_t)>* job_ = nullptr;
  uint64_t generation_ = 0;
  size_t pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace cbt
