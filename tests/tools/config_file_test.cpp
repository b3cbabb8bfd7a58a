// Configuration files: the resolved configuration a run saves reads back with --config and
// repeats the run exactly (--deterministic on the CPU); flags given override the file.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>

#include "common/run_cli.h"
#include "common/tiny_dataset.h"
#include "onnx_import/model_io.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

const std::string kLenet = test::source_path("models/lenet5/lenet5.ts17.onnx");

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The metrics without the timing fields (elapsed_s, images_per_sec, autotune_s differ between runs).
std::string without_timings(std::string s) {
  s = std::regex_replace(s, std::regex(R"(, "autotune_s": [0-9.e+-]+)"), "");
  s = std::regex_replace(s, std::regex(R"("images_per_sec": [0-9.e+-]+, )"), "");
  return std::regex_replace(s, std::regex(R"("elapsed_s": [0-9.e+-]+, )"), "");
}

bool same_weights(const fs::path& a, const fs::path& b) {
  ImportedModel ma = load_model(a.string()), mb = load_model(b.string());
  for (const auto& [name, t] : ma.graph.initializers) {
    const Tensor& u = mb.graph.initializers.at(name);
    if (t.nbytes() != u.nbytes() || std::memcmp(t.data(), u.data(), t.nbytes()) != 0) return false;
  }
  return true;
}

TEST(ConfigFile, SavedConfigurationRepeatsTheRunExactly) {
  fs::path data = test::make_tiny_dataset("config", 384, 64);
  fs::path d = test::temp_dir("config_out");
  // Non-default values of several kinds: numbers, strings, a list, a flag, the recipes.
  test::CliResult a = test::run_cli(kLenet + " --data " + data.string() +
                                    " --deterministic --epochs 2 --batch-size 16 -k 2 --lr 0.03 " +
                                    "--seed 11 --lr-schedule step --milestones 1 --lr-gamma 0.5 --label-smoothing 0.05 "
                                    "--clip-grad-norm 2 " +
                                    "--freeze conv1 --progress lines -o " + (d / "a.onnx").string() + " --metrics " +
                                    (d / "a.jsonl").string() + " --save-config " + (d / "saved.toml").string());
  ASSERT_EQ(a.code, 0) << a.output;
  const std::string cfg = read(d / "saved.toml");
  for (const char* line : {"lr = 0.03\n", "seed = 11\n", "learners = \"2\"\n", "deterministic = true\n",
                           "freeze = \"conv1\"\n", "clip-grad-norm = 2\n", "milestones = 1\n"})
    EXPECT_NE(cfg.find(line), std::string::npos) << line << "\n" << cfg;
  EXPECT_EQ(read(d / "a.config.toml"), cfg) << "the copy beside the model is the same";

  // The file alone (outputs redirected by flags) gives the same weights and metrics.
  test::CliResult b = test::run_cli("--config " + (d / "saved.toml").string() + " -o " + (d / "b.onnx").string() +
                                    " --metrics " + (d / "b.jsonl").string());
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_TRUE(same_weights(d / "a.onnx", d / "b.onnx"));
  EXPECT_EQ(without_timings(read(d / "a.jsonl")), without_timings(read(d / "b.jsonl")));
  EXPECT_FALSE(read(d / "a.jsonl").empty());

  // A flag on the command line overrides the file.
  test::CliResult c = test::run_cli("--config " + (d / "saved.toml").string() + " --lr 0.02 -o " +
                                    (d / "c.onnx").string() + " --metrics " + (d / "c.jsonl").string());
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("lr = 0.02\n"), std::string::npos) << c.output;
  EXPECT_FALSE(same_weights(d / "a.onnx", d / "c.onnx"));
}

TEST(ConfigFile, BadConfigurationFilesAreUserErrors) {
  fs::path d = test::temp_dir("config_bad");
  test::CliResult r = test::run_cli("--config " + (d / "missing.toml").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("missing.toml"), std::string::npos) << r.output;

  std::ofstream(d / "unknown.toml") << "model = \"" << kLenet << "\"\nno-such-flag = 3\n";
  r = test::run_cli("--config " + (d / "unknown.toml").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("error: --config " + (d / "unknown.toml").string() +
                          ": 'no-such-flag' is not a setting of cbtrain"),
            std::string::npos)
      << r.output;

  std::ofstream(d / "badvalue.toml") << "model = \"" << kLenet << "\"\nepochs = \"many\"\n";
  r = test::run_cli("--config " + (d / "badvalue.toml").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("epochs"), std::string::npos) << r.output;

  // `lr =` with nothing after it: CLI11 made it 0 and trained.
  std::ofstream(d / "empty.toml") << "model = \"" << kLenet << "\"\nlr =\n";
  r = test::run_cli("--config " + (d / "empty.toml").string() + " --max-steps 1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("error: --lr was given an empty value; it takes a number (on the command line or in "
                          "--config " +
                          (d / "empty.toml").string() + ")"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace cbt
