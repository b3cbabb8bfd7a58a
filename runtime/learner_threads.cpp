// LearnerThreads: a generation counter under one mutex starts every thread on a job; the
// caller waits until the last one has finished it.
#include "runtime/learner_threads.h"

#include "ops/cpu/threads.h"

namespace cbt {

LearnerThreads::LearnerThreads(size_t n, int kernel_threads) {
  threads_.reserve(n);
  for (size_t j = 0; j < n; ++j) threads_.emplace_back([this, j, kernel_threads] { work(j, kernel_threads); });
}

LearnerThreads::~LearnerThreads() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : threads_) t.join();
}

void LearnerThreads::run(const std::function<void(size_t)>& f) {
  std::unique_lock lock(m_);
  job_ = &f;
  pending_ = threads_.size();
  error_ = nullptr;
  ++generation_;
  start_.notify_all();
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void LearnerThreads::work(size_t j, int kernel_threads) {
  cpu::use_kernel_threads(kernel_threads);
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(size_t)>* job;
    {
      std::unique_lock lock(m_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr error;
    try {
      (*job)(j);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(m_);
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace cbt
