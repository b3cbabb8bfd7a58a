// Several CPU processes under mpirun: P ranks x K learners train as one process with P*K
// learners; a rank killed or stopped mid-run ends the others within the timeout with a message
// naming it; a checkpoint of two ranks resumes to the uninterrupted weights.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <thread>

#include "common/child_process.h"
#include "common/paths.h"
#include "common/tiny_dataset.h"
#include "onnx_import/model_io.h"
#include "runtime/checkpoint.h"
#include "runtime/collective.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using test::Child;

bool mpi_available() {
#ifdef CBT_WITH_MPI
  static const bool found = std::system("command -v mpirun > /dev/null 2>&1") == 0;
  return found;
#else
  return false;
#endif
}

#define CBT_SKIP_WITHOUT_MPI()                                                       \
  do {                                                                               \
    if (!mpi_available()) GTEST_SKIP() << "built without MPI or no mpirun: skipped"; \
  } while (0)

#ifdef CBT_WITH_CUDA
constexpr bool kCudaBuild = true;
#else
constexpr bool kCudaBuild = false;
#endif

// MPI, a CUDA build and two GPUs (GPU machines), or the test skips saying which is missing.
#define CBT_SKIP_WITHOUT_TWO_GPUS()                                          \
  do {                                                                       \
    CBT_SKIP_WITHOUT_MPI();                                                  \
    if (!kCudaBuild) GTEST_SKIP() << "built without CUDA: skipped";          \
    if (!fs::exists("/dev/nvidiactl") || device_count(DeviceKind::CUDA) < 2) \
      GTEST_SKIP() << "fewer than 2 GPUs: skipped";                          \
  } while (0)

const std::string kLenet = test::source_path("models/lenet5/lenet5.ts17.onnx");
const std::string kOpzoo = test::source_path("models/opzoo/opzoo.ts17.onnx");  // has BatchNorm

// The environment of mpirun: as root (containers, CI); shared memory without ptrace-based
// single copies (often refused in containers).
std::vector<std::string> mpirun_env() {
  std::vector<std::string> env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                  "OMPI_MCA_btl_vader_single_copy_mechanism=none"};
  // Under AddressSanitizer (scripts/sanitize.sh): Open MPI keeps its start-up allocations to
  // the end and unloads its plugins, so LeakSanitizer cannot tell them from ours; leak checks
  // stay on for every other test, address and UB checks stay on here.
  if (const char* asan = std::getenv("ASAN_OPTIONS"))
    env.push_back(std::string("ASAN_OPTIONS=") + asan + ":detect_leaks=0");
  return env;
}

// mpirun -np `ranks` cbtrain ARGS (more ranks than cores allowed).
std::unique_ptr<Child> mpirun(int ranks, const std::vector<std::string>& args,
                              const std::vector<std::string>& mpirun_flags = {}) {
  std::vector<std::string> a = mpirun_flags;
  for (const auto& x :
       {std::string("--oversubscribe"), std::string("-np"), std::to_string(ranks), test::cbtrain_binary()})
    a.push_back(x);
  a.insert(a.end(), args.begin(), args.end());
  return std::make_unique<Child>("mpirun", a, mpirun_env());
}

std::vector<std::string> train_args(const std::string& model, const fs::path& data, int learners,
                                    std::vector<std::string> more) {
  std::vector<std::string> a = {
      model,         "--data", data.string(),     "-b",          "8", "-k", std::to_string(learners),
      "--algorithm", "sma",    "--deterministic", "--log-every", "0"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The largest ||a - b|| / ||b|| over the float initializers of two trained models.
double max_relative_difference(const fs::path& a_path, const fs::path& b_path) {
  ImportedModel a = load_model(a_path.string()), b = load_model(b_path.string());
  double worst = 0;
  for (const auto& [name, tb] : b.graph.initializers) {
    if (tb.dtype() != DType::Float32) continue;
    const Tensor& ta = a.graph.initializers.at(name);
    double num = 0, den = 0;
    for (int64_t i = 0; i < tb.numel(); ++i) {
      const double d = ta.at_f64(i) - tb.at_f64(i);
      num += d * d;
      den += tb.at_f64(i) * tb.at_f64(i);
    }
    worst = std::max(worst, std::sqrt(num / std::max(den, 1e-30)));
  }
  return worst;
}

double test_accuracy(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("final test accuracy ([0-9.]+)%"))) return -1;
  return std::stod(m[1]);
}

