// Checkpoints: save/restore round trip of a two-learner SMA trainer, fallback past corrupted
// and truncated files, retention, refusal of another model or configuration.
#include "runtime/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/op_harness.h"
#include "common/paths.h"
#include "common/random_dataset.h"
#include "common/tiny_dataset.h"
#include "onnx_import/model_io.h"
#include "runtime/fit.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) { return test::temp_dir("ckpt_" + name); }

const Graph& lenet() {
  static ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  return m.graph;
}

TrainerOptions sma_options() {
  TrainerOptions to;
  to.batch_size = 4;
  to.learners = 2;
  to.algorithm = Algorithm::Sma;
  to.optimizer.lr = 0.05f;
  to.deterministic = true;
  return to;
}

// Round r's batches, the same for every trainer.
void train_round(Trainer& t, int r) {
  std::mt19937 rng(static_cast<uint32_t>(100 + r));
  std::normal_distribution<float> nd;
  std::vector<Tensor> xs, ys;
  for (int j = 0; j < t.learners(); ++j) {
    Tensor x(DType::Float32, t.input_type().shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] = nd(rng);
    xs.push_back(x);
    ys.push_back(test::random_int_tensor({t.input_type().shape[0]}, 0, 10, rng()));
  }
  t.round(xs, ys);
}

void expect_same_state(const TrainerState& a, const TrainerState& b) {
  EXPECT_EQ(a.rounds, b.rounds);
  EXPECT_EQ(a.lr, b.lr);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    EXPECT_TRUE(test::same_bytes(a.tensors[i].second, b.tensors[i].second)) << a.tensors[i].first;
  }
}

Checkpoint make_checkpoint(Trainer& t, int64_t round_in_epoch) {
  Checkpoint c;
  c.state = t.state();
  c.meta.fingerprint = model_fingerprint(t.model());
  LrSchedule sch;
  c.meta.config = checkpoint_config(t.options(), sch, 42, 1000);
  c.meta.epoch = 1;
  c.meta.round_in_epoch = round_in_epoch;
  c.meta.round = t.rounds();
  return c;
}

void flip_byte(const std::string& path, size_t at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x5a));
}

TEST(Checkpoint, SaveRestoreRoundTripOfTwoSmaLearners) {
  fs::path dir = temp_dir("roundtrip");
  Trainer a(lenet(), sma_options());
  for (int r = 0; r < 3; ++r) train_round(a, r);
  a.set_learning_rate(0.025f);
  const std::string path = write_checkpoint(dir.string(), make_checkpoint(a, 3));
  EXPECT_EQ(path, checkpoint_path(dir.string(), 3));

  Trainer b(lenet(), sma_options());
  auto loaded = load_latest_checkpoint(dir.string());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->path, path);
  EXPECT_TRUE(loaded->skipped.empty());
  EXPECT_EQ(loaded->checkpoint.meta.round, 3);
  EXPECT_EQ(loaded->checkpoint.meta.round_in_epoch, 3);
  b.restore(loaded->checkpoint.state);

  // Every buffer: both replicas' parameters and momenta, z and z_prev.
  TrainerState sa = a.state(), sb = b.state();
  expect_same_state(sa, sb);
  int replicas = 0;
  for (const auto& [name, t] : sa.tensors) replicas += name.rfind("learner", 0) == 0;
  EXPECT_GE(replicas, 4) << "params and moment1 of two learners";
  EXPECT_EQ(b.learning_rate(), 0.025f);
  EXPECT_EQ(b.rounds(), 3);

  // And they go on identically.
  for (int r = 3; r < 5; ++r) {
    train_round(a, r);
    train_round(b, r);
  }
  expect_same_state(a.state(), b.state());
  fs::remove_all(dir);
}

class CheckpointFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    Trainer t(lenet(), sma_options());
    train_round(t, 0);
    older_ = write_checkpoint(dir_.string(), make_checkpoint(t, 1));
    train_round(t, 1);
    newest_ = write_checkpoint(dir_.string(), make_checkpoint(t, 2));
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string older_, newest_;
};

TEST_F(CheckpointFiles, CorruptedNewestFallsBackToThePrevious) {
  flip_byte(newest_, fs::file_size(newest_) / 2);
  auto loaded = load_latest_checkpoint(dir_.string());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->path, older_);
  EXPECT_EQ(loaded->checkpoint.meta.round, 1);
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_NE(loaded->skipped[0].find(newest_), std::string::npos) << loaded->skipped[0];
  EXPECT_NE(loaded->skipped[0].find("checksum"), std::string::npos) << loaded->skipped[0];
}

