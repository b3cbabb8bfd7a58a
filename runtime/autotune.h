// The auto-tuner: how many learners per device. It starts with one and adds one while the
// measured throughput (images/s over whole rounds) rises by more than a threshold — a
// fraction of the throughput one learner brought on average so far — and stops at the
// memory limit. One learner count that falls short is given a second chance: the next count
// is measured too, and kept when it beats the best by the threshold for both learners (a
// single slow measurement does not end the search). Run while training (training_tuner.h),
// the same rule goes down from the most learners instead (LearnerSearch::Direction::Down). Every decision
// is logged with the throughput it saw.
#pragma once
#include <iosfwd>
#include <memory>
#include <string>

#include "runtime/trainer.h"

namespace cbt {

struct AutotuneOptions {
  double threshold = 0.10;  // add learners while one adds more than this share of a learner's
  // The most learners in all: every device of every process. SMA's statistical efficiency
  // falls as learners are added (LeNet-5 on Fashion-MNIST, batch 32, lr 0.05: 90% test
  // accuracy at epoch 19 with 16 learners, 31 with 24, not in 40 epochs with 30), which the
  // throughput the tuner measures cannot see; the devices share this limit. 8, not 16: on one
  // H200 (2026-11-29, eight seeds), ResNet-20 reached 91% at epoch 5-6 in 8 of 8 runs with at
  // most 8 and at epochs 7-10 with 16 (1.23x the images a second); LeNet-5 reached 90% in 6 of
  // 6 runs with 8 and in 3 of 6 with 16.
  int max_learners = 8;
  int warmup_rounds = 3;
  int measure_rounds = 5;             // rounds of a timed window at least, and
  double min_window_seconds = 0.025;  // more rounds when that many take less time
  int patience = 1;                   // counts that may fall short in a row before the search ends
  // Processes that each run this search alone on their own devices (mpirun ranks, which then
  // agree on one count): they share max_learners with the devices of TrainerOptions::processes.
  int processes = 1;
};

// The tuner's rule, apart from the measuring. Going up (before training: autotune_learners), fed
// the throughput of 1, 2, ... learners in order, it keeps the best count and says when to stop.
// Going down (while training: TrainingTuner), fed the throughput of the most learners it may
// take, then of one fewer each time, it drops a learner while the learners the best count has
// over this one bring at most `threshold` of a learner's share each (this count's images/s per
// learner), and ends when they bring more: the best count is then the fewest that does as well;
// a count that makes them look worth keeping gets one more count's chance (`patience`), as a
// count that falls short does going up. Run while training, the rounds before the choice then
// train at or near the count chosen, not at one learner (see training_tuner.h).
class LearnerSearch {
 public:
  enum class Direction { Up, Down };
  LearnerSearch(double threshold, int patience, Direction direction = Direction::Up)
      : threshold_(threshold), patience_(patience), direction_(direction) {}
  // The throughput measured with `k` learners (k = the last count fed + 1 going up; the most
  // first and then k = the last count fed - 1 going down); returns false once the search is
  // over (going down, at the latest with k = 1). `verdict` gets the reason, for the log.
  bool add(int k, double rate, std::string* verdict = nullptr);
  int best_learners() const { return best_k_; }
  double best_rate() const { return best_; }

 private:
  bool add_up(int k, double rate, std::string* verdict);
  bool add_down(int k, double rate, std::string* verdict);

  double threshold_;
  int patience_;
  Direction direction_;
  int best_k_ = 0;
  double best_ = 0;
  int misses_ = 0;
};

struct Throughput {
  double images_per_sec = 0;
  size_t bytes_per_learner = 0;
  // The share of the timed windows the host spent issuing rounds (the rest it waited for the
  // devices at the windows' ends): near 1 when issuing work, not the devices, sets the pace.
  double enqueue_fraction = 0;
};

// Images/s of `trainer` on synthetic random data: the median of 3 windows of
// `measure_rounds` rounds after `warmup_rounds`, each window ended by a device sync; with
// `min_window_seconds`, windows of as many more rounds as that takes (a first window of
// `measure_rounds` tells how many).
Throughput measure_throughput(Trainer& trainer, int warmup_rounds, int measure_rounds, double min_window_seconds = 0);

// The most learners per device the tuner tries: max_learners shared by the devices of all
// processes (at least one each).
int autotune_limit_per_device(const TrainerOptions& base, const AutotuneOptions& opt);

// Builds the trainer a search times: `options.learners` per device (and convolution searches for
// that many, TrainerOptions::conv_timing_learners), halving the count while it does not fit in
// memory. Logs the build ("autotune: built N learner(s) ..."); `seconds`, when given, receives
// its seconds.
std::unique_ptr<Trainer> build_search_trainer(const Graph& model, TrainerOptions options, std::ostream& log,
                                              double* seconds = nullptr);

// Returns the chosen number of learners per device; logs "autotune: ..." lines to `log`: each
// count's throughput, memory and seconds, and the search's seconds. One trainer of the largest
// count is built (fewer, halving, when it does not fit in memory) and every count is timed on its
// first learners (Trainer::set_active_learners); CPU learners with --threads auto
// (TrainerOptions::kAutoThreads) take their threads by the count, so then each count builds its
// own trainer. Every count uses convolution algorithms chosen for the largest count
// (TrainerOptions::conv_timing_learners), so that the searches run once; a chosen count below 8
// searches again for its own concurrency when training.
// `seconds`, when given, receives the search's seconds (the figure of its last log line).
int autotune_learners(const Graph& model, const TrainerOptions& base, const AutotuneOptions& opt, std::ostream& log,
                      double* seconds = nullptr);

}  // namespace cbt