// `algorithm` instead of sma (train_args's), or without --algorithm when empty.
std::vector<std::string> with_algorithm(std::vector<std::string> a, const std::string& algorithm) {
  auto it = std::find(a.begin(), a.end(), "--algorithm");
  if (algorithm.empty())
    a.erase(it, it + 2);
  else
    *(it + 1) = algorithm;
  return a;
}

// P ranks x K learners against 1 process x P*K learners, 20 rounds on the same data.
// `algorithm` "": neither run names it (several learners in all: SMA).
void expect_ranks_train_as_one_process(const std::string& model, int ranks, int learners,
                                       const std::string& algorithm = "sma") {
  auto flags = [&](std::vector<std::string> a) { return with_algorithm(a, algorithm); };
  const std::string tag = std::to_string(ranks) + "x" + std::to_string(learners) + algorithm;
  // 20 rounds of P*K batches of 8 are exactly one epoch.
  fs::path data = test::make_tiny_dataset("mpi_parity_" + tag, static_cast<uint32_t>(20 * 8 * ranks * learners), 96);
  fs::path dir = test::temp_dir("mpi_parity_out_" + tag);
  Child one(flags(train_args(model, data, ranks * learners,
                             {"--epochs", "1", "--max-steps", "20", "-o", (dir / "one.onnx").string()})));
  ASSERT_EQ(one.finish(), 0) << one.output();
  auto several =
      mpirun(ranks, flags(train_args(model, data, learners,
                                     {"--epochs", "1", "--max-steps", "20", "-o", (dir / "several.onnx").string()})));
  ASSERT_EQ(several->finish(), 0) << several->output();
  // Control: the learners of one rank alone train another model.
  Child alone(
      train_args(model, data, learners, {"--epochs", "1", "--max-steps", "20", "-o", (dir / "alone.onnx").string()}));
  ASSERT_EQ(alone.finish(), 0) << alone.output();

  const double diff = max_relative_difference(dir / "several.onnx", dir / "one.onnx");
  const double control = max_relative_difference(dir / "alone.onnx", dir / "one.onnx");
  std::cout << "[ figures  ] " << fs::path(model).filename().string() << " "
            << (algorithm.empty() ? "default" : algorithm) << ": " << ranks << " ranks x " << learners
            << " learners vs 1 process x " << ranks * learners << " learners after 20 rounds: max relative difference "
            << diff << " (1 process x " << learners << " learners: " << control << ")" << std::endl;
  EXPECT_LT(diff, 1e-5) << several->output();
  EXPECT_GT(control, 1e-3) << "the control run should train another model";
  EXPECT_NEAR(test_accuracy(several->output()), test_accuracy(one.output()), 1e-9) << several->output();
  const std::string kind = algorithm == "ssgd" ? "ssgd" : "sma";
  EXPECT_NE(several->output().find("(" + kind + ") in " + std::to_string(ranks) + " processes"), std::string::npos)
      << several->output();
  fs::remove_all(data);
  fs::remove_all(dir);
}

TEST(Mpi, TwoRanksOfTwoLearnersTrainLeNetAsOneProcessOfFour) {
  CBT_SKIP_WITHOUT_MPI();
  expect_ranks_train_as_one_process(kLenet, 2, 2);
}

TEST(Mpi, TwoRanksOfTwoLearnersAverageBatchNormStatisticsAsOneProcessOfFour) {
  CBT_SKIP_WITHOUT_MPI();
  expect_ranks_train_as_one_process(kOpzoo, 2, 2);
}

TEST(Mpi, ThreeRanksOfOneLearnerTrainAsOneProcessOfThreeWithTheDefaultAlgorithm) {
  CBT_SKIP_WITHOUT_MPI();
  expect_ranks_train_as_one_process(kOpzoo, 3, 1, "");
}

TEST(Mpi, TwoRanksOfTwoLearnersOfSynchronousSgdTrainAsOneProcessOfFour) {
  CBT_SKIP_WITHOUT_MPI();
  expect_ranks_train_as_one_process(kOpzoo, 2, 2, "ssgd");
}

