// measure_throughput and the learner auto-tuner.
#include "runtime/autotune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <ostream>
#include <random>
#include <string>

#include "runtime/backend.h"

namespace cbt {

Throughput measure_throughput(Trainer& trainer, int warmup_rounds, int measure_rounds, double min_window_seconds) {
  const ValueType& in = trainer.input_type();
  const int64_t b = in.shape.at(0);
  std::vector<Tensor> xs, ys;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (int j = 0; j < trainer.learners(); ++j) {
    xs.emplace_back(DType::Float32, in.shape);
    ys.emplace_back(DType::Int64, Shape{b});
    for (int64_t i = 0; i < xs.back().numel(); ++i) xs.back().ptr<float>()[i] = normal(rng);
    for (int64_t i = 0; i < b; ++i) ys.back().ptr<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
  }
  trainer.round(xs, ys, false);  // uploads the batches once; then they stay on the devices
  xs.clear();
  ys.clear();
  for (int r = 0; r < warmup_rounds; ++r) trainer.round(xs, ys, false);
  trainer.synchronize();
  using Clock = std::chrono::steady_clock;
  if (min_window_seconds > 0) {
    // A first window says how long a round takes; short windows measure the host's jitter.
    auto t0 = Clock::now();
    for (int r = 0; r < measure_rounds; ++r) trainer.round(xs, ys, false);
    trainer.synchronize();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s < min_window_seconds)
      measure_rounds =
          static_cast<int>(std::min(100000.0, measure_rounds * min_window_seconds / std::max(s, 1e-6)) + 1);
  }
  std::vector<double> rates;
  double enqueue = 0, total = 0;
  const bool on_cuda = trainer.options().device.kind == DeviceKind::CUDA;
  if (on_cuda) profiled_span(true);  // a profiler told to wait records the timed windows only
  for (int w = 0; w < 3; ++w) {
    auto t0 = Clock::now();
    for (int r = 0; r < measure_rounds; ++r) trainer.round(xs, ys, false);
    auto t1 = Clock::now();
    trainer.synchronize();
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    enqueue += std::chrono::duration<double>(t1 - t0).count();
    total += s;
    rates.push_back(static_cast<double>(measure_rounds) * trainer.learners() * b / s);
  }
  if (on_cuda) profiled_span(false);
  std::sort(rates.begin(), rates.end());
  return Throughput{rates[1], trainer.bytes_per_learner(), enqueue / total};
}

namespace {
// A share as the verdicts print it: "+31%", "-5%", rounded half away from zero.
std::string signed_percent(double fraction) {
  const double p = 100 * fraction;
  char buf[24];
  std::snprintf(buf, sizeof buf, "%s%d%%", p >= 0 ? "+" : "", static_cast<int>(p + (p >= 0 ? 0.5 : -0.5)));
  return buf;
}
}  // namespace

bool LearnerSearch::add(int k, double rate, std::string* verdict) {
  return direction_ == Direction::Up ? add_up(k, rate, verdict) : add_down(k, rate, verdict);
}

bool LearnerSearch::add_up(int k, double rate, std::string* verdict) {
  char buf[160];
  if (k == 1 || best_k_ == 0) {
    best_k_ = k, best_ = rate, misses_ = 0;
    if (verdict) *verdict = "";
    return true;
  }
  // A learner is worth adding while it brings more than `threshold` of the throughput one
  // learner averaged so far: relative gains shrink as 1/k even when every learner still pays
  // for itself. After a count that fell short, the next must gain that for each learner added
  // since the best.
  const double share = best_ / best_k_;
  const double gain = (rate - best_) / share;  // in learners' shares
  const int added = k - best_k_;
  if (gain > threshold_ * added) {
    std::snprintf(buf, sizeof buf, ", %s of a learner's share%s: keep", signed_percent(gain / added).c_str(),
                  added > 1 ? " per learner over the best" : "");
    best_k_ = k, best_ = rate, misses_ = 0;
    if (verdict) *verdict = buf;
    return true;
  }
  const bool again = ++misses_ <= patience_;
  std::snprintf(buf, sizeof buf, ", %s of a learner's share (threshold %d%%): %s", signed_percent(gain / added).c_str(),
                static_cast<int>(100 * threshold_ + 0.5), again ? "one more count" : "stop");
  if (verdict) *verdict = buf;
  return again;
}

bool LearnerSearch::add_down(int k, double rate, std::string* verdict) {
  char buf[200];
  if (best_k_ == 0) {
    best_k_ = k, best_ = rate, misses_ = 0;
    if (verdict) *verdict = "";
    return k > 1;
  }
  // What the best count's extra learners bring, in shares of this count's images/s per learner.
  const double share = rate / k;
  const int extra = best_k_ - k;
  const double gain = (best_ - rate) / share;
  if (gain <= threshold_ * extra) {
    std::snprintf(buf, sizeof buf, ", %d more %s %s of a learner's share each (threshold %d%%): drop to %d", extra,
                  extra == 1 ? "brings" : "bring", signed_percent(gain / extra).c_str(),
                  static_cast<int>(100 * threshold_ + 0.5), k);
    best_k_ = k, best_ = rate, misses_ = 0;
    if (verdict) *verdict = buf;
    return k > 1;
  }
  const bool again = ++misses_ <= patience_ && k > 1;
  std::snprintf(buf, sizeof buf, ", %d more %s %s of a learner's share each: keep %d, %s", extra,
                extra == 1 ? "brings" : "bring", signed_percent(gain / extra).c_str(), best_k_,
                again ? "one more count" : "stop");
  if (verdict) *verdict = buf;
  return again;
}

