// The main job: LeNet-5 (PyTorch export) trained on Fashion-MNIST on the CPU for 2 epochs at
// batch 32 reaches at least 87% test accuracy, and onnxruntime running the exported model
// on the test set agrees with cbtrain's accuracy within 0.1 points; the same for a recurrent
// model.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "common/paths.h"
#include "common/tiny_dataset.h"
#include "runtime/dataset.h"

namespace cbt {
namespace {

std::string capture(const std::string& cmd, int* code) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while (p && (n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = p ? pclose(p) : -1;
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// Trains `model` on Fashion-MNIST on the CPU at batch 32 over a cosine of `epochs`; its final
// test accuracy must reach `at_least`, and onnxruntime running the written model on the test
// set must agree with it within 0.1 points.
void train_and_compare_with_onnxruntime(const std::string& model, int epochs, const std::string& lr, double at_least) {
  ASSERT_TRUE(std::filesystem::exists(kDefaultDataDir))
      << "Fashion-MNIST is missing: scripts/setup.sh installs Debian's dataset-fashion-mnist";
  // The folder also takes the run's config file, written beside the model.
  std::string out_model = (test::temp_dir("fashion_mnist") / "trained.onnx").string();
  int code = 0;
  std::string log =
      capture(test::cbtrain_binary() + " " + test::source_path(model) + " --epochs " + std::to_string(epochs) +
                  " --batch-size 32 --lr " + lr + " --lr-schedule cosine --log-every 0 --output " + out_model,
              &code);
  ASSERT_EQ(code, 0) << log;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m, std::regex("final test accuracy ([0-9.]+)%"))) << log;
  double cbt_acc = std::stod(m[1]);
  std::printf("cbtrain: %s\n", log.c_str());
  EXPECT_GE(cbt_acc, at_least) << log;

  const char* py = std::getenv("CBT_PYTHON");
  std::string ort = capture(
      std::string(py ? py : "python3") + " " + test::source_path("scripts/eval_onnx.py") + " --json " + out_model,
      &code);
  ASSERT_EQ(code, 0) << ort;
  ASSERT_TRUE(std::regex_search(ort, m, std::regex("\"accuracy\": ([0-9.]+)"))) << ort;
  double ort_acc = 100 * std::stod(m[1]);
  std::printf("onnxruntime accuracy of the exported model: %.2f%%\n", ort_acc);
  EXPECT_NEAR(ort_acc, cbt_acc, 0.1);
}

TEST(FashionMnist, LeNet5TwoEpochsOnCpuReaches87PercentAndOnnxruntimeAgrees) {
  train_and_compare_with_onnxruntime("models/lenet5/lenet5.ts17.onnx", 2, "0.02", 87.0);
}

// SeqNet (PyTorch's LSTM, GRU and RNN over the image's rows and columns, unrolled over 28 steps):
// the written model keeps its recurrent nodes for onnxruntime.
TEST(FashionMnist, SeqNetOneEpochOnCpuReaches80PercentAndOnnxruntimeAgrees) {
  train_and_compare_with_onnxruntime("models/seqnet/seqnet.ts17.onnx", 1, "0.05", 80.0);
}

}  // namespace
}  // namespace cbt
