// The learner search timed on training rounds (TrainingTuner).
#include "runtime/training_tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>

namespace cbt {

namespace {
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

TrainingTuner::TrainingTuner(Trainer& trainer, const AutotuneOptions& options, std::ostream& log, Clock clock)
    : trainer_(trainer),
      opt_(options),
      log_(log),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)),
      search_(options.threshold, options.patience, LearnerSearch::Direction::Down) {
  const size_t devices = std::max<size_t>(1, trainer.options().gpus.size());
  limit_ = static_cast<int>(static_cast<size_t>(trainer.built_learners()) / devices);
  resumed_ = clock_();
  log_ << "autotune: timing " << limit_ << " down to 1 learner(s) per device while training\n";
  start_count(limit_);
}

void TrainingTuner::start_count(int k) {
  if (trainer_.options().learners != k) trainer_.set_active_learners(k);
  k_ = k;
  phase_ = Phase::Warmup;
  rounds_ = 0;
  rates_.clear();
  count_start_ = training_clock();
}

bool TrainingTuner::after_round() {
  if (!searching_) return false;
  ++rounds_;
  switch (phase_) {
    case Phase::Warmup:
      if (rounds_ < opt_.warmup_rounds) return false;
      trainer_.synchronize();
      phase_ = Phase::Sizing;
      window_rounds_ = opt_.measure_rounds;
      break;
    case Phase::Sizing:
    case Phase::Window: {
      if (rounds_ < window_rounds_) return false;
      trainer_.synchronize();
      const double s = std::max(training_clock() - window_start_, 1e-9);
      const int64_t batch = trainer_.input_type().shape.at(0);
      const double rate = static_cast<double>(window_rounds_ * trainer_.learners() * batch) / s;
      if (phase_ == Phase::Sizing) {
        phase_ = Phase::Window;
        // The first window says how many rounds make min_window_seconds: short windows measure
        // jitter. One that lasted long enough is the first of the three.
        if (s < opt_.min_window_seconds) {
          window_rounds_ = static_cast<int64_t>(
              std::min(100000.0, static_cast<double>(window_rounds_) * opt_.min_window_seconds / s) + 1);
          break;
        }
      }
      rates_.push_back(rate);
      if (rates_.size() < 3) break;
      std::sort(rates_.begin(), rates_.end());
      const double median = rates_[1];
      char buf[200];
      std::snprintf(buf, sizeof buf, "autotune: %d learner(s): %.0f images/s (%.1f MiB per learner; %.2f s)", k_,
                    median, static_cast<double>(trainer_.bytes_per_learner()) / 1048576.0,
                    training_clock() - count_start_);
      log_ << buf;
      std::string verdict;
      const bool more = search_.add(k_, median, &verdict);
      log_ << verdict << "\n";
      if (more) {
        start_count(k_ - 1);
      } else if (best() == limit_ && limit_ > 1) {
        // Say when the cap, not the memory, held a search that kept every learner built: a
        // larger --autotune-max-learners gives more images a second, if not always the target
        // sooner.
        std::string why = ", the most learners built";
        if (limit_ == autotune_limit_per_device(trainer_.options(), opt_))
          why += ": the cap, --autotune-max-learners " + std::to_string(opt_.max_learners) + " in all";
        end(why);
      } else {
        end("");
      }
      return true;
    }
  }
  rounds_ = 0;
  window_start_ = training_clock();
  return false;
}

void TrainingTuner::end(const std::string& why) {
  searching_ = false;
  searched_seconds_ = training_clock();
  if (trainer_.options().learners != best()) trainer_.set_active_learners(best());
  char buf[120];
  std::snprintf(buf, sizeof buf, "autotune: chose %d learner(s) per device after %.1f s of training", best(),
                searched_seconds_);
  log_ << buf << why << "\n";
}

void TrainingTuner::finish() {
  if (searching_) end(", when training ended");
}

void TrainingTuner::pause() {
  if (!searching_ || paused_) return;
  trainer_.synchronize();  // the rounds queued so far belong to the window
  banked_ = training_clock();
  paused_ = true;
}

void TrainingTuner::resume() {
  if (!paused_) return;
  resumed_ = clock_();
  paused_ = false;
}

}  // namespace cbt
