// ProcessGroup over MPI: every collective is non-blocking and polled against a deadline
// (--collective-timeout); when one runs out, a roll call on a second communicator finds the
// ranks that no longer answer, and the message names them.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include "graph/errors.h"
#include "runtime/process_group.h"
#include "runtime/waited_time.h"

namespace cbt {

namespace {

using Clock = std::chrono::steady_clock;

// Seconds a rank waits in MPI_Abort before it leaves by itself.
constexpr int kAbortWaitS = 10;

// MPI_Abort: the launcher ends every rank with `code`. Open MPI's waits (through PMIx) until
// the launcher has done so, and a launcher that cannot end another rank (one stopped by
// SIGSTOP) would keep this rank waiting too: after kAbortWaitS it leaves by itself, and the
// launcher sees it gone.
[[noreturn]] void abort_world(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::thread([code] {
    std::this_thread::sleep_for(std::chrono::seconds(kAbortWaitS));
    _exit(code);
  }).detach();
  MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);
}

constexpr int kRollCallTag = 1, kAnswerTag = 2;  // on the roll-call communicator
constexpr int kSizeTag = 3, kDataTag = 4;        // point-to-point parts of gather / scatter
constexpr size_t kStatusBytes = 160;             // "waits in '...' (#n)" of a roll-call answer
constexpr size_t kChunk = size_t{1} << 28;       // MPI counts are ints: at most 256 MiB per call

std::string mpi_error(int rc) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, buf, &len);
  return std::string(buf, static_cast<size_t>(len));
}

class MpiProcessGroup final : public ProcessGroup {
 public:
  explicit MpiProcessGroup(const ProcessGroupOptions& opt) : timeout_(opt.timeout_s) {
    // Errors come back as codes (reported with the rank), never as MPI's default abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_dup(MPI_COMM_WORLD, &roll_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(roll_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_free(&local);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  double timeout_s() const override { return timeout_; }

  void all_reduce_sum(float* data, size_t n, const char* what) override { reduce(data, n, MPI_FLOAT, what); }
  void all_reduce_sum(double* data, size_t n, const char* what) override { reduce(data, n, MPI_DOUBLE, what); }

  void broadcast(void* data, size_t bytes, int root, const char* what) override {
    begin(what);
    std::vector<MPI_Request> reqs;
    auto* p = static_cast<char*>(data);
    for (size_t off = 0; off < bytes; off += kChunk) {
      reqs.emplace_back();
      check(MPI_Ibcast(p + off, count(std::min(kChunk, bytes - off)), MPI_BYTE, root, comm_, &reqs.back()), what);
    }
    wait_all(reqs, what);
  }

  std::vector<std::string> gather(const std::string& mine, const char* what) override {
    begin(what);
    std::vector<std::string> out;
    if (rank_ != 0) {
      send_string(mine, 0, what);
      return out;
    }
    out.resize(static_cast<size_t>(size_));
    out[0] = mine;
    std::vector<uint64_t> sizes(static_cast<size_t>(size_));
    std::vector<MPI_Request> reqs;
    for (int r = 1; r < size_; ++r) {
      reqs.emplace_back();
      check(MPI_Irecv(&sizes[r], 1, MPI_UINT64_T, r, kSizeTag, comm_, &reqs.back()), what);
    }
    wait_all(reqs, what);
    reqs.clear();
    for (int r = 1; r < size_; ++r) {
      out[r].resize(sizes[r]);
      post_chunks(out[r].data(), sizes[r], r, /*send=*/false, reqs, what);
    }
    wait_all(reqs, what);
    return out;
  }

  std::string scatter(const std::vector<std::string>& parts, const char* what) override {
    begin(what);
    if (rank_ == 0) {
      CBT_CHECK(parts.size() == static_cast<size_t>(size_), "scatter of ", parts.size(), " parts over ", size_,
                " ranks");
      std::vector<MPI_Request> reqs;
      std::vector<uint64_t> sizes(parts.size());
      for (int r = 1; r < size_; ++r) {
        sizes[r] = parts[r].size();
        reqs.emplace_back();
        check(MPI_Isend(&sizes[r], 1, MPI_UINT64_T, r, kSizeTag, comm_, &reqs.back()), what);
        post_chunks(const_cast<char*>(parts[r].data()), sizes[r], r, /*send=*/true, reqs, what);
      }
      wait_all(reqs, what);
      return parts[0];
    }
    uint64_t n = 0;
    std::vector<MPI_Request> reqs(1);
    check(MPI_Irecv(&n, 1, MPI_UINT64_T, 0, kSizeTag, comm_, &reqs[0]), what);
    wait_all(reqs, what);
    std::string s(n, '\0');
    reqs.clear();
    post_chunks(s.data(), n, 0, /*send=*/false, reqs, what);
    wait_all(reqs, what);
    return s;
  }

  void abort(int code) override { abort_world(code); }

  void barrier(const char* what) override {
    begin(what);
    std::vector<MPI_Request> reqs(1);
    check(MPI_Ibarrier(comm_, &reqs[0]), what);
    wait_all(reqs, what);
  }

 private:
  static int count(size_t n) { return static_cast<int>(n); }

  void begin(const char* what) {
    ++ops_;
    current_ = what;
  }

  void reduce(void* data, size_t n, MPI_Datatype type, const char* what) {
    begin(what);
    int elem = 0;
    MPI_Type_size(type, &elem);
    std::vector<MPI_Request> reqs;
    const size_t per = kChunk / static_cast<size_t>(elem);
    for (size_t off = 0; off < n; off += per) {
      reqs.emplace_back();
      check(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + off * static_cast<size_t>(elem),
                           count(std::min(per, n - off)), type, MPI_SUM, comm_, &reqs.back()),
            what);
    }
    wait_all(reqs, what);
  }

