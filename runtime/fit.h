// The training loop over epochs: batches, evaluation after every epoch, progress, metrics.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>

#include "runtime/lr_schedule.h"
#include "runtime/trainer.h"

namespace cbt {

struct FitOptions {
  int64_t epochs = 2;
  int64_t max_steps = -1;          // stop after this many steps (tests, smoke runs); -1: none
  std::string metrics_path;        // JSON lines, one object per epoch
  int64_t log_every = 200;         // steps between progress lines
  uint64_t seed = 42;
  LrSchedule schedule;             // total_steps is filled in by fit() when left at 1
};

struct FitResult {
  EvalResult final_eval;
  double train_seconds = 0;        // training time, evaluation excluded
  double last_epoch_seconds = 0;
  int64_t steps = 0;
};

// Thrown when the loss or the weights stop being finite; the message names the step.
class TrainingDiverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

FitResult fit(Trainer& trainer, const TrainTestData& data, const FitOptions& opt, std::ostream& log);

}  // namespace cbt
