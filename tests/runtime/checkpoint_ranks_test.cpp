// Renumbering of learners between a rank's own numbering and the run's (checkpoints of
// several processes), and the single-process pass-through.
#include "runtime/checkpoint_ranks.h"

#include <gtest/gtest.h>

#include <random>

namespace cbt {
namespace {

TEST(CheckpointRanks, LearnerNamesShiftWithinTheirRange) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    const int limit = 1 + static_cast<int>(rng() % 64);
    const int j = static_cast<int>(rng() % 64), shift = static_cast<int>(rng() % 129) - 64;
    const std::string role = i % 2 ? "params" : "moment1";
    auto got = shift_learner_name("learner" + std::to_string(j) + "/" + role, shift, limit);
    if (j + shift >= 0 && j + shift < limit) {
      ASSERT_TRUE(got);
      EXPECT_EQ(*got, "learner" + std::to_string(j + shift) + "/" + role);
    } else {
      EXPECT_FALSE(got) << j << " + " << shift << " outside [0, " << limit << ")";
    }
  }
  // The central model and names that only look alike keep their names.
  for (const std::string n : {"central/z", "central/buffers", "learnerX/params", "learner3params"})
    EXPECT_EQ(shift_learner_name(n, 5, 2).value_or("?"), n);
}

TEST(CheckpointRanks, OneProcessKeepsItsStateAsItIs) {
  std::mt19937 rng(11);
  TrainerState s;
  s.rounds = static_cast<int64_t>(rng() % 1000);
  s.lr = 0.01f * static_cast<float>(1 + rng() % 9);
  for (const std::string n : {"learner0/params", "learner1/params", "central/z"}) {
    Tensor t(DType::Float32, {5});
    for (int i = 0; i < 5; ++i) t.ptr<float>()[i] = static_cast<float>(rng() % 1000) / 7.0f;
    s.tensors.emplace_back(n, t);
  }
  auto pg = single_process_group();
  TrainerState g = gather_trainer_state(*pg, s, 2);
  ASSERT_EQ(g.tensors.size(), s.tensors.size());
  EXPECT_EQ(g.rounds, s.rounds);
  EXPECT_EQ(g.lr, s.lr);
  for (size_t i = 0; i < s.tensors.size(); ++i) {
    EXPECT_EQ(g.tensors[i].first, s.tensors[i].first);
    for (int k = 0; k < 5; ++k) EXPECT_EQ(g.tensors[i].second.ptr<float>()[k], s.tensors[i].second.ptr<float>()[k]);
  }
}

}  // namespace
}  // namespace cbt
