// The public C++ API (include/cbtrain/cbtrain.h): options out of their ranges are user errors
// that name the option, raised before anything is read; in-range options train and save.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cbtrain/cbtrain.h"
#include "common/paths.h"
#include "common/tiny_dataset.h"
#include "graph/tensor.h"
#include "runtime/npy.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

TEST(Api, TrainOptionsOutOfRangeAreUserErrorsNamingTheOption) {
  cbtrain::Model m = cbtrain::Model::load(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  using Change = std::function<void(cbtrain::TrainOptions&)>;
  const std::vector<std::pair<std::string, Change>> bad = {
      {"lr", [&](auto& o) { o.lr = nan; }},
      {"lr", [&](auto& o) { o.lr = inf; }},
      {"lr", [](auto& o) { o.lr = 1e39; }},  // inf as the trainer's float
      {"lr", [](auto& o) { o.lr = 0; }},
      {"momentum", [&](auto& o) { o.momentum = nan; }},
      {"momentum", [](auto& o) { o.momentum = 1.5; }},
      {"weight_decay", [&](auto& o) { o.weight_decay = nan; }},
      {"weight_decay", [](auto& o) { o.weight_decay = -1e-4; }},
      {"epochs", [](auto& o) { o.epochs = 0; }},
      {"max_steps", [](auto& o) { o.max_steps = -2; }},
      {"learners", [](auto& o) { o.learners = 0; }},
      {"batch_size", [](auto& o) { o.batch_size = 0; }},
      {"data_format", [](auto& o) { o.data_format = "csv"; }},
      {"lr_schedule", [](auto& o) { o.lr_schedule = "step"; }},  // needs milestones the API has not
  };
  for (const auto& [option, change] : bad) {
    cbtrain::TrainOptions o;
    o.data_dir = "/nonexistent/data";  // checked first: the options' error, not the data's
    change(o);
    try {
      m.train(o);
      ADD_FAILURE() << option << ": no error";
    } catch (const cbtrain::Error& e) {
      EXPECT_TRUE(e.is_user_error()) << option << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("TrainOptions: " + option + " must be"), std::string::npos)
          << option << ": " << e.what();
    }
  }

  // A round larger than the training set is refused before a learner is built for it (a batch
  // of 10^11 would not fit in memory).
  const std::string data_dir = test::make_tiny_dataset("api").string();
  for (auto [batch, learners] : {std::pair<int64_t, int>{100'000'000'000, 1}, {100, 4}}) {
    cbtrain::TrainOptions o;
    o.data_dir = data_dir;
    o.batch_size = batch;
    o.learners = learners;
    const std::string want = "TrainOptions: batch_size " + std::to_string(batch) +
                             (learners > 1 ? " x 4 learners" : "") + " exceeds the training set (256 samples)";
    try {
      m.train(o);
      ADD_FAILURE() << want << ": no error";
    } catch (const cbtrain::Error& e) {
      EXPECT_TRUE(e.is_user_error()) << e.what();
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }

  // In range: trains on a small random data set, and saves.
  cbtrain::TrainOptions o;
  o.data_dir = data_dir;
  o.max_steps = 3;
  o.lr = 0.05;
  cbtrain::TrainReport r = m.train(o);
  EXPECT_EQ(r.steps, 3);
  EXPECT_TRUE(std::isfinite(r.test_loss));
  const fs::path out = test::temp_dir("api_out") / "m.onnx";
  m.save(out.string());
  EXPECT_GT(fs::file_size(out), 1000u);
}

// Data in another format than IDX (the data_format the command line's --data-format names,
// told by the files when "auto"), trained over a cosine schedule: it learns, and a data folder
// in the wrong format is a user error naming the files it looked for.
TEST(Api, NpyDataAndCosineScheduleTrain) {
  const fs::path dir = test::temp_dir("api_npy");
  std::mt19937 rng(3);
  auto write_split = [&](const std::string& split, int64_t n) {
    Tensor x(DType::UInt8, Shape{n, 28, 28}, Device{}), y(DType::Int64, Shape{n}, Device{});
    for (int64_t i = 0; i < n; ++i) {
      const int64_t label = static_cast<int64_t>(rng() % 10);
      y.ptr<int64_t>()[i] = label;
      // A learnable signal: the class sets the brightness of the image, noise on top.
      for (int64_t p = 0; p < 784; ++p)
        x.ptr<uint8_t>()[i * 784 + p] = static_cast<uint8_t>(std::min<int64_t>(255, label * 25 + rng() % 20));
    }
    save_npy((dir / (split + "_images.npy")).string(), x);
    save_npy((dir / (split + "_labels.npy")).string(), y);
  };
  write_split("train", 512);
  write_split("test", 128);
  const std::string lenet = test::source_path("models/lenet5/lenet5.ts17.onnx");
  for (const std::string format : {"auto", "npy"}) {
    cbtrain::Model m = cbtrain::Model::load(lenet);
    cbtrain::TrainOptions o;
    o.data_dir = dir.string();
    o.data_format = format;
    o.lr_schedule = "cosine";
    o.lr = 0.05;
    o.epochs = 10;
    cbtrain::TrainReport r = m.train(o);
    EXPECT_EQ(r.steps, 10 * (512 / 32)) << format;
    EXPECT_GT(r.test_accuracy, 0.5) << format << ": the brightness of a class is easy to learn";
  }
  cbtrain::Model m = cbtrain::Model::load(lenet);
  cbtrain::TrainOptions o;
  o.data_dir = dir.string();
  o.data_format = "idx";
  try {
    m.train(o);
    ADD_FAILURE() << "npy files read as IDX";
  } catch (const cbtrain::Error& e) {
    EXPECT_TRUE(e.is_user_error()) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected the MNIST/Fashion-MNIST IDX files"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cbt
