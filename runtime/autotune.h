// The auto-tuner: how many learners per device. It starts with one and adds one while the
// measured throughput (images/s over whole rounds) rises by more than a threshold — a
// fraction of the throughput one learner brought on average so far — and stops at the
// memory limit. Every decision is logged with the throughput it saw.
#pragma once
#include <iosfwd>

#include "runtime/trainer.h"

namespace cbt {

struct AutotuneOptions {
  double threshold = 0.10;  // add learners while one adds more than this share of a learner's
  int max_learners = 16;
  int warmup_rounds = 5;
  int measure_rounds = 30;
};

struct Throughput {
  double images_per_sec = 0;
  size_t bytes_per_learner = 0;
  // The share of the timed windows the host spent issuing rounds (the rest it waited for the
  // devices at the windows' ends): near 1 when issuing work, not the devices, sets the pace.
  double enqueue_fraction = 0;
};

// Images/s of `trainer` on synthetic random data: the median of 3 windows of
// `measure_rounds` rounds after `warmup_rounds`, each window ended by a device sync.
Throughput measure_throughput(Trainer& trainer, int warmup_rounds, int measure_rounds);

// Returns the chosen number of learners; logs "autotune: ..." lines to `log`.
int autotune_learners(const Graph& model, const TrainerOptions& base, const AutotuneOptions& opt,
                      std::ostream& log);

}  // namespace cbt
