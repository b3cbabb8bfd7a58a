// Training through the command line on every data format, made by the tests at run time
// (random pixels with a class colour, so a small model learns them): CIFAR binaries, image
// folders (PNG/JPEG, RGB and grey), NumPy pairs; channels-last models; augmentation; and
// exit code 2 with the file named for bad data.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "common/data_writers.h"
#include "common/paths.h"
#include "common/run_cli.h"
#include "common/tiny_dataset.h"
#include "runtime/npy.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

using RunResult = test::CliResult;
constexpr auto run = &test::run_cli;

// The "final test accuracy" of a run, in percent (-1 when missing).
double final_accuracy(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(final test accuracy ([0-9.]+)%)"))) return -1;
  return std::stod(m[1]);
}

const std::string kRgb = test::source_path("tests/tools/data/tiny_rgb.onnx");
const std::string kRgbNhwc = test::source_path("tests/tools/data/tiny_rgb_nhwc.onnx");
const std::string kLenet = test::source_path("models/lenet5/lenet5.ts17.onnx");
// Small and quick: the signal is the colour, which a few epochs learn.
const std::string kTrainFlags = " --epochs 4 --batch-size 16 --lr 0.05 --log-every 0";

fs::path make_cifar10(const std::string& name, uint32_t seed) {
  fs::path d = test::temp_dir(name);
  test::write_cifar(d / "data_batch_1.bin", test::coloured_samples(320, 10, 3, 32, 32, seed));
  test::write_cifar(d / "data_batch_2.bin", test::coloured_samples(320, 10, 3, 32, 32, seed + 1));
  test::write_cifar(d / "test_batch.bin", test::coloured_samples(200, 10, 3, 32, 32, seed + 2));
  return d;
}

TEST(DataCli, CifarTrainsEndToEnd) {
  fs::path d = make_cifar10("cli_cifar", 100);
  RunResult r = run(kRgb + " --data " + d.string() + " --data-format cifar" + kTrainFlags);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("640 training / 200 test samples"), std::string::npos) << r.output;
  EXPECT_GT(final_accuracy(r.output), 60.0) << "chance is 10%\n" << r.output;
}

TEST(DataCli, ChannelsLastModelWithAugmentationTrainsAndIsDeterministic) {
  fs::path d = make_cifar10("cli_cifar_nhwc", 200);
  fs::path out = test::temp_dir("cli_cifar_nhwc_out");
  // The samples' layout itself is checked by DataSource.NhwcModelsGetChannelsLastSamples.
  const std::string base = kRgbNhwc + " --data " + d.string() + " --augment crop:4,flip --deterministic" + kTrainFlags;
  RunResult a = run(base + " --seed 3 --metrics " + (out / "a.jsonl").string());
  ASSERT_EQ(a.code, 0) << a.output;
  EXPECT_GT(final_accuracy(a.output), 60.0) << a.output;
  RunResult b = run(base + " --seed 3 --metrics " + (out / "b.jsonl").string());
  RunResult c = run(base + " --seed 4 --metrics " + (out / "c.jsonl").string());
  ASSERT_EQ(b.code, 0) << b.output;
  ASSERT_EQ(c.code, 0) << c.output;
  auto losses = [](const fs::path& p) {
    std::ifstream f(p);
    std::string line, all;
    std::smatch m;
    while (std::getline(f, line))
      if (std::regex_search(line, m, std::regex(R"("train_loss": ([-0-9.e]+))"))) all += m[1].str() + " ";
    return all;
  };
  EXPECT_FALSE(losses(out / "a.jsonl").empty());
  EXPECT_EQ(losses(out / "a.jsonl"), losses(out / "b.jsonl")) << "same seed, same crops and flips";
  EXPECT_NE(losses(out / "a.jsonl"), losses(out / "c.jsonl")) << "another seed";
}