// --learners auto under mpirun: every rank searches on its own device, the ranks share
// --autotune-max-learners, and all train with rank 0's choice.
TEST(Mpi, TwoRanksShareTheTunersLimitAndTrainWithOneCount) {
  CBT_SKIP_WITHOUT_MPI();
  fs::path data = test::make_tiny_dataset("mpi_autotune", 64, 32);
  std::vector<std::string> args =
      train_args(kLenet, data, 1, {"--epochs", "1", "--max-steps", "2", "--autotune-max-learners", "4"});
  *(std::find(args.begin(), args.end(), "-k") + 1) = "auto";
  auto run = mpirun(2, args);
  ASSERT_EQ(run->finish(), 0) << run->output();
  const std::string out = run->output();
  EXPECT_NE(out.find("autotune: at most 2 learner(s) per device (4 in all, --autotune-max-learners)"),
            std::string::npos)
      << out;
  std::smatch chose, total;
  ASSERT_TRUE(std::regex_search(out, chose, std::regex(R"(autotune: chose ([0-9]+) learner\(s\))"))) << out;
  ASSERT_TRUE(std::regex_search(out, total, std::regex(R"(([0-9]+) learner\(s\) x batch 8 \(sma\) in 2 processes)")))
      << out;
  const int k = std::stoi(chose[1]);
  EXPECT_GE(k, 1);
  EXPECT_LE(k, 2);
  EXPECT_EQ(std::stoi(total[1]), 2 * k) << out;
  fs::remove_all(data);
}

// No such process, or only its exit status is left (a zombie whose new parent does not reap,
// as PID 1 of some containers).
bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return state == "Z";
}