  void send_string(const std::string& s, int dest, const char* what) {
    uint64_t n = s.size();
    std::vector<MPI_Request> reqs(1);
    check(MPI_Isend(&n, 1, MPI_UINT64_T, dest, kSizeTag, comm_, &reqs[0]), what);
    post_chunks(const_cast<char*>(s.data()), n, dest, /*send=*/true, reqs, what);
    wait_all(reqs, what);
  }

  void post_chunks(char* p, size_t n, int peer, bool send, std::vector<MPI_Request>& reqs, const char* what) {
    for (size_t off = 0; off < n; off += kChunk) {
      reqs.emplace_back();
      const int c = count(std::min(kChunk, n - off));
      check(send ? MPI_Isend(p + off, c, MPI_BYTE, peer, kDataTag, comm_, &reqs.back())
                 : MPI_Irecv(p + off, c, MPI_BYTE, peer, kDataTag, comm_, &reqs.back()),
            what);
    }
  }

  void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) fail(what, "MPI reported: " + mpi_error(rc));
  }

  // Polls until every request completes; past the deadline, finds who is missing and throws.
  void wait_all(std::vector<MPI_Request>& reqs, const char* what) {
    if (reqs.empty()) return;
    WaitedTime waited;  // a job suspended and resumed as a whole is not late
    int sleep_us = 0;
    for (;;) {
      int done = 0;
      int rc = MPI_Testall(count(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) fail(what, "MPI reported: " + mpi_error(rc));
      if (done) return;
      answer_roll_calls();
      if (waited.poll() > timeout_) fail(what, "");
      // Short waits spin; longer ones sleep, leaving the cores to the learners of this machine.
      if (sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      sleep_us = std::min(std::max(1, sleep_us * 2), 500);
    }
  }

  std::string status() const { return "'" + current_ + "' (collective #" + std::to_string(ops_) + ")"; }

  // Answers other ranks' roll calls with what this rank waits in.
  void answer_roll_calls() {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kRollCallTag, roll_, &flag, &st) != MPI_SUCCESS || !flag) break;
      char dummy[kStatusBytes];
      MPI_Recv(dummy, kStatusBytes, MPI_CHAR, st.MPI_SOURCE, kRollCallTag, roll_, MPI_STATUS_IGNORE);
      // Each answer owns its buffer until MPI is done sending it.
      auto p = std::make_unique<Pending>();
      std::snprintf(p->text, sizeof p->text, "%s", status().c_str());
      MPI_Isend(p->text, kStatusBytes, MPI_CHAR, st.MPI_SOURCE, kAnswerTag, roll_, &p->req);
      answers_.push_back(std::move(p));
    }
    // Completed answers are dropped; sends to a rank that is gone stay pending harmlessly.
    std::erase_if(answers_, [](const std::unique_ptr<Pending>& p) {
      int done = 0;
      MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
      return done != 0;
    });
  }

  [[noreturn]] void fail(const char* what, const std::string& detail) {
    // Roll call: every rank that polls in some collective answers within the grace period.
    const double grace = std::clamp(timeout_ / 4, 1.0, 5.0);
    std::vector<std::string> answer(static_cast<size_t>(size_));
    // The calls' buffer and requests are members: the sends may outlive this function.
    std::snprintf(call_, sizeof call_, "%s", status().c_str());
    calls_.assign(static_cast<size_t>(size_), MPI_REQUEST_NULL);
    for (int r = 0; r < size_; ++r)
      if (r != rank_) MPI_Isend(call_, kStatusBytes, MPI_CHAR, r, kRollCallTag, roll_, &calls_[r]);
    const auto until = Clock::now() + std::chrono::duration<double>(grace);
    int answered = 1;
    while (answered < size_ && Clock::now() < until) {
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, roll_, &flag, &st) == MPI_SUCCESS && flag) {
        char text[kStatusBytes] = {};
        MPI_Recv(text, kStatusBytes, MPI_CHAR, st.MPI_SOURCE, kAnswerTag, roll_, MPI_STATUS_IGNORE);
        text[kStatusBytes - 1] = '\0';
        if (answer[st.MPI_SOURCE].empty()) ++answered;
        answer[st.MPI_SOURCE] = text[0] ? text : "?";
        continue;
      }
      answer_roll_calls();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::string missing, others;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      if (answer[r].empty())
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      else
        others += "; rank " + std::to_string(r) + " waits in " + answer[r];
    }
    std::string msg =
        "rank " + std::to_string(rank_) + ": " + std::string(what) + " (collective #" + std::to_string(ops_) + ") ";
    msg += detail.empty() ? "did not complete within " + fmt_seconds(timeout_) + " (--collective-timeout)"
                          : "failed: " + detail;
    if (!missing.empty())
      msg += "; rank " + missing + " did not answer: it died, hangs, or was busy elsewhere for longer than the timeout";
    else
      msg += "; every rank answers, so they wait in different collectives" + others;
    throw RankFailure(msg);
  }

  static std::string fmt_seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
  }

  struct Pending {
    char text[kStatusBytes] = {};
    MPI_Request req = MPI_REQUEST_NULL;
  };

  double timeout_;
  MPI_Comm comm_ = MPI_COMM_NULL, roll_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  uint64_t ops_ = 0;
  std::string current_ = "start-up";
  std::vector<std::unique_ptr<Pending>> answers_;
  char call_[kStatusBytes] = {};
  std::vector<MPI_Request> calls_;
};