TEST_F(CheckpointFiles, CorruptedHeaderFallsBackToThePrevious) {
  flip_byte(newest_, 2);  // the magic
  auto loaded = load_latest_checkpoint(dir_.string());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->path, older_);
}

TEST_F(CheckpointFiles, TruncatedNewestFallsBackToThePrevious) {
  fs::resize_file(newest_, fs::file_size(newest_) - 1000);
  auto loaded = load_latest_checkpoint(dir_.string());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->path, older_);
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_NE(loaded->skipped[0].find("truncated"), std::string::npos) << loaded->skipped[0];

  fs::resize_file(newest_, 10);  // shorter than the header
  loaded = load_latest_checkpoint(dir_.string());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->path, older_);
}

TEST_F(CheckpointFiles, TemporaryFilesOfInterruptedWritesAreIgnored) {
  // What a writer killed before its rename leaves behind, newer than any checkpoint.
  std::ofstream(dir_ / ".ckpt-000000000009.cbt.tmp.AbC123") << "partial";
  EXPECT_EQ(list_checkpoints(dir_.string()), (std::vector<std::string>{newest_, older_}));
  auto loaded = load_latest_checkpoint(dir_.string());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->path, newest_);
}

TEST_F(CheckpointFiles, NoIntactCheckpointIsAnError) {
  flip_byte(newest_, 100);
  fs::resize_file(older_, 50);
  EXPECT_THROW(load_latest_checkpoint(dir_.string()), UserError);
}

TEST_F(CheckpointFiles, KeepsTheNewestTwo) {
  Trainer t(lenet(), sma_options());
  for (int r = 0; r < 3; ++r) train_round(t, r);
  std::ofstream(dir_ / ".ckpt-000000000002.cbt.tmp.X1y2Z3") << "left by a killed writer";
  const std::string third = write_checkpoint(dir_.string(), make_checkpoint(t, 3));
  EXPECT_EQ(list_checkpoints(dir_.string()), (std::vector<std::string>{third, newest_}));
  EXPECT_FALSE(fs::exists(dir_ / ".ckpt-000000000002.cbt.tmp.X1y2Z3"));
}

TEST(Checkpoint, EmptyFolderHasNone) {
  fs::path dir = temp_dir("empty");
  EXPECT_FALSE(load_latest_checkpoint(dir.string()).has_value());
  EXPECT_FALSE(load_latest_checkpoint((dir / "missing").string()).has_value());
  fs::remove_all(dir);
}

TEST(Checkpoint, AnotherModelOrConfigurationIsRefused) {
  Trainer t(lenet(), sma_options());
  const CheckpointMeta saved = make_checkpoint(t, 0).meta;
  std::ostringstream log;
  EXPECT_NO_THROW(check_resumable(saved, saved, false, "c.cbt", log));

  ImportedModel other = load_model(test::source_path("tests/runtime/data/sma_model.onnx"));
  CheckpointMeta now = saved;
  now.fingerprint = model_fingerprint(other.graph);
  EXPECT_NE(now.fingerprint, saved.fingerprint);
  try {
    check_resumable(saved, now, false, "c.cbt", log);
    ADD_FAILURE() << "another model was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--force-resume"), std::string::npos) << e.what();
  }

  TrainerOptions bigger = sma_options();
  bigger.batch_size = 8;
  now = saved;
  LrSchedule sch;
  now.config = checkpoint_config(bigger, sch, 42, 1000);
  try {
    check_resumable(saved, now, false, "c.cbt", log);
    ADD_FAILURE() << "another batch size was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("batch 4 (now 8)"), std::string::npos) << e.what();
  }
  now.config = checkpoint_config(sma_options(), sch, 7, 1000);
  EXPECT_THROW(check_resumable(saved, now, false, "c.cbt", log), UserError);

  // --force-resume: accepted with a warning.
  EXPECT_NO_THROW(check_resumable(saved, now, true, "c.cbt", log));
  EXPECT_NE(log.str().find("seed 42 (now 7)"), std::string::npos) << log.str();
}

TEST(Checkpoint, StateOfAnotherShapeIsRefusedAndLeavesTheTrainerAsItWas) {
  Trainer two(lenet(), sma_options());
  train_round(two, 0);
  TrainerOptions o = sma_options();
  o.learners = 3;
  Trainer three(lenet(), o);
  const TrainerState before = three.state();
  EXPECT_THROW(three.restore(two.state()), UserError);
  expect_same_state(three.state(), before);

  ImportedModel other = load_model(test::source_path("tests/runtime/data/sma_model.onnx"));
  TrainerOptions so;
  so.batch_size = 4;
  Trainer small(other.graph, so);
  EXPECT_THROW(small.restore(two.state()), UserError);
}