TEST(DataCli, ColourImageFolderTrainsEndToEnd) {
  fs::path d = test::temp_dir("cli_images");
  test::write_image_split(d / "train", test::coloured_samples(480, 10, 3, 32, 32, 300), 3, 32, 32, true);
  test::write_image_split(d / "test", test::coloured_samples(160, 10, 3, 32, 32, 301), 3, 32, 32, true);
  RunResult r = run(kRgb + " --data " + d.string() + " --data-format images" + kTrainFlags);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_GT(final_accuracy(r.output), 60.0) << "chance is 10%\n" << r.output;
}

TEST(DataCli, GreyImageFolderWithTestSplitTrainsLeNet) {
  fs::path d = test::temp_dir("cli_grey_images");
  // One folder per class, no train/ and test/: --test-split holds 20% out.
  test::write_image_split(d, test::coloured_samples(400, 4, 1, 28, 28, 400), 1, 28, 28, true);
  RunResult r =
      run(kLenet + " --data " + d.string() + " --test-split 0.2 --epochs 6 --batch-size 16 --lr 0.02 --log-every 0");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_GT(final_accuracy(r.output), 60.0) << "chance is 25%\n" << r.output;
}

TEST(DataCli, NumpyPairsTrainEndToEnd) {
  fs::path d = test::temp_dir("cli_npy");
  // Keras's habit: (N, H, W, C) uint8 pixels and uint8 labels; the model takes NCHW.
  for (auto [split, n, seed] : {std::tuple{"train", 640, 500u}, std::tuple{"test", 200, 501u}}) {
    auto s = test::coloured_samples(n, 10, 3, 32, 32, seed);
    Tensor x(DType::UInt8, {n, 32, 32, 3}), y(DType::UInt8, {n});
    for (int64_t i = 0; i < n; ++i) {
      auto hwc = test::to_hwc(s[i].chw, 3, 32, 32);
      std::copy(hwc.begin(), hwc.end(), x.ptr<uint8_t>() + i * 3072);
      y.ptr<uint8_t>()[i] = static_cast<uint8_t>(s[i].label);
    }
    save_npy((d / ("x_" + std::string(split) + ".npy")).string(), x);
    save_npy((d / ("y_" + std::string(split) + ".npy")).string(), y);
  }
  RunResult r = run(kRgb + " --data " + d.string() + " --data-format npy --normalize dataset" + kTrainFlags);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_GT(final_accuracy(r.output), 60.0) << "chance is 10%\n" << r.output;
}

TEST(DataCli, BadDataExitsWith2NamingTheFile) {
  fs::path d = make_cifar10("cli_bad_cifar", 600);
  fs::resize_file(d / "data_batch_2.bin", 3073 * 10 + 5);
  RunResult r = run(kRgb + " --data " + d.string() + " --max-steps 1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("data_batch_2.bin"), std::string::npos) << r.output;

  fs::path im = test::temp_dir("cli_bad_images");
  test::write_image_split(im / "train", test::coloured_samples(20, 2, 3, 32, 32, 601), 3, 32, 32, false);
  test::write_image_split(im / "test", test::coloured_samples(10, 2, 3, 32, 32, 602), 3, 32, 32, false);
  std::ofstream(im / "train" / "class1" / "broken.png") << "\x89PNG\r\n\x1a\n but not really";
  r = run(kRgb + " --data " + im.string() + " --max-steps 1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("broken.png"), std::string::npos) << r.output;
  fs::remove(im / "train" / "class1" / "broken.png");

  // Images of another size than the model's.
  r = run(kLenet + " --data " + im.string() + " --max-steps 1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("32x32"), std::string::npos) << r.output;

  for (const char* flags : {" --data-format tiff", " --augment rotate", " --normalize 0.5", " --data-format idx"}) {
    r = run(kRgb + " --data " + im.string() + " --max-steps 1" + flags);
    EXPECT_EQ(r.code, 2) << flags << ": " << r.output;
  }
  r = run(kRgb + " --data " + im.string() + " --max-steps 1 --data-format idx");
  EXPECT_NE(r.output.find("IDX files"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace cbt
