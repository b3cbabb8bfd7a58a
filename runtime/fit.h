// The training loop over epochs: batches, evaluation after every epoch, progress, metrics.
#pragma once
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "runtime/autotune.h"
#include "runtime/checkpoint.h"
#include "runtime/lr_schedule.h"
#include "runtime/progress.h"
#include "runtime/trainer.h"

namespace cbt {

struct FitOptions {
  int64_t epochs = 2;
  int64_t max_steps = -1;    // stop after this many steps (tests, smoke runs); -1: none
  std::string metrics_path;  // JSON lines, one object per epoch
  int64_t log_every = 200;   // steps between progress lines and TensorBoard scalars
  ProgressStyle progress = ProgressStyle::Lines;
  std::string tensorboard_dir;  // TensorBoard event files; "" for none
  int64_t loss_every = 0;       // rounds between loss reads; 0: every round on the CPU, 10 on GPUs
  uint64_t seed = 42;
  LrSchedule schedule;                    // total_steps is filled in by fit() when left at 1
  std::vector<int64_t> milestone_epochs;  // step schedule: fit() puts them in schedule.milestones
  // --learners auto, tuned while training (training_tuner.h): the trainer's built learners are
  // the counts to search. One process, no checkpoints. While the count changes, a schedule
  // position is the rounds the images trained so far make at the current count.
  std::optional<AutotuneOptions> tune_learners;
  double autotune_seconds = 0;   // the learner search before training (--learners auto; tuned
                                 // while training: its trainer's build), reported in every metrics
                                 // line as autotune_s
  CheckpointOptions checkpoint;  // where and how often to checkpoint; --resume
};

struct FitResult {
  EvalResult final_eval;
  double train_seconds = 0;  // training time, evaluation excluded
  double last_epoch_seconds = 0;
  int64_t steps = 0;
  int64_t images = 0;         // training samples seen by every process (all learners)
  int learners = 0;           // learners per device at the end (tune_learners: the choice)
  double search_seconds = 0;  // tune_learners: the training seconds the search took
  double best_accuracy = 0;   // the best test accuracy after an epoch, and that epoch
  int64_t best_epoch = 0;
  std::string tensorboard_file;  // the event file written ("" when none)
  // The signal (SIGINT, SIGTERM) that stopped training early, 0 when it ran to the end;
  // then the state is in `checkpoint` (when checkpoints are on) and final_eval is not set.
  int stopped_by_signal = 0;
  std::string checkpoint;  // the newest checkpoint written ("" when none)
};

// Thrown when the loss or the weights stop being finite; the message names the step.
class TrainingDiverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGINT and SIGTERM handlers that ask fit() to stop after the current round (a second
// signal kills the process as usual).
void install_stop_handlers();

// Throws a UserError unless a round of `learners` batches of `batch` fits in a training set of
// `samples` (no sample twice in an epoch); `batch_name` says where the batch was given
// ("--batch-size", "TrainOptions: batch_size"). Callers check before they build a trainer for
// the batch (a batch of 10^11 samples runs out of memory building the first learner); fit()
// checks its widest round again.
void check_round_fits(int64_t batch, int64_t learners, int64_t samples, const std::string& batch_name);

FitResult fit(Trainer& trainer, const TrainTestData& data, const FitOptions& opt, std::ostream& log);

}  // namespace cbt
