// TensorBoard event files: written by a training run (SMA, so with the replicas' spread),
// read back by TensorBoard's own EventAccumulator and by cbtrain's reader, and checked
// against the metrics file; TFRecord framing and corruption.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/run_cli.h"
#include "common/tiny_dataset.h"
#include "graph/errors.h"
#include "tensorboard/event_file.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

std::string capture(const std::string& cmd, int* code) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int st = pclose(p);
  *code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

TEST(TensorBoard, Crc32cOfTheStandardCheckString) {
  // The CRC-32C check value of "123456789" (RFC 3720, appendix B.4).
  EXPECT_EQ(tensorboard::crc32c("123456789", 9), 0xE3069283u);
  const uint32_t c = tensorboard::crc32c("abc", 3);
  EXPECT_EQ(tensorboard::masked_crc32c("abc", 3), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

TEST(TensorBoard, RunIsReadBackByTensorBoardsEventAccumulator) {
  fs::path data = test::make_tiny_dataset("tb", 512, 64);
  fs::path d = test::temp_dir("tb_out");
  test::CliResult r =
      test::run_cli(test::source_path("models/lenet5/lenet5.ts17.onnx") + " --data " + data.string() +
                    " --epochs 2 --batch-size 8 -k 2 --log-every 8 --lr-schedule cosine --tensorboard " +
                    (d / "tb").string() + " --metrics " + (d / "m.jsonl").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(d / "tb" / "config.toml"));

  // cbtrain's reader.
  tensorboard::ScalarSeries s = tensorboard::read_scalars((d / "tb").string());
  for (const char* tag : {"train/loss", "train/learning_rate", "train/images_per_sec", "sma/replica_spread",
                          "test/loss", "test/accuracy"})
    ASSERT_TRUE(s.count(tag)) << tag;
  // 512 samples / (2 learners x 8) = 32 rounds per epoch, a point every 8 rounds.
  ASSERT_EQ(s["train/loss"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(s["train/loss"][i].step, static_cast<int64_t>(8 * (i + 1)));
  EXPECT_GT(s["train/learning_rate"].front().value, s["train/learning_rate"].back().value) << "cosine decays";
  for (const auto& p : s["sma/replica_spread"]) EXPECT_GT(p.value, 0);
  ASSERT_EQ(s["test/accuracy"].size(), 2u);

  // The metrics file holds the same per-epoch numbers.
  std::ifstream m(d / "m.jsonl");
  std::string line;
  for (size_t e = 0; std::getline(m, line); ++e) {
    auto j = nlohmann::json::parse(line);
    ASSERT_LT(e, 2u);
    EXPECT_EQ(s["test/accuracy"][e].step, j["step"].get<int64_t>());
    EXPECT_NEAR(s["test/accuracy"][e].value, j["test_accuracy"].get<double>(), 1e-6);
    EXPECT_NEAR(s["test/loss"][e].value, j["test_loss"].get<double>(), 1e-5);
  }

  // TensorBoard's own reader sees exactly the same scalars.
  const char* py = std::getenv("CBT_PYTHON");
  int code = -1;
  std::string out = capture(std::string(py ? py : "python3") + " " +
                                test::source_path("tests/tools/read_tensorboard.py") + " " + (d / "tb").string(),
                            &code);
  if (code == 3) GTEST_SKIP() << out;
  ASSERT_EQ(code, 0) << out;
  auto tb = nlohmann::json::parse(out.substr(out.find('{')));
  for (const auto& [tag, points] : s) {
    ASSERT_TRUE(tb.contains(tag)) << tag << " missing in TensorBoard's reading: " << out;
    ASSERT_EQ(tb[tag].size(), points.size()) << tag;
    for (size_t i = 0; i < points.size(); ++i) {
      EXPECT_EQ(tb[tag][i][0].get<int64_t>(), points[i].step) << tag;
      EXPECT_EQ(tb[tag][i][1].get<double>(), points[i].value) << tag;  // the same float32
    }
  }
}

TEST(TensorBoard, CorruptFilesAreUserErrorsNamingTheRecord) {
  fs::path d = test::temp_dir("tb_corrupt");
  std::string file;
  {
    tensorboard::EventWriter w((d / "run").string());
    w.scalars(1, {{"a", 0.5}, {"b", 0.0}});
    w.scalars(2, {{"a", 0.25}});
    file = w.path();
  }
  auto s = tensorboard::read_scalars(file);
  ASSERT_EQ(s["a"].size(), 2u);
  ASSERT_EQ(s["b"].size(), 1u) << "a 0.0 value is still written";
  EXPECT_EQ(s["b"][0].value, 0.0);

  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  for (size_t flip : {size_t{3}, bytes.size() / 2, bytes.size() - 2}) {
    std::string bad = bytes;
    bad[flip] ^= 0x20;
    std::ofstream(d / "bad.tfevents", std::ios::binary) << bad;
    EXPECT_THROW(tensorboard::read_scalars((d / "bad.tfevents").string()), UserError) << "byte " << flip;
  }
  std::ofstream(d / "short.tfevents", std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  EXPECT_THROW(tensorboard::read_scalars((d / "short.tfevents").string()), UserError);
  EXPECT_THROW(tensorboard::read_scalars((d / "nothing").string()), UserError);
}

}  // namespace
}  // namespace cbt
