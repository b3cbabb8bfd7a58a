// Crash safety end to end: cbtrain killed at random moments (SIGKILL, some during checkpoint
// writes) and resumed ends with the same weights, bit for bit, as an uninterrupted run; SIGINT
// and SIGTERM stop at a round boundary with a checkpoint and exit codes 130 / 143.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <regex>
#include <thread>

#include "common/child_process.h"
#include "common/paths.h"
#include "common/tiny_dataset.h"
#include "onnx_import/model_io.h"
#include "runtime/checkpoint.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using test::Child;

// The trained initializers of two models are the same bit for bit.
void expect_same_weights(const fs::path& got_path, const fs::path& want_path, const std::string& what) {
  ImportedModel got = load_model(got_path.string()), want = load_model(want_path.string());
  ASSERT_EQ(got.graph.initializers.size(), want.graph.initializers.size()) << what;
  for (const auto& [name, w] : want.graph.initializers) {
    const Tensor& g = got.graph.initializers.at(name);
    ASSERT_EQ(g.shape(), w.shape()) << what << ": " << name;
    ASSERT_EQ(g.nbytes(), w.nbytes()) << what << ": " << name;
    EXPECT_EQ(std::memcmp(g.data(), w.data(), w.nbytes()), 0) << what << ": initializer " << name << " differs";
  }
}

const std::string kLenet = test::source_path("models/lenet5/lenet5.ts17.onnx");

// Two learners under SMA with a warm-up and a cosine schedule: every piece of state (replicas,
// momenta, z, z_prev, the learning rate, the round count) matters for the final weights.
std::vector<std::string> train_args(const fs::path& data, const fs::path& out) {
  return {kLenet,        "--data",
          data.string(), "-b",
          "16",          "-k",
          "2",           "--algorithm",
          "sma",         "--epochs",
          "2",           "--lr-schedule",
          "cosine",      "--warmup-steps",
          "5",           "--deterministic",
          "--log-every", "0",
          "-o",          out.string()};
}

TEST(KillResume, SigkillAtRandomMomentsThenResumeGivesTheUninterruptedWeights) {
  fs::path data = test::make_tiny_dataset("data", 512, 64);
  fs::path dir = test::temp_dir("runs");
  const fs::path ref = dir / "reference.onnx";
  auto t0 = Clock::now();
  Child reference(train_args(data, ref));
  ASSERT_EQ(reference.finish(), 0) << reference.output();
  const double run_s = std::chrono::duration<double>(Clock::now() - t0).count();

  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> when(0.0, run_s);
  int resumed = 0, during_write = 0;
  for (int i = 0; i < 20; ++i) {
    const fs::path ckpt = dir / ("ckpt" + std::to_string(i)), out = dir / ("out" + std::to_string(i) + ".onnx");
    std::vector<std::string> args = train_args(data, out);
    // Every round: more kills land in a write; every 3 rounds: resume replays lost rounds.
    args.insert(args.end(), {"--checkpoint-dir", ckpt.string(), "--checkpoint-every", i % 2 ? "3" : "1"});
    const double delay = when(rng);
    {
      Child victim(args);
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      victim.signal(SIGKILL);
      victim.finish();  // killed, or done already when the delay was long
    }
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(ckpt, ec))  // a write cut short leaves its temporary file
      during_write += e.path().filename().string().find(".tmp.") != std::string::npos;
    args.push_back("--resume");
    Child rest(args);
    ASSERT_EQ(rest.finish(), 0) << "run " << i << " killed after " << delay << " s:\n" << rest.output();
    resumed += rest.output().find("resumed from") != std::string::npos;
    expect_same_weights(out, ref, "run " + std::to_string(i) + " killed after " + std::to_string(delay) + " s");
  }
  // Most kills land after the first checkpoint; otherwise the test would prove little.
  EXPECT_GE(resumed, 5);
  std::cout << "20 kills: " << resumed << " resumed from a checkpoint, " << during_write
            << " cut a checkpoint write short\n";
  fs::remove_all(dir);
  fs::remove_all(data);
}

void stop_and_resume(int sig, int expected_code) {
  fs::path data = test::make_tiny_dataset("stopdata" + std::to_string(sig), 512, 64);
  fs::path dir = test::temp_dir("stop" + std::to_string(sig));
  const fs::path ckpt = dir / "ckpt";
  // A constant learning rate: --max-steps then does not change the configuration.
  std::vector<std::string> args = {kLenet,        "--data", data.string(),      "-b",          "16",
                                   "--epochs",    "50",     "--max-steps",      "120",         "--deterministic",
                                   "--log-every", "1",      "--checkpoint-dir", ckpt.string(), "--checkpoint-every",
                                   "1000"};
  Child run(args);
  ASSERT_TRUE(run.read_until(std::regex("epoch 1 step 3/"))) << run.output();
  run.signal(sig);
  ASSERT_EQ(run.finish(), expected_code) << run.output();
  std::smatch m;
  const std::string out = run.output();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("interrupted at round (\\d+); checkpoint written to (\\S+)")))
      << out;
  const std::string round = m[1], path = m[2];
  EXPECT_TRUE(fs::exists(path)) << path;
  ASSERT_EQ(list_checkpoints(ckpt.string()).size(), 1u);
  EXPECT_EQ(read_checkpoint(path).meta.round, std::stoll(round));

  args.push_back("--resume");
  Child rest(args);
  ASSERT_EQ(rest.finish(), 0) << rest.output();
  EXPECT_NE(rest.output().find("resumed from " + path + " at round " + round + " "), std::string::npos)
      << rest.output();
  EXPECT_NE(rest.output().find("after 120 steps"), std::string::npos) << rest.output();
  fs::remove_all(dir);
  fs::remove_all(data);
}

TEST(KillResume, SigtermWritesACheckpointAndExits143ThenResumeContinues) { stop_and_resume(SIGTERM, 143); }

TEST(KillResume, SigintWritesACheckpointAndExits130) { stop_and_resume(SIGINT, 130); }

}  // namespace
}  // namespace cbt
