// measure_throughput and the learner auto-tuner.
#include "runtime/autotune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <random>

namespace cbt {

Throughput measure_throughput(Trainer& trainer, int warmup_rounds, int measure_rounds) {
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
  std::vector<double> rates;
  double enqueue = 0, total = 0;
  using Clock = std::chrono::steady_clock;
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
  std::sort(rates.begin(), rates.end());
  return Throughput{rates[1], trainer.bytes_per_learner(), enqueue / total};
}

int autotune_learners(const Graph& model, const TrainerOptions& base, const AutotuneOptions& opt,
                      std::ostream& log) {
  int best_k = 1;
  double best = 0;
  for (int k = 1; k <= opt.max_learners; ++k) {
    TrainerOptions to = base;
    to.learners = k;
    if (k > 1 && base.algorithm == Algorithm::Ssgd) to.algorithm = Algorithm::Sma;
    double rate = 0;
    try {
      Trainer t(model, to);
      Throughput tp = measure_throughput(t, opt.warmup_rounds, opt.measure_rounds);
      rate = tp.images_per_sec;
      auto backend = make_backend(base.device);
      size_t free_bytes = backend->free_memory();
      char buf[200];
      std::snprintf(buf, sizeof buf, "autotune: %d learner(s): %.0f images/s (%.1f MiB per learner)", k,
                    rate, tp.bytes_per_learner / 1048576.0);
      log << buf;
      if (free_bytes != SIZE_MAX && tp.bytes_per_learner * 2 > free_bytes) {
        log << "; stop: another learner would not fit in the free memory\n";
        if (rate > best) best_k = k;
        break;
      }
    } catch (const std::bad_alloc&) {
      log << "autotune: " << k << " learner(s) do not fit in memory; stop\n";
      break;
    }
    // A learner is worth adding while it brings more than `threshold` of the throughput
    // one learner averaged so far: relative gains shrink as 1/k even when every learner
    // still pays for itself.
    const double share = best / (k - 1 > 0 ? k - 1 : 1);
    if (k == 1 || rate - best > opt.threshold * share) {
      if (k > 1) log << ", +" << static_cast<int>(100 * (rate - best) / share + 0.5) << "% of a learner's share: keep";
      log << "\n";
      best = rate;
      best_k = k;
    } else {
      log << ", " << (rate >= best ? "+" : "") << static_cast<int>(100 * (rate - best) / share + 0.5)
          << "% of a learner's share (threshold " << static_cast<int>(100 * opt.threshold + 0.5)
          << "%): stop\n";
      break;
    }
  }
  log << "autotune: chose " << best_k << " learner(s) per device\n";
  return best_k;
}

}  // namespace cbt