TEST(Checkpoint, DecodingRejectsGarbage) {
  EXPECT_THROW(decode_checkpoint("", "x"), UserError);
  EXPECT_THROW(decode_checkpoint(std::string(100, 'A'), "x"), UserError);
  Checkpoint c;
  c.meta.config = "a=1\n";
  std::string bytes = encode_checkpoint(c);
  EXPECT_EQ(decode_checkpoint(bytes, "x").meta.config, "a=1\n");
  bytes[8] = 9;  // format version
  EXPECT_THROW(decode_checkpoint(bytes, "x"), UserError);
}

TEST(Checkpoint, EveryParsesRoundsAndEpochs) {
  CheckpointOptions o;
  parse_checkpoint_every("250", o);
  EXPECT_EQ(o.every_rounds, 250);
  EXPECT_EQ(o.every_epochs, 0);
  parse_checkpoint_every("2e", o);
  EXPECT_EQ(o.every_rounds, 0);
  EXPECT_EQ(o.every_epochs, 2);
  for (const char* bad : {"", "e", "0", "-3", "1.5", "3x", "1ee"})
    EXPECT_THROW(parse_checkpoint_every(bad, o), UserError) << bad;
}

TEST(Checkpoint, NonFiniteStateIsFound) {
  TrainerState s;
  Tensor a(DType::Float32, {3}), b(DType::Float32, {2});
  s.tensors = {{"a", a}, {"b", b}};
  EXPECT_EQ(first_non_finite(s), "");
  b.ptr<float>()[1] = NAN;
  EXPECT_EQ(first_non_finite(s), "b");
}

void poison_z(TrainerState& s) {
  for (auto& [name, t] : s.tensors)
    if (name == "central/z") t.ptr<float>()[0] = NAN;
}

TEST(Checkpoint, DivergedStateIsNeverWrittenAndTheLastGoodOneStays) {
  fs::path dir = temp_dir("diverged");
  TrainTestData data{test::random_dataset(64), test::random_dataset(8)};
  FitOptions fo;
  fo.epochs = 1;
  fo.log_every = 0;
  fo.max_steps = 2;
  fo.checkpoint.dir = dir.string();
  fo.checkpoint.every_rounds = 1;
  std::ostringstream log;
  {
    Trainer t(lenet(), sma_options());
    fit(t, data, fo, log);
  }
  const std::vector<std::string> good = list_checkpoints(dir.string());
  ASSERT_EQ(good.size(), 2u);
  // A fresh run must not mix its files with those of another run.
  {
    Trainer t(lenet(), sma_options());
    EXPECT_THROW(fit(t, data, fo, log), UserError);
  }
  // The newest checkpoint's central model goes bad; the replicas stay finite, so the next
  // round's loss is finite and only the weights check can notice.
  Checkpoint c = read_checkpoint(good[0]);
  poison_z(c.state);
  write_checkpoint(dir.string(), c);
  const auto before = fs::last_write_time(good[1]);

  Trainer t(lenet(), sma_options());
  fo.checkpoint.resume = true;
  fo.max_steps = 3;
  try {
    fit(t, data, fo, log);
    ADD_FAILURE() << "a non-finite state was checkpointed";
  } catch (const TrainingDiverged& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite values at round 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(good[0]), std::string::npos) << e.what();
  }
  EXPECT_EQ(list_checkpoints(dir.string()), good);
  EXPECT_EQ(fs::last_write_time(good[1]), before);
  fs::remove_all(dir);
}

TEST(Checkpoint, NonFiniteWeightsStopTrainingAtTheEndOfAnEpoch) {
  TrainTestData data{test::random_dataset(64), test::random_dataset(8)};
  Trainer t(lenet(), sma_options());
  TrainerState s = t.state();
  poison_z(s);
  t.restore(s);
  FitOptions fo;
  fo.epochs = 1;
  fo.log_every = 0;
  fo.max_steps = 1;  // one round: its loss (at the replicas) is still finite
  std::ostringstream log;
  try {
    fit(t, data, fo, log);
    ADD_FAILURE() << "non-finite weights went unnoticed";
  } catch (const TrainingDiverged& e) {
    EXPECT_NE(std::string(e.what()).find("not finite at round 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lower the learning rate"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--alpha"), std::string::npos) << "the default alpha: " << e.what();
  }
  // With a given alpha the message names it too: it adds to what the rate does.
  TrainerOptions given = sma_options();
  given.alpha = 0.6f;
  Trainer a(lenet(), given);
  a.restore(s);
  try {
    fit(a, data, fo, log);
    ADD_FAILURE() << "non-finite weights went unnoticed";
  } catch (const TrainingDiverged& e) {
    EXPECT_NE(std::string(e.what()).find("lower the learning rate, or --alpha (0.6 with 2 learners"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cbt
