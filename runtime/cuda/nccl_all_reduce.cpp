// AllReduce across GPUs with NCCL: ncclCommInitAll for the GPUs of one process; with several
// processes one communicator over every GPU of every rank (its id broadcast over MPI) and a
// watchdog that aborts it when a sum stalls or NCCL reports an error, so that a rank that
// died or hangs ends the run instead of blocking the others' streams for ever.
#include <nccl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "ops/cuda/host_signal.h"
#include "runtime/collective.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/waited_time.h"

namespace cbt {

namespace {

#define CBT_NCCL_CHECK(expr)                                                                                         \
  do {                                                                                                               \
    ncclResult_t cbt_r_ = (expr);                                                                                    \
    if (cbt_r_ != ncclSuccess) ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__, ncclGetErrorString(cbt_r_)); \
  } while (0)

// Seconds beyond --collective-timeout that monitor() gives a failing rank to end by itself.
constexpr double kLastResortExtraS = 15;

class NcclAllReduce final : public AllReduce {
 public:
  NcclAllReduce(std::vector<CudaBackend*> backends, std::shared_ptr<ProcessGroup> pg)
      : backends_(std::move(backends)), pg_(std::move(pg)) {
    std::vector<int> devs;
    for (auto* b : backends_) devs.push_back(b->device().index);
    comms_.resize(devs.size());
    const int gpus = static_cast<int>(devs.size());
    if (!pg_ || pg_->size() == 1) {
      CBT_NCCL_CHECK(ncclCommInitAll(comms_.data(), gpus, devs.data()));
      return;
    }
    // Ranks in the communicator: rank r's GPU g is r * gpus + g, the order of the learners.
    double total = gpus;
    pg_->all_reduce_sum(&total, 1, "the GPU count");
    if (total != static_cast<double>(gpus) * pg_->size())
      throw UserError("every process must use as many GPUs: rank " + std::to_string(pg_->rank()) + " has " +
                      std::to_string(gpus) + ", the " + std::to_string(pg_->size()) + " ranks together " +
                      std::to_string(static_cast<int64_t>(total)));
    ncclUniqueId id{};
    if (pg_->is_root()) CBT_NCCL_CHECK(ncclGetUniqueId(&id));
    pg_->broadcast(&id, sizeof id, 0, "the NCCL id");
    int current = 0;
    CBT_CUDA_CHECK(cudaGetDevice(&current));
    CBT_NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < gpus; ++g) {
      CBT_CUDA_CHECK(cudaSetDevice(devs[g]));
      CBT_NCCL_CHECK(ncclCommInitRank(&comms_[g], gpus * pg_->size(), id, pg_->rank() * gpus + g));
    }
    CBT_NCCL_CHECK(ncclGroupEnd());
    for (int g = 0; g < gpus; ++g) {  // never loaded lazily behind a stalled sum
      CBT_CUDA_CHECK(cudaSetDevice(devs[g]));
      cuda::load_signal_host_kernel();
    }
    CBT_CUDA_CHECK(cudaSetDevice(current));
    // One slot per GPU, in host memory its stream writes to (portable: mapped on every GPU).
    void* done = nullptr;
    CBT_CUDA_CHECK(
        cudaHostAlloc(&done, sizeof(uint64_t) * backends_.size(), cudaHostAllocMapped | cudaHostAllocPortable));
    done_ = static_cast<uint64_t*>(done);
    for (size_t i = 0; i < backends_.size(); ++i) done_[i] = 0;
    CBT_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&done_on_device_), done, 0));
    std::snprintf(silent_message_.data(), silent_message_.size(),
                  "error: rank %d: a sum across processes stalled and the NCCL watchdog has not come "
                  "back from an NCCL call for %d s (--collective-timeout %d s and %d s more); this "
                  "rank exits now (the launcher ends the other ranks)\n",
                  pg_->rank(), static_cast<int>(pg_->timeout_s() + kLastResortExtraS),
                  static_cast<int>(pg_->timeout_s()), static_cast<int>(kLastResortExtraS));
    watchdog_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "cbt-watchdog");
      watch();
    });
    monitor_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "cbt-monitor");
      monitor();
    });
  }

  ~NcclAllReduce() override {
    if (watchdog_.joinable()) {
      {
        std::lock_guard lock(m_);
        stop_ = true;
      }
      cv_.notify_all();
      watchdog_.join();
      monitor_stop_ = true;
      monitor_.join();
    }
    if (failed_) return;  // ncclCommAbort has released the communicators
    for (ncclComm_t c : comms_) ncclCommDestroy(c);
    if (done_) (void)cudaFreeHost(done_);
  }

  void sum(const std::vector<Tensor>& bufs, const char* what) override {
    CBT_CHECK(bufs.size() == backends_.size(), "all-reduce of ", bufs.size(), " buffers over ", backends_.size(),
              " devices");
    if (failed_) report_failure();
    CBT_NCCL_CHECK(ncclGroupStart());
    for (size_t i = 0; i < bufs.size(); ++i)
      CBT_NCCL_CHECK(ncclAllReduce(bufs[i].data(), bufs[i].data(), static_cast<size_t>(bufs[i].numel()), ncclFloat,
                                   ncclSum, comms_[i], backends_[i]->stream()));
    CBT_NCCL_CHECK(ncclGroupEnd());
    if (!watchdog_.joinable()) return;
    // Each GPU's stream numbers the sums it has completed in host memory, which the watchdog
    // reads without a CUDA call (such a call can block behind a stalled sum).
    const uint64_t seq = ++issued_;
    int current = 0;
    CBT_CUDA_CHECK(cudaGetDevice(&current));
    for (size_t i = 0; i < backends_.size(); ++i) {
      backends_[i]->kernel_context();  // makes its GPU current
      cuda::signal_host(done_on_device_ + i, seq, backends_[i]->stream());
    }
    CBT_CUDA_CHECK(cudaSetDevice(current));
    std::lock_guard lock(m_);
    pending_.push_back({seq, what});
  }

 private:
  struct Pending {
    uint64_t seq;
    const char* what;
  };

  // The sums every GPU has completed.
  uint64_t completed() const {
    uint64_t least = UINT64_MAX;
    for (size_t i = 0; i < backends_.size(); ++i)
      least = std::min(least, std::atomic_ref<uint64_t>(done_[i]).load(std::memory_order_acquire));
    return least;
  }

  void watch() {
    std::string why = stalled_or_failed();
    if (!why.empty()) abort_all(why);
  }

  // Every 100 ms: NCCL's asynchronous errors, and the oldest sum not yet complete. Returns why
  // the communicators must be aborted, or "" once stopped.
  std::string stalled_or_failed() {
    uint64_t waited_for = 0;  // the sum `waited` counts for (0: none)
    WaitedTime waited;
    while (true) {
      std::optional<Pending> oldest;
      {
        std::unique_lock lock(m_);
        cv_.wait_for(lock, std::chrono::milliseconds(100));
        if (stop_) return {};
        const uint64_t done = completed();
        while (!pending_.empty() && pending_.front().seq <= done) pending_.pop_front();
        if (!pending_.empty()) oldest = pending_.front();
      }
      heartbeat_.fetch_add(1);
      if (!oldest) {
        waited_for = 0;
      } else if (oldest->seq != waited_for) {
        waited_for = oldest->seq;
        waited.restart();
      } else if (waited.poll() > pg_->timeout_s()) {
        return std::string(oldest->what) + " across processes did not complete within " +
               std::to_string(static_cast<int>(pg_->timeout_s())) + " s (--collective-timeout)";
      }
      for (ncclComm_t c : comms_) {
        ncclResult_t state = ncclSuccess;
        if (ncclCommGetAsyncError(c, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress)
          return std::string("NCCL reported: ") + ncclGetErrorString(state);
      }
    }
  }

  // Called by the watchdog: says why at once, then aborts the communicators so that the
  // stalled kernels end and the main thread's waits return; the main thread then meets the
  // other ranks in report_failure (a roll call with a deadline) and ends the run with exit
  // code 4. Should the GPU work not end after the abort (or the abort not return), monitor()
  // ends this process.
  void abort_all(const std::string& why) {
    const std::string msg = "rank " + std::to_string(pg_->rank()) + ": " + why;
    {
      std::lock_guard lock(message_m_);
      message_ = msg;
    }
    std::snprintf(aborted_message_.data(), aborted_message_.size(),
                  "error: %s; the GPU work did not end after NCCL was aborted; this rank exits now "
                  "(the launcher ends the other ranks)\n",
                  msg.c_str());
    std::cerr << "cbtrain: " << msg << "; aborting NCCL" << std::endl;
    failed_ = true;  // before the abort: no new sum goes to the communicators
    for (ncclComm_t c : comms_) ncclCommAbort(c);
  }

  // The watchdog's own guard. Its heartbeat stops when the watchdog does not come back from
  // an NCCL call, and once it has aborted the communicators; should it stay silent for longer
  // than the collective timeout and a margin (in which the roll call and the exit of a failed
  // run fit), this rank writes its message and ends with exit code 4, and the launcher ends
  // the others: a stalled collective never keeps a rank alive. Only async-signal-safe calls
  // when it fires (strlen, write, _exit): no lock another thread may hold.
  void monitor() {
    const double limit_s = pg_->timeout_s() + kLastResortExtraS;
    uint64_t seen = heartbeat_.load();
    WaitedTime silent;
    while (!monitor_stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const uint64_t beat = heartbeat_.load();
      if (beat != seen) {
        seen = beat;
        silent.restart();
        continue;
      }
      if (silent.poll() <= limit_s || monitor_stop_) continue;
      const char* text = failed_ ? aborted_message_.data() : silent_message_.data();
      (void)!write(STDERR_FILENO, text, std::strlen(text));
      _exit(4);
    }
  }

  // On the main thread after an abort: a barrier with the deadline names the ranks gone.
  [[noreturn]] void report_failure() {
    std::string msg;
    {
      std::lock_guard lock(message_m_);
      msg = message_;
    }
    try {
      pg_->barrier("the check of the ranks after an NCCL failure");
    } catch (const RankFailure& e) {
      throw RankFailure(msg + "; " + e.what());
    }
    throw RankFailure(msg + "; every rank is still alive (a network or NCCL failure)");
  }

  std::vector<CudaBackend*> backends_;
  std::shared_ptr<ProcessGroup> pg_;
  std::vector<ncclComm_t> comms_;
  uint64_t* done_ = nullptr;            // per GPU: the last sum it completed (pinned host memory)
  uint64_t* done_on_device_ = nullptr;  // the same memory as the GPUs address it
  uint64_t issued_ = 0;                 // sums queued (main thread)
  std::thread watchdog_, monitor_;
  std::mutex m_;  // guards stop_ and pending_
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<Pending> pending_;
  std::atomic<bool> failed_{false};
  std::mutex message_m_;  // guards message_
  std::string message_;
  std::atomic<uint64_t> heartbeat_{0};  // the watchdog's rounds
  std::atomic<bool> monitor_stop_{false};
  std::array<char, 512> silent_message_{}, aborted_message_{};
};

}  // namespace

std::unique_ptr<AllReduce> make_cuda_all_reduce(const std::vector<Backend*>& backends,
                                                const std::shared_ptr<ProcessGroup>& processes) {
  std::vector<CudaBackend*> cuda;
  for (Backend* b : backends) {
    auto* c = dynamic_cast<CudaBackend*>(b);
    if (!c) throw UserError("several devices or processes need CUDA backends (--gpus, --device cuda)");
    for (CudaBackend* other : cuda)
      if (other->device().index == c->device().index)
        throw UserError("--gpus lists GPU " + std::to_string(c->device().index) + " twice");
    cuda.push_back(c);
  }
  return std::make_unique<NcclAllReduce>(std::move(cuda), processes);
}

}  // namespace cbt
