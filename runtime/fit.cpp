// fit(): the epoch loop with progress lines and the JSON-lines metrics file.
#include "runtime/fit.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>

namespace cbt {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

FitResult fit(Trainer& trainer, const TrainTestData& data, const FitOptions& opt, std::ostream& log) {
  FitResult res;
  const ValueType& in = trainer.input_type();
  const int64_t batch = in.shape.at(0);
  const int64_t per = shape_numel(in.shape) / batch;
  if (data.train.sample_numel() != per)
    throw UserError("the model input '" + trainer.training_graph().data_input + "' takes " +
                    shape_str(Shape(in.shape.begin() + 1, in.shape.end())) + " per sample (" +
                    std::to_string(per) + " values) but the data has " +
                    std::to_string(data.train.sample_numel()) + " values per sample");
  const int64_t k = trainer.learners();
  // Rounds per epoch: every learner gets its own batch, no sample twice within an epoch.
  const int64_t steps_per_epoch = data.train.size() / (batch * k);
  if (steps_per_epoch == 0)
    throw UserError("a round of " + std::to_string(k) + " learner(s) x batch " + std::to_string(batch) +
                    " exceeds the training set (" + std::to_string(data.train.size()) + " samples)");

  std::ofstream metrics;
  if (!opt.metrics_path.empty()) {
    metrics.open(opt.metrics_path, std::ios::trunc);
    if (!metrics) throw UserError("cannot write metrics file " + opt.metrics_path);
  }
  LrSchedule schedule = opt.schedule;
  if (schedule.total_steps <= 1)
    schedule.total_steps = opt.max_steps >= 0 ? std::min(opt.max_steps, opt.epochs * steps_per_epoch)
                                              : opt.epochs * steps_per_epoch;
  std::vector<Tensor> xs, ys;
  for (int64_t j = 0; j < k; ++j) {
    xs.emplace_back(DType::Float32, in.shape);
    ys.emplace_back(DType::Int64, Shape{batch});
  }
  const bool resident = trainer.make_resident(data.train);
  for (int64_t epoch = 1; epoch <= opt.epochs; ++epoch) {
    auto order = epoch_order(data.train.size(), opt.seed, epoch);
    if (resident) trainer.set_resident_order(order);
    auto t0 = Clock::now();
    double loss_sum = 0;
    int64_t loss_count = 0;
    for (int64_t s = 0; s < steps_per_epoch; ++s) {
      if (opt.max_steps >= 0 && res.steps >= opt.max_steps) break;
      if (!resident)
        for (int64_t j = 0; j < k; ++j)
          gather_batch(data.train, order.data() + (s * k + j) * batch, batch, xs[j], ys[j]);
      float lr = schedule.at(res.steps);
      if (lr != trainer.learning_rate()) {
        // A drop of a step schedule restarts every replica from the central model.
        bool drop = schedule.kind == LrSchedule::Kind::Step && lr < trainer.learning_rate();
        trainer.set_learning_rate(lr);
        if (drop && trainer.algorithm() == Algorithm::Sma) trainer.restart_from_central();
      }
      float loss = resident ? trainer.round_resident(s * k * batch) : trainer.round(xs, ys);
      ++res.steps;
      if (!std::isfinite(loss))
        throw TrainingDiverged("training diverged: the loss is " + std::to_string(loss) +
                               " at step " + std::to_string(trainer.rounds()) + " (epoch " +
                               std::to_string(epoch) + "); lower the learning rate");
      loss_sum += loss;
      ++loss_count;
      if (opt.log_every > 0 && (s + 1) % opt.log_every == 0) {
        double el = seconds_since(t0);
        char buf[160];
        std::snprintf(buf, sizeof buf, "epoch %lld step %lld/%lld loss %.4f %.0f img/s",
                      static_cast<long long>(epoch), static_cast<long long>(s + 1),
                      static_cast<long long>(steps_per_epoch), loss_sum / loss_count,
                      (s + 1) * batch * k / el);
        log << buf << std::endl;
      }
    }
    double epoch_s = seconds_since(t0);
    res.train_seconds += epoch_s;
    res.last_epoch_seconds = epoch_s;
    res.final_eval = trainer.evaluate(data.test);
    double train_loss = loss_count ? loss_sum / loss_count : NAN;
    double ips = loss_count ? static_cast<double>(loss_count * batch * k) / epoch_s : 0;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "epoch %lld: train loss %.4f, test loss %.4f, test accuracy %.2f%%, %.1f s, %.0f img/s",
                  static_cast<long long>(epoch), train_loss, res.final_eval.loss,
                  100 * res.final_eval.accuracy, epoch_s, ips);
    log << buf << std::endl;
    if (metrics) {
      std::snprintf(buf, sizeof buf,
                    "{\"epoch\": %lld, \"step\": %lld, \"train_loss\": %.6f, \"test_loss\": %.6f, "
                    "\"test_accuracy\": %.6f, \"images_per_sec\": %.1f, \"elapsed_s\": %.3f, "
                    "\"lr\": %g}",
                    static_cast<long long>(epoch), static_cast<long long>(trainer.rounds()),
                    train_loss, res.final_eval.loss, res.final_eval.accuracy, ips,
                    res.train_seconds, trainer.learning_rate());
      metrics << buf << "\n" << std::flush;
    }
    if (opt.max_steps >= 0 && res.steps >= opt.max_steps) break;
  }
  return res;
}

}  // namespace cbt