int autotune_limit_per_device(const TrainerOptions& base, const AutotuneOptions& opt) {
  const int processes = std::max({1, opt.processes, base.processes ? base.processes->size() : 1});
  const int devices = std::max<int>(1, static_cast<int>(base.gpus.size())) * processes;
  return std::max(1, opt.max_learners / devices);
}

std::unique_ptr<Trainer> build_search_trainer(const Graph& model, TrainerOptions options, std::ostream& log,
                                              double* seconds) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::unique_ptr<Trainer> trainer;
  while (!trainer) {
    options.conv_timing_learners = options.learners;  // one convolution search for every count
    try {
      trainer = std::make_unique<Trainer>(model, options);
    } catch (const std::bad_alloc&) {
      if (options.learners == 1) throw;
      log << "autotune: " << options.learners << " learner(s) do not fit in memory; at most " << options.learners / 2
          << "\n";
      options.learners /= 2;
    }
  }
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  if (seconds) *seconds = took;
  char buf[120];
  std::snprintf(buf, sizeof buf, "autotune: built %d learner(s) to time 1 to %d of them (%.2f s)\n", options.learners,
                options.learners, took);
  log << buf;
  return trainer;
}

int autotune_learners(const Graph& model, const TrainerOptions& base, const AutotuneOptions& opt, std::ostream& log,
                      double* seconds) {
  int limit = autotune_limit_per_device(base, opt);
  if (limit < opt.max_learners)
    log << "autotune: at most " << limit << " learner(s) per device (" << opt.max_learners
        << " in all, --autotune-max-learners)\n";
  LearnerSearch search(opt.threshold, opt.patience);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto options_for = [&](int k) {
    TrainerOptions to = base;
    to.processes = nullptr;  // each process searches alone (see AutotuneOptions::processes)
    to.learners = k;
    to.conv_timing_learners = limit;  // one convolution search for every count (see TrainerOptions)
    if (k > 1 && base.algorithm == Algorithm::Ssgd) to.algorithm = Algorithm::Sma;
    return to;
  };
  // One trainer of `limit` learners serves every count (Trainer::set_active_learners): a trainer
  // builds and captures each of its learners, and a build per count cost more than the timing
  // (ResNet-20 on a GPU: 0.4-1.5 s a count). CPU learners with --threads auto take their threads
  // by the count, so then each count builds its own.
  std::unique_ptr<Trainer> shared;
  if (!(base.device.is_cpu() && base.cpu_threads == TrainerOptions::kAutoThreads)) {
    shared = build_search_trainer(model, options_for(limit), log);
    limit = shared->options().learners;
  }
  for (int k = 1; k <= limit; ++k) {
    const auto trial = Clock::now();
    Throughput tp;
    size_t free_bytes = SIZE_MAX;
    try {
      if (shared) {
        shared->set_active_learners(k);
        tp = measure_throughput(*shared, opt.warmup_rounds, opt.measure_rounds, opt.min_window_seconds);
      } else {
        Trainer t(model, options_for(k));
        tp = measure_throughput(t, opt.warmup_rounds, opt.measure_rounds, opt.min_window_seconds);
        free_bytes = make_backend(base.device)->free_memory();
      }
    } catch (const std::bad_alloc&) {
      log << "autotune: " << k << " learner(s) do not fit in memory; stop\n";
      break;
    }
    char buf[200];
    std::snprintf(buf, sizeof buf, "autotune: %d learner(s): %.0f images/s (%.1f MiB per learner; %.2f s)", k,
                  tp.images_per_sec, tp.bytes_per_learner / 1048576.0,
                  std::chrono::duration<double>(Clock::now() - trial).count());
    log << buf;
    std::string verdict;
    const bool more = search.add(k, tp.images_per_sec, &verdict);
    if (free_bytes != SIZE_MAX && tp.bytes_per_learner * 2 > free_bytes) {
      log << verdict << "; stop: another learner would not fit in the free memory\n";
      break;
    }
    log << verdict << "\n";
    if (!more) break;
  }
  shared.reset();  // its memory goes back before the chosen count's trainer is built
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  if (seconds) *seconds = took;
  char done[120];
  std::snprintf(done, sizeof done, "autotune: chose %d learner(s) per device in %.1f s\n", search.best_learners(),
                took);
  log << done;
  return search.best_learners();
}

}  // namespace cbt