// The group lives until MPI ends (finish_mpi_process_group meets the other ranks through it).
std::shared_ptr<MpiProcessGroup> g_group;

}  // namespace

std::shared_ptr<ProcessGroup> init_mpi_process_group(const ProcessGroupOptions& opt) {
  if (g_group) return g_group;
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    // Only the main thread calls MPI (learner threads never do).
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw UserError("MPI_Init failed: cbtrain was started by an MPI launcher it cannot join");
  }
  g_group = std::make_shared<MpiProcessGroup>(opt);
  return g_group;
}

void finish_mpi_process_group(int rc) {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized) return;
  std::cout.flush();
  std::cerr.flush();
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // 130 / 143: every rank stopped at the same round after SIGINT / SIGTERM (fit agrees on it);
  // they meet so that rank 0's checkpoint is complete before any rank leaves.
  const bool stopped = rc == 128 + SIGINT || rc == 128 + SIGTERM;
  if (rc != 0 && !stopped && size > 1) abort_world(rc);
  if (size > 1 && g_group) {
    // MPI_Finalize waits for every rank without a deadline: meet them first with one.
    try {
      g_group->barrier("the end of the run");
    } catch (const RankFailure& e) {
      std::cerr << "error: " << e.what() << std::endl;
      abort_world(4);
    }
  }
  MPI_Finalize();
}

}  // namespace cbt