// Polls until the process is gone or the deadline passes: the launcher may exit while the
// kernel still tears down a killed rank. Returns whether it went.
bool gone_by(pid_t pid, Clock::time_point deadline) {
  while (!process_gone(pid)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Starts 2 ranks on a long run and returns once both run and epoch 2 is done; fills the pids.
std::unique_ptr<Child> start_long_run(const fs::path& data, const std::vector<std::string>& more, pid_t& rank0,
                                      pid_t& rank1, const std::vector<std::string>& mpirun_flags = {}) {
  auto run = mpirun(2, train_args(kLenet, data, 1, more), mpirun_flags);
  std::smatch m;
  for (int r : {0, 1}) {
    std::regex re("rank " + std::to_string(r) + " of 2 \\(pid ([0-9]+)");
    if (!run->read_until(re)) return run;
    std::string out = run->output();
    std::regex_search(out, m, re);
    (r == 0 ? rank0 : rank1) = static_cast<pid_t>(std::stol(m[1]));
  }
  run->read_until(std::regex("epoch 2:"));
  return run;
}

TEST(Mpi, KillingOneRankEndsTheOtherWithinAMinuteNamingIt) {
  CBT_SKIP_WITHOUT_MPI();
  fs::path data = test::make_tiny_dataset("mpi_kill", 256, 64);
  pid_t rank0 = -1, rank1 = -1;
  auto run = start_long_run(data, {"--epochs", "100000"}, rank0, rank1);
  ASSERT_GT(rank1, 0) << run->output();
  ASSERT_NE(run->output().find("epoch 2:"), std::string::npos) << run->output();
  const size_t before = run->output().size();
  const auto t0 = Clock::now();
  ASSERT_EQ(kill(rank1, SIGKILL), 0);
  const int rc = run->finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string after = run->output().substr(before);
  std::cout << "[ figures  ] SIGKILL of rank 1: the run ended after " << seconds << " s with exit code " << rc
            << std::endl;
  EXPECT_NE(rc, 0) << after;
  EXPECT_LT(seconds, 60.0);
  EXPECT_TRUE(std::regex_search(after, std::regex("rank 1\\b"))) << "no message names rank 1:\n" << after;
  EXPECT_TRUE(gone_by(rank0, t0 + std::chrono::seconds(60)))
      << "rank 0 (pid " << rank0 << ") still runs a minute after rank 1 was killed";
  fs::remove_all(data);
}

// A launcher that keeps the other ranks running after one died (mpirun --enable-recovery):
// the survivor's own timeout and roll call name the dead rank.
TEST(Mpi, AKilledRankIsNamedByTheSurvivorWhenTheLauncherKeepsItRunning) {
  CBT_SKIP_WITHOUT_MPI();
  fs::path data = test::make_tiny_dataset("mpi_kill_recovery", 256, 64);
  pid_t rank0 = -1, rank1 = -1;
  auto run =
      start_long_run(data, {"--epochs", "100000", "--collective-timeout", "8"}, rank0, rank1, {"--enable-recovery"});
  ASSERT_GT(rank1, 0) << run->output();
  ASSERT_NE(run->output().find("epoch 2:"), std::string::npos) << run->output();
  const size_t before = run->output().size();
  const auto t0 = Clock::now();
  ASSERT_EQ(kill(rank1, SIGKILL), 0);
  run->finish();  // Open MPI 4.1 may report 0 here: the survivor's exit code is not relayed
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string after = run->output().substr(before);
  std::cout << "[ figures  ] SIGKILL of rank 1 under mpirun --enable-recovery (--collective-timeout 8): "
               "the survivor ended after "
            << seconds << " s" << std::endl;
  EXPECT_LT(seconds, 60.0);
  EXPECT_TRUE(
      std::regex_search(after, std::regex("error: rank 0: .* did not complete within 8 s .*rank 1 did not answer")))
      << after;
  EXPECT_TRUE(gone_by(rank0, t0 + std::chrono::seconds(60)))
      << "rank 0 (pid " << rank0 << ") still runs a minute after rank 1 was killed";
  fs::remove_all(data);
}

struct HangOutcome {
  int rc = -1;
  double seconds = 0;
  std::string after;  // the output after rank 1 was stopped
};

// Two ranks train with `more` (--collective-timeout 8); after epoch 2 rank 1 is stopped
// (SIGSTOP: alive for the launcher, but it never answers again) and the run is awaited.
HangOutcome stop_rank1_of_a_long_run(const std::string& name, const std::vector<std::string>& more) {
  fs::path data = test::make_tiny_dataset(name, 256, 64);
  std::vector<std::string> flags = {"--epochs", "100000", "--collective-timeout", "8"};
  flags.insert(flags.end(), more.begin(), more.end());
  pid_t rank0 = -1, rank1 = -1;
  auto run = start_long_run(data, flags, rank0, rank1);
  HangOutcome o;
  EXPECT_GT(rank1, 0) << run->output();
  EXPECT_NE(run->output().find("epoch 2:"), std::string::npos) << run->output();
  if (rank1 <= 0) return o;
  const size_t before = run->output().size();
  const auto t0 = Clock::now();
  EXPECT_EQ(kill(rank1, SIGSTOP), 0);
  o.rc = run->finish();
  o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  o.after = run->output().substr(before);
  kill(rank1, SIGCONT);
  kill(rank1, SIGKILL);  // in case the launcher left it behind
  fs::remove_all(data);
  return o;
}

TEST(Mpi, AHungRankEndsTheOthersAfterTheCollectiveTimeoutNamingIt) {
  CBT_SKIP_WITHOUT_MPI();
  HangOutcome o = stop_rank1_of_a_long_run("mpi_hang", {});
  std::cout << "[ figures  ] SIGSTOP of rank 1 (--collective-timeout 8): the run ended after " << o.seconds
            << " s with exit code " << o.rc << std::endl;
  EXPECT_EQ(o.rc, 4) << o.after;
  EXPECT_LT(o.seconds, 30.0);
  EXPECT_GE(o.seconds, 8.0) << "stopped before the timeout ran out";
  EXPECT_TRUE(
      std::regex_search(o.after, std::regex("error: rank 0: .* did not complete within 8 s .*rank 1 did not answer")))
      << o.after;
}

// Deadlines count the time a rank saw itself wait, not the wall clock: a job suspended as a
// whole (a scheduler's suspend, SIGSTOP of every rank) for longer than the timeout goes on
// when it resumes.
TEST(Mpi, AJobSuspendedAsAWholeForLongerThanTheTimeoutGoesOnWhenResumed) {
  CBT_SKIP_WITHOUT_MPI();
  fs::path data = test::make_tiny_dataset("mpi_suspend", 256, 64);
  pid_t rank0 = -1, rank1 = -1;
  auto run = start_long_run(data, {"--epochs", "100000", "--collective-timeout", "4"}, rank0, rank1);
  ASSERT_GT(rank1, 0) << run->output();
  ASSERT_EQ(kill(rank0, SIGSTOP), 0);
  ASSERT_EQ(kill(rank1, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::seconds(9));  // the timeout and the roll call twice over
  int last = 0;
  const std::string before = run->output();
  const std::regex epoch_line("epoch ([0-9]+):");
  for (std::sregex_iterator it(before.begin(), before.end(), epoch_line), end; it != end; ++it)
    last = std::max(last, std::stoi((*it)[1]));
  ASSERT_EQ(kill(rank1, SIGCONT), 0);
  ASSERT_EQ(kill(rank0, SIGCONT), 0);
  const bool went_on = run->read_until(std::regex("epoch " + std::to_string(last + 3) + ":"));
  kill(rank1, SIGTERM);  // every rank stops at the same round (exit code 143)
  const int rc = run->finish();
  const std::string after = run->output().substr(before.size());
  EXPECT_TRUE(went_on) << "no 3 more epochs after the resume:\n" << after;
  EXPECT_EQ(after.find("did not complete"), std::string::npos) << after;
  EXPECT_EQ(rc, 143) << after;
  fs::remove_all(data);
}

TEST(Mpi, SigtermToOneRankStopsEveryRankAtTheSameRoundWithACheckpoint) {
  CBT_SKIP_WITHOUT_MPI();
  fs::path data = test::make_tiny_dataset("mpi_term", 256, 64);
  fs::path ckpt = test::temp_dir("mpi_term_ckpt");
  pid_t rank0 = -1, rank1 = -1;
  auto run = start_long_run(data, {"--epochs", "100000", "--checkpoint-dir", ckpt.string()}, rank0, rank1);
  ASSERT_GT(rank1, 0) << run->output();
  ASSERT_EQ(kill(rank1, SIGTERM), 0);
  EXPECT_EQ(run->finish(), 143) << run->output();
  std::smatch m;
  const std::string out = run->output();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("interrupted at round ([0-9]+); checkpoint written"))) << out;
  const int64_t round = std::stoll(m[1]);
  Checkpoint c = read_checkpoint(checkpoint_path(ckpt.string(), round));
  EXPECT_EQ(c.meta.round, round);
  int learners = 0;
  for (const auto& [n, t] : c.state.tensors) learners += n.ends_with("/params") && n.starts_with("learner");
  EXPECT_EQ(learners, 2) << "rank 0 and rank 1's learner";

  auto rest = mpirun(2, train_args(kLenet, data, 1,
                                   {"--epochs", "100000", "--max-steps", std::to_string(round + 5), "--checkpoint-dir",
                                    ckpt.string(), "--resume"}));
  EXPECT_EQ(rest->finish(), 0) << rest->output();
  EXPECT_NE(rest->output().find("resumed from " + checkpoint_path(ckpt.string(), round)), std::string::npos)
      << rest->output();
  fs::remove_all(data);
  fs::remove_all(ckpt);
}

TEST(Mpi, ACheckpointOfTwoRanksHoldsEveryLearnerAndResumesToTheUninterruptedWeights) {
  CBT_SKIP_WITHOUT_MPI();
  fs::path data = test::make_tiny_dataset("mpi_ckpt", 512, 64);  // 16 rounds per epoch
  fs::path dir = test::temp_dir("mpi_ckpt_out");
  auto whole = mpirun(2, train_args(kOpzoo, data, 2, {"--epochs", "2", "-o", (dir / "whole.onnx").string()}));
  ASSERT_EQ(whole->finish(), 0) << whole->output();

  const fs::path ckpt = dir / "ckpt";
  auto first = mpirun(2, train_args(kOpzoo, data, 2,
                                    {"--epochs", "2", "--max-steps", "21", "--checkpoint-dir", ckpt.string(),
                                     "--checkpoint-every", "7"}));
  ASSERT_EQ(first->finish(), 0) << first->output();
  auto files = list_checkpoints(ckpt.string());
  ASSERT_FALSE(files.empty());
  Checkpoint c = read_checkpoint(files.front());
  EXPECT_EQ(c.meta.round, 21);
  EXPECT_NE(c.meta.config.find("processes=2\n"), std::string::npos) << c.meta.config;
  for (int j = 0; j < 4; ++j) {
    const std::string name = "learner" + std::to_string(j) + "/params";
    bool found = false;
    for (const auto& [n, t] : c.state.tensors) found |= n == name;
    EXPECT_TRUE(found) << "the checkpoint lacks " << name;
  }

  auto rest = mpirun(2, train_args(kOpzoo, data, 2,
                                   {"--epochs", "2", "--checkpoint-dir", ckpt.string(), "--resume", "-o",
                                    (dir / "resumed.onnx").string()}));
  ASSERT_EQ(rest->finish(), 0) << rest->output();
  EXPECT_NE(rest->output().find("resumed from"), std::string::npos) << rest->output();
  EXPECT_EQ(max_relative_difference(dir / "resumed.onnx", dir / "whole.onnx"), 0.0)
      << "a resumed run of two ranks must give the uninterrupted weights bit for bit";
  fs::remove_all(data);
  fs::remove_all(dir);
}

// Two processes with one GPU each against one process with both GPUs, the same learners
// (GPU machines with two GPUs; skipped elsewhere).
TEST(Mpi, TwoGpuProcessesTrainAsOneProcessWithTwoGpus) {
  CBT_SKIP_WITHOUT_TWO_GPUS();
  fs::path data = test::make_tiny_dataset("mpi_gpu", 20 * 8 * 4, 96);
  fs::path dir = test::temp_dir("mpi_gpu_out");
  auto args = [&](std::vector<std::string> more) {
    std::vector<std::string> a = {kLenet, "--data",      data.string(), "-b",          "8",
                                  "-k",   "2",           "--algorithm", "sma",         "--epochs",
                                  "1",    "--max-steps", "20",          "--log-every", "0"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  Child one(args({"--gpus", "0,1", "-o", (dir / "one.onnx").string()}));
  ASSERT_EQ(one.finish(), 0) << one.output();
  auto two = mpirun(2, args({"--device", "cuda", "-o", (dir / "two.onnx").string()}));
  ASSERT_EQ(two->finish(), 0) << two->output();
  EXPECT_NE(two->output().find("on cuda:1"), std::string::npos) << "rank 1 should take GPU 1:\n" << two->output();
  const double diff = max_relative_difference(dir / "two.onnx", dir / "one.onnx");
  std::cout << "[ figures  ] 2 processes x 1 GPU vs 1 process x 2 GPUs (2 learners each), 20 "
               "rounds: max relative "
               "difference "
            << diff << std::endl;
  EXPECT_LT(diff, 1e-4);  // cuDNN's reductions on GPUs need not be bit-reproducible
  fs::remove_all(data);
  fs::remove_all(dir);
}

// On GPUs the sums run in NCCL kernels: a stopped rank leaves the other's kernel waiting,
// which the watchdog aborts after the timeout (GPU machines with two GPUs; skipped elsewhere).
TEST(Mpi, AHungGpuRankEndsTheOtherAfterTheCollectiveTimeoutNamingIt) {
  CBT_SKIP_WITHOUT_TWO_GPUS();
  HangOutcome o = stop_rank1_of_a_long_run("mpi_gpu_hang", {"--device", "cuda"});
  std::cout << "[ figures  ] SIGSTOP of GPU rank 1 (--collective-timeout 8): the run ended after " << o.seconds
            << " s with exit code " << o.rc << std::endl;
  EXPECT_EQ(o.rc, 4) << o.after;
  EXPECT_LT(o.seconds, 60.0);
  EXPECT_GE(o.seconds, 8.0) << "stopped before the timeout ran out";
  EXPECT_TRUE(std::regex_search(o.after, std::regex("rank 0: .* did not complete within 8 s"))) << o.after;
  EXPECT_TRUE(std::regex_search(o.after, std::regex("rank 1 did not answer"))) << o.after;
}

TEST(Mpi, RanksWithDifferentLearnerCountsAreRefused) {
  CBT_SKIP_WITHOUT_MPI();
  fs::path data = test::make_tiny_dataset("mpi_mismatch", 256, 64);
  // MPMD: rank 0 with one learner, rank 1 with two.
  std::vector<std::string> a = {"--oversubscribe", "-np", "1", test::cbtrain_binary()};
  for (const auto& x : train_args(kLenet, data, 1, {"--epochs", "1"})) a.push_back(x);
  for (const auto& x : {std::string(":"), std::string("-np"), std::string("1"), test::cbtrain_binary()}) a.push_back(x);
  for (const auto& x : train_args(kLenet, data, 2, {"--epochs", "1"})) a.push_back(x);
  Child run("mpirun", a, mpirun_env());
  EXPECT_EQ(run.finish(), 2) << run.output();
  EXPECT_NE(run.output().find("every process must train as many learners"), std::string::npos) << run.output();
  fs::remove_all(data);
}

TEST(Mpi, TorchrunStyleWorldSizeWithoutMpirunIsRefused) {
  fs::path data = test::make_tiny_dataset("mpi_torchrun", 256, 64);
  Child run(test::cbtrain_binary(), train_args(kLenet, data, 1, {"--epochs", "1"}),
            {"WORLD_SIZE=2", "RANK=1", "LOCAL_RANK=1"});
  EXPECT_EQ(run.finish(), 2) << run.output();
  EXPECT_NE(run.output().find("WORLD_SIZE=2 but 1 process(es) were started"), std::string::npos) << run.output();
  EXPECT_NE(run.output().find("mpirun -np 2"), std::string::npos) << run.output();
  fs::remove_all(data);
}

}  // namespace
}  // namespace cbt
