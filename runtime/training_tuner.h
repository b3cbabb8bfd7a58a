// Crossbow's auto-tuner run while training: the learner search of autotune.h timed on the
// rounds that train the model, so that the search's rounds are training too.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "runtime/autotune.h"

namespace cbt {

// fit() drives it: the trainer starts with every built learner per device (the most the search
// may take); each count trains for a few warm-up rounds and then for timed windows
// (AutotuneOptions: a first window of measure_rounds that says how many rounds make
// min_window_seconds, then three of those, the first window being the first of them when it
// lasted min_window_seconds; the median counts). The search (LearnerSearch, going down) then drops a
// learner per device (Trainer::set_active_learners) or ends; the best count then trains on, its
// learners rejoining from the central model when it is more than the last count timed. It
// searches downwards because the search's rounds train the model: a climb from one learner
// trained its first rounds with few learners, where SMA's default alpha is near 1, and
// ResNet-20 then reached 91% at epochs 6-7 where the same 8 learners from the start take 4-5
// (one H200, 2026-11-29, three seeds each).
// Evaluation between epochs is kept off the clock (pause/resume).
class TrainingTuner {
 public:
  using Clock = std::function<double()>;  // seconds; a steady clock unless a test gives one
  TrainingTuner(Trainer& trainer, const AutotuneOptions& options, std::ostream& log, Clock clock = {});

  bool searching() const { return searching_; }
  // Learners per device of the best count so far (the count training goes on with).
  int best() const { return search_.best_learners() > 0 ? search_.best_learners() : limit_; }
  // After each round issued to the trainer: at a window's end it waits for the devices and
  // times the window; when a count is measured it changes the trainer's count, and returns true.
  bool after_round();
  // Around work that is not training (evaluation): the devices are waited for and the clock stops.
  void pause();
  void resume();
  // Training ended before the search did: the best count so far is the choice (logged).
  void finish();
  // Seconds of training since the search began, evaluation excluded (the figure of the last log line).
  double seconds() const { return searched_seconds_; }

 private:
  enum class Phase { Warmup, Sizing, Window };
  // Seconds of training so far: the clock without its pauses.
  double training_clock() const { return banked_ + (paused_ ? 0 : clock_() - resumed_); }
  void start_count(int k);
  void end(const std::string& why);

  Trainer& trainer_;
  AutotuneOptions opt_;
  std::ostream& log_;
  Clock clock_;
  LearnerSearch search_;
  int limit_ = 1, k_ = 1;
  bool searching_ = true, paused_ = false;
  Phase phase_ = Phase::Warmup;
  int64_t rounds_ = 0;                                                // of the phase so far
  int64_t window_rounds_ = 0;                                         // rounds of each timed window of this count
  std::vector<double> rates_;                                         // of this count's windows
  double banked_ = 0, resumed_ = 0;                                   // the clock: before the last pause, and since
  double window_start_ = 0, count_start_ = 0, searched_seconds_ = 0;  // readings of training_clock()
};

}  // namespace cbt
