// AllReduce across GPUs with NCCL: ncclCommInitAll for the GPUs of one process; with several
// processes one communicator over every GPU of every rank (its id broadcast over MPI) and a
// watchdog that aborts it when a sum stalls or NCCL reports an error, so that a rank that
// died or hangs ends the run instead of blocking the others' streams for ever.
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <mutex>
#include <thread>

#include "runtime/collective.h"
#include "runtime/cuda/cuda_backend.h"

namespace cbt {

namespace {

#define CBT_NCCL_CHECK(expr)                                                                \
  do {                                                                                      \
    ncclResult_t cbt_r_ = (expr);                                                           \
    if (cbt_r_ != ncclSuccess)                                                              \
      ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__, ncclGetErrorString(cbt_r_)); \
  } while (0)

using Clock = std::chrono::steady_clock;
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
      throw UserError("every process must use as many GPUs: rank " + std::to_string(pg_->rank()) +
                      " has " + std::to_string(gpus) + ", the " + std::to_string(pg_->size()) +
                      " ranks together " + std::to_string(static_cast<int64_t>(total)));
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
    CBT_CUDA_CHECK(cudaSetDevice(current));
    heartbeat_ = now_ns();
    watchdog_ = std::thread([this] { watch(); });
    monitor_ = std::thread([this] { monitor(); });
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
    for (auto& p : pending_) (void)cudaEventDestroy(p.event);
    if (failed_) return;  // ncclCommAbort has released the communicators
    for (ncclComm_t c : comms_) ncclCommDestroy(c);
  }

  void sum(const std::vector<Tensor>& bufs, const char* what) override {
    CBT_CHECK(bufs.size() == backends_.size(), "all-reduce of ", bufs.size(), " buffers over ",
              backends_.size(), " devices");
    if (failed_) report_failure();
    CBT_NCCL_CHECK(ncclGroupStart());
    for (size_t i = 0; i < bufs.size(); ++i)
      CBT_NCCL_CHECK(ncclAllReduce(bufs[i].data(), bufs[i].data(),
                                   static_cast<size_t>(bufs[i].numel()), ncclFloat, ncclSum,
                                   comms_[i], backends_[i]->stream()));
    CBT_NCCL_CHECK(ncclGroupEnd());
    if (!watchdog_.joinable()) return;
    // The watchdog follows each sum's completion through an event on each stream. The events
    // are made and recorded before the lock is taken: a recording can block while the GPU's
    // queue is full (behind a stalled sum), and the watchdog must still get the lock then.
    std::vector<Pending> mine;
    int current = 0;
    CBT_CUDA_CHECK(cudaGetDevice(&current));
    for (auto* b : backends_) {
      cudaEvent_t e = nullptr;
      CBT_CUDA_CHECK(cudaSetDevice(b->device().index));
      CBT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      mine.push_back({e, b->device().index, Clock::now(), what});
      CBT_CUDA_CHECK(cudaEventRecord(e, b->stream()));
    }
    CBT_CUDA_CHECK(cudaSetDevice(current));
    std::lock_guard lock(m_);
    for (Pending& p : mine) pending_.push_back(p);
  }

 private:
  struct Pending {
    cudaEvent_t event;
    int device;
    Clock::time_point queued;
    const char* what;
  };

  // Every 100 ms: NCCL's asynchronous errors, and the oldest sum not yet complete.
  void watch() {
    std::string why = stalled_or_failed();
    if (!why.empty()) abort_all(why);
  }

  // The watchdog's own guard, which makes no CUDA or NCCL call. The watchdog's heartbeat
  // stops when it does not come back from such a call (one that blocks behind a stalled
  // collective) and once it has aborted the communicators. Should it stay silent for longer
  // than the collective timeout and a margin (the roll call and the exit of a failed run fit
  // in that), this rank ends with exit code 4 and a message, and the launcher ends the others:
  // a stalled collective never keeps a rank alive.
  void monitor() {
    const double limit_s = pg_->timeout_s() + kLastResortExtraS;
    while (!monitor_stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const double silent_s = static_cast<double>(now_ns() - heartbeat_.load()) * 1e-9;
      if (silent_s <= limit_s || monitor_stop_) continue;
      std::string why;
      if (failed_) {
        std::lock_guard lock(message_m_);
        why = message_ + "; the GPU work did not end after NCCL was aborted";
      } else {
        why = "rank " + std::to_string(pg_->rank()) + ": a sum across processes stalled: the NCCL watchdog has waited " +
              std::to_string(static_cast<int>(silent_s)) + " s in a CUDA or NCCL call (--collective-timeout " +
              std::to_string(static_cast<int>(pg_->timeout_s())) + " s)";
      }
      std::cerr << "error: " << why << "; this rank exits now (the launcher ends the other ranks)" << std::endl;
      std::_Exit(4);
    }
  }

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  }

  // The watchdog's loop: returns why the communicators must be aborted, or "" when stopped.
  std::string stalled_or_failed() {
    const auto timeout = std::chrono::duration<double>(pg_->timeout_s());
    std::unique_lock lock(m_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (stop_) return {};
      heartbeat_ = now_ns();
      for (ncclComm_t c : comms_) {
        ncclResult_t state = ncclSuccess;
        if (ncclCommGetAsyncError(c, &state) == ncclSuccess && state != ncclSuccess &&
            state != ncclInProgress)
          return std::string("NCCL reported: ") + ncclGetErrorString(state);
      }
      while (!pending_.empty()) {
        Pending& p = pending_.front();
        (void)cudaSetDevice(p.device);
        cudaError_t r = cudaEventQuery(p.event);
        if (r == cudaErrorNotReady) {
          if (Clock::now() - p.queued > timeout)
            return std::string(p.what) + " across processes did not complete within " +
                   std::to_string(static_cast<int>(pg_->timeout_s())) + " s (--collective-timeout)";
          break;
        }
        if (r != cudaSuccess) return std::string("CUDA reported: ") + cudaGetErrorString(r);
        (void)cudaEventDestroy(p.event);
        pending_.pop_front();
      }
    }
    return {};
  }

  // Called by the watchdog: says why at once, then aborts the communicators so that the
  // stalled kernels end and the main thread's waits return; it then meets the other ranks in
  // report_failure (a roll call with a deadline) and ends the run with exit code 4. Should
  // the GPU work not end after the abort (or the abort not return), monitor() ends this
  // process. Called without m_ held, so that the main thread never waits for the abort.
  void abort_all(const std::string& why) {
    const std::string msg = "rank " + std::to_string(pg_->rank()) + ": " + why;
    {
      std::lock_guard lock(message_m_);
      message_ = msg;
    }
    std::cerr << "cbtrain: " << msg << "; aborting NCCL" << std::endl;
    failed_ = true;  // before the abort: no new sum goes to the communicators
    for (ncclComm_t c : comms_) ncclCommAbort(c);
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
  std::thread watchdog_, monitor_;
  std::atomic<int64_t> heartbeat_{0};  // Clock ns of the watchdog's last round
  std::atomic<bool> monitor_stop_{false};
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> failed_{false};
  std::mutex message_m_;  // guards message_ (m_ may be held by a blocked watchdog)
  std::string message_;
  std::deque<Pending> pending_;
};

}  // namespace

std::unique_ptr<AllReduce> make_cuda_all_reduce(const std::vector<Backend*>& backends,
                                                const std::shared_ptr<ProcessGroup>& processes) {
  std::vector<CudaBackend*> cuda;
  for (Backend* b : backends) {
    auto* c = dynamic_cast<CudaBackend*>(b);
    if (!c)
      throw UserError("several devices or processes need CUDA backends (--gpus, --device cuda)");
    for (CudaBackend* other : cuda)
      if (other->device().index == c->device().index)
        throw UserError("--gpus lists GPU " + std::to_string(c->device().index) + " twice");
    cuda.push_back(c);
  }
  return std::make_unique<NcclAllReduce>(std::move(cuda), processes);
}

}  // namespace cbt
