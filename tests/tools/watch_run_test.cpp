// Watching a run from the command line: a '\r'-redrawn progress bar on a terminal (a
// pseudo-terminal here), plain lines through a pipe, the resolved configuration at the start
// and the summary at the end.
#include <gtest/gtest.h>

#include <regex>

#include "common/run_cli.h"
#include "common/tiny_dataset.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

const std::string kLenet = test::source_path("models/lenet5/lenet5.ts17.onnx");

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(WatchRun, TerminalShowsARedrawnBarWithImagesPerSecondLossAndEta) {
  fs::path data = test::make_tiny_dataset("watch_tty", 512, 64);
  fs::path d = test::temp_dir("watch_tty_out");
  test::CliResult r = test::run_cli_in_pty(
      {kLenet, "--data", data.string(), "--epochs", "2", "--batch-size", "8", "-o", (d / "out.onnx").string()});
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string& s = r.output;
  // Bar updates start with '\r' (newlines on a terminal are "\r\n": not counted here).
  std::regex bar(R"(\repoch (\d)/2 \[[= >]{30}\] (\d+)/64  loss ([0-9.]+)  (\d+) img/s  ETA (\d+:\d\d|\?))");
  int updates = 0;
  std::map<int, int64_t> last_done;
  for (std::sregex_iterator it(s.begin(), s.end(), bar), end; it != end; ++it, ++updates) {
    const int epoch = std::stoi((*it)[1]);
    const int64_t done = std::stoll((*it)[2]);
    EXPECT_GT(done, last_done[epoch]) << "the bar moves forward";
    last_done[epoch] = done;
    EXPECT_GT(std::stod((*it)[3]), 0.0);
    EXPECT_GT(std::stoll((*it)[4]), 0);
  }
  EXPECT_GE(updates, 4) << s;  // at least the first and the last round of each epoch
  EXPECT_EQ(last_done[1], 64);
  EXPECT_EQ(last_done[2], 64);
  EXPECT_EQ(count(s, "\repoch 1 step"), 0) << "no plain progress lines on a terminal";
  EXPECT_NE(s.find("epoch 2: train loss"), std::string::npos) << s;
  EXPECT_NE(s.find("summary:"), std::string::npos) << s;
}

TEST(WatchRun, PipeGetsPlainLinesAndNoCarriageReturns) {
  fs::path data = test::make_tiny_dataset("watch_pipe", 512, 64);
  fs::path d = test::temp_dir("watch_pipe_out");
  test::CliResult r =
      test::run_cli(kLenet + " --data " + data.string() + " --epochs 1 --batch-size 8 --log-every 16 -o " +
                    (d / "out.onnx").string() + " --metrics " + (d / "m.jsonl").string());
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string& s = r.output;
  EXPECT_EQ(s.find('\r'), std::string::npos) << s;
  std::regex line(R"(epoch 1 step (\d+)/64 loss [0-9.]+ \d+ img/s ETA \d+:\d\d\n)");
  std::vector<int64_t> steps;
  for (std::sregex_iterator it(s.begin(), s.end(), line), end; it != end; ++it) steps.push_back(std::stoll((*it)[1]));
  EXPECT_EQ(steps, (std::vector<int64_t>{16, 32, 48, 64})) << s;

  // The resolved configuration comes first, the summary with every file last.
  const size_t cfg = s.find("configuration:\n"), sum = s.find("summary:\n");
  ASSERT_NE(cfg, std::string::npos) << s;
  ASSERT_NE(sum, std::string::npos) << s;
  EXPECT_LT(cfg, s.find("epoch 1 step"));
  EXPECT_NE(s.find("batch-size = 8\n"), std::string::npos) << s;
  const std::string tail = s.substr(sum);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(tail, m, std::regex(R"(test accuracy +([0-9.]+)% \(final\), ([0-9.]+)% best at epoch 1)")))
      << tail;
  EXPECT_EQ(m[1], m[2]) << "one epoch: the final accuracy is the best";
  EXPECT_TRUE(std::regex_search(tail, std::regex(R"(training +\d+:\d\d for 64 steps, 512 images, \d+ img/s)"))) << tail;
  for (const char* f : {"out.onnx", "m.jsonl", "out.config.toml"})
    EXPECT_NE(tail.find((d / f).string()), std::string::npos) << f << "\n" << tail;
  EXPECT_TRUE(fs::exists(d / "out.config.toml"));

  r = test::run_cli(kLenet + " --data " + data.string() + " --epochs 1 --batch-size 8 --log-every 16 --progress off");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("step 16/"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("configuration:"), std::string::npos) << r.output;

  r = test::run_cli(kLenet + " --data " + data.string() + " --progress fancy");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--progress"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace cbt
