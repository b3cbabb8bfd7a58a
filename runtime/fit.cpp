// fit(): the epoch loop with its progress display, the JSON-lines metrics file, TensorBoard
// scalars, checkpoints and resume, and stopping on SIGINT/SIGTERM.
#include "runtime/fit.h"

#include <signal.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include "graph/atomic_file.h"
#include "ops/start_costs.h"
#include "runtime/augment.h"
#include "runtime/checkpoint_ranks.h"
#include "runtime/training_tuner.h"
#include "tensorboard/event_file.h"

namespace cbt {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

volatile std::sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) { g_stop_signal = sig; }

// Every loss takes class indices (cross-entropy directly, mse and bce as one-hot rows): a label
// outside the model's classes stopped the run when its batch came up, epochs in, or went
// unnoticed in the test set; every label is checked before training.
void check_labels_fit_the_model(const Trainer& trainer, const TrainTestData& data) {
  const TrainingGraph& tg = trainer.training_graph();
  auto it = tg.types.find(tg.prediction);
  if (it == tg.types.end() || it->second.shape.size() != 2) return;
  const int64_t classes = it->second.shape[1];
  for (const auto& [set, d] : {std::pair<const char*, const Dataset*>{"training", &data.train}, {"test", &data.test}}) {
    if (!d->labels.defined() || d->labels.dtype() != DType::Int64) continue;
    const int64_t* y = d->labels.ptr<int64_t>();
    for (int64_t i = 0; i < d->size(); ++i)
      if (y[i] < 0 || y[i] >= classes)
        throw UserError("label " + std::to_string(y[i]) + " of " + set + " sample " + std::to_string(i) +
                        " is not one of the model's " + std::to_string(classes) + " classes (output '" + tg.prediction +
                        "' gives " + std::to_string(classes) + " scores); labels must be 0 to " +
                        std::to_string(classes - 1));
  }
}
}  // namespace

void install_stop_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // SA_RESETHAND: a second signal is not caught and ends the process at once. SA_RESTART:
  // reads and writes (data loading, checkpoint writing) are not cut short by the first.
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void check_round_fits(int64_t batch, int64_t learners, int64_t samples, const std::string& batch_name) {
  // Divided, not multiplied: learners x batch may overflow.
  if (batch <= samples && learners <= samples / batch) return;
  throw UserError(batch_name + " " + std::to_string(batch) +
                  (learners == 1 ? "" : " x " + std::to_string(learners) + " learners") +
                  " exceeds the training set (" + std::to_string(samples) + " samples)");
}

FitResult fit(Trainer& trainer, const TrainTestData& data, const FitOptions& opt, std::ostream& log) {
  FitResult res;
  const ValueType& in = trainer.input_type();
  const int64_t batch = in.shape.at(0);
  const int64_t per = shape_numel(in.shape) / batch;
  if (data.train.sample_numel() != per)
    throw UserError("the model input '" + trainer.training_graph().data_input + "' takes " +
                    shape_str(Shape(in.shape.begin() + 1, in.shape.end())) + " per sample (" + std::to_string(per) +
                    " values) but the data has " + std::to_string(data.train.sample_numel()) + " values per sample");
  check_labels_fit_the_model(trainer, data);
  // Several processes (mpirun): rank r's learners are learners first..first+k-1 of k_all; each
  // rank takes their batches of the same shuffled epoch, and only rank 0 writes files.
  ProcessGroup& pg = trainer.processes();
  const int64_t samples = data.train.size();
  // The largest round: every built learner (the tuner's largest count) or the learners given.
  const int64_t widest = opt.tune_learners ? trainer.built_learners() : trainer.total_learners();
  check_round_fits(batch, widest, samples, "batch");
  std::unique_ptr<TrainingTuner> tuner;
  if (opt.tune_learners) {
    if (pg.size() > 1 || !opt.checkpoint.dir.empty())
      throw UserError("tuning the learners while training needs one process and no checkpoints");
    tuner = std::make_unique<TrainingTuner>(trainer, *opt.tune_learners, log);
  }
  const int64_t first = trainer.first_learner();
  // What depends on the count of learners (the tuner changes it): rounds per epoch (every
  // learner gets its own batch, no sample twice within an epoch), the schedule's length and
  // milestones in rounds, and a batch buffer per learner.
  int64_t k = 0, k_all = 0, round_samples = 0, steps_per_epoch = 0;
  LrSchedule schedule = opt.schedule;
  std::vector<Tensor> xs, ys;
  auto count_changed = [&] {
    k = trainer.learners(), k_all = trainer.total_learners();
    round_samples = batch * k_all;
    steps_per_epoch = samples / round_samples;
    if (opt.schedule.total_steps <= 1)
      schedule.total_steps =
          opt.max_steps >= 0 ? std::min(opt.max_steps, opt.epochs * steps_per_epoch) : opt.epochs * steps_per_epoch;
    if (!opt.milestone_epochs.empty()) {
      schedule.milestones.clear();
      for (int64_t e : opt.milestone_epochs) schedule.milestones.push_back(e * steps_per_epoch);
    }
    for (size_t j = xs.size(); j < static_cast<size_t>(k); ++j) {
      xs.emplace_back(DType::Float32, in.shape);
      ys.emplace_back(DType::Int64, Shape{batch});
    }
    xs.resize(static_cast<size_t>(k));
    ys.resize(static_cast<size_t>(k));
  };
  count_changed();

  // Checkpoints: what this run is, to compare with a checkpoint's own record on resume.
  const CheckpointOptions& co = opt.checkpoint;
  const bool checkpoints = !co.dir.empty();
  if (co.resume && !checkpoints) throw UserError("--resume needs --checkpoint-dir");
  CheckpointMeta now;
  if (checkpoints) {
    ensure_writable_folder(co.dir, "checkpoint folder");
    now.fingerprint = model_fingerprint(trainer.model());
    now.config = checkpoint_config(trainer.options(), schedule, opt.seed, data.train.size());
    if (pg.size() > 1) now.config += "processes=" + std::to_string(pg.size()) + "\n";
  }
  int64_t start_epoch = 1, start_round = 0, last_saved = -1;
  if (checkpoints && !co.resume && pg.is_root()) {
    // A fresh run's early rounds would rank below an old run's files and be pruned first.
    auto old = list_checkpoints(co.dir);
    if (!old.empty())
      throw UserError(co.dir + " already holds checkpoints (newest: " + old.front() +
                      "); pass --resume to continue that run, or choose an empty folder");
  }
  if (co.resume) {
    auto loaded = load_latest_checkpoint_for_rank(pg, co.dir, static_cast<int>(k));
    if (!loaded) {
      log << "no checkpoint in " << co.dir << "; training from the start" << std::endl;
    } else {
      for (const auto& why : loaded->skipped) log << "warning: skipped " << why << std::endl;
      const CheckpointMeta& m = loaded->checkpoint.meta;
      check_resumable(m, now, co.force_resume, loaded->path, log);
      if (m.round_in_epoch > steps_per_epoch)
        throw UserError("checkpoint " + loaded->path + " is at round " + std::to_string(m.round_in_epoch) +
                        " of an epoch of " + std::to_string(steps_per_epoch) + " rounds");
      trainer.restore(loaded->checkpoint.state);
      start_epoch = m.epoch;
      start_round = m.round_in_epoch;
      res.steps = last_saved = m.round;
      res.checkpoint = loaded->path;
      log << "resumed from " << loaded->path << " at round " << m.round << " (epoch " << m.epoch << ", round "
          << m.round_in_epoch << " of " << steps_per_epoch << ")" << std::endl;
    }
  }
  // What to change when training diverges: the rate, and a given SMA alpha (within
  // sma_stable_learners' bound, a large one still adds to what the rate does).
  auto advice = [&] {
    std::string a = "lower the learning rate";
    const TrainerOptions& to = trainer.options();
    if (to.algorithm == Algorithm::Sma && trainer.alpha_given() && trainer.total_learners() > 1)
      a += detail::concat(", or --alpha (", to.alpha, " with ", trainer.total_learners(),
                          " learners; left out, it follows the count)");
    return a;
  };
  // Writes a checkpoint whose next round is `next` of `epoch`; a diverged state is never
  // written, so the last good checkpoint stays the newest.
  auto save = [&](int64_t epoch, int64_t next) {
    if (!checkpoints || res.steps == last_saved) return;
    Checkpoint c;
    c.state = gather_trainer_state(pg, trainer.state(), static_cast<int>(k));
    last_saved = res.steps;
    if (!pg.is_root()) return;
    const std::string bad = first_non_finite(c.state);
    if (!bad.empty())
      throw TrainingDiverged(
          "training diverged: '" + bad + "' holds non-finite values at round " + std::to_string(res.steps) +
          " (epoch " + std::to_string(epoch) + "); " +
          (res.checkpoint.empty() ? "no checkpoint was written" : "the last good checkpoint is " + res.checkpoint) +
          "; " + advice());
    c.meta = now;
    c.meta.epoch = epoch;
    c.meta.round_in_epoch = next;
    c.meta.round = res.steps;
    res.checkpoint = write_checkpoint(co.dir, c);
  };
  auto check_weights = [&](int64_t epoch) {
    for (const auto& [name, t] : trainer.central_parameters())
      for (int64_t i = 0, n = t.numel(); i < n; ++i)
        if (!std::isfinite(t.ptr<float>()[i]))
          throw TrainingDiverged("training diverged: the weights '" + name + "' are not finite at round " +
                                 std::to_string(res.steps) + " (epoch " + std::to_string(epoch) + "); " + advice());
  };

  std::ofstream metrics;
  if (!opt.metrics_path.empty() && pg.is_root()) {
    // A resumed run adds to the epochs already recorded.
    metrics.open(opt.metrics_path, last_saved >= 0 ? std::ios::app : std::ios::trunc);
    if (!metrics) throw UserError("cannot write metrics file " + opt.metrics_path);
  }
  std::unique_ptr<tensorboard::EventWriter> tb;
  if (!opt.tensorboard_dir.empty() && pg.is_root()) {
    tb = std::make_unique<tensorboard::EventWriter>(opt.tensorboard_dir);
    res.tensorboard_file = tb->path();
  }
  const bool sma = trainer.algorithm() == Algorithm::Sma;
  Progress progress(log, ProgressOptions{opt.progress, opt.log_every});
  const bool resident = trainer.make_resident(data.train);
  int agreed_stop = 0;
  const int64_t loss_every = opt.loss_every > 0 ? opt.loss_every : (trainer.options().device.is_cpu() ? 1 : 10);
  for (int64_t epoch = start_epoch; epoch <= opt.epochs; ++epoch) {
    if (tuner) tuner->resume();
    auto order = epoch_order(data.train.size(), opt.seed, epoch);
    auto augment = epoch_augmentation(data.train, opt.seed, epoch);  // empty without --augment
    if (resident) trainer.set_resident_order(order, augment);
    auto t0 = Clock::now();
    double loss_sum = 0;
    int64_t loss_count = 0, epoch_rounds = 0;
    int64_t s = epoch == start_epoch ? start_round : 0;
    int64_t pos = s * round_samples;  // the epoch order's next sample
    int64_t epoch_images = 0;
    progress.begin_epoch(epoch, opt.epochs, steps_per_epoch, s,
                         opt.max_steps >= 0 ? s + std::max<int64_t>(0, opt.max_steps - res.steps) : -1);
    double interval_loss = 0;  // TensorBoard: the mean loss of each log interval
    int64_t interval_count = 0;
    for (; pos + round_samples <= samples; ++s) {
      // Several processes stop at the round they agreed on (see below), one at once.
      if (pg.size() > 1 ? agreed_stop : g_stop_signal) {
        res.stopped_by_signal = pg.size() > 1 ? agreed_stop : g_stop_signal;
        res.learners = trainer.options().learners;
        progress.end_epoch();
        save(epoch, s);
        log << "interrupted at round " << res.steps << "; "
            << (checkpoints ? "checkpoint written to " + res.checkpoint
                            : std::string("no --checkpoint-dir, nothing saved"))
            << std::endl;
        return res;
      }
      if (opt.max_steps >= 0 && res.steps >= opt.max_steps) break;
      if (!resident)
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = pos + (first + j) * batch;  // this learner's place in the epoch order
          gather_batch(data.train, order.data() + at, batch, xs[j], ys[j],
                       augment.empty() ? nullptr : augment.data() + 3 * at);
        }
      // Tuning: the rounds the images so far make at the current count (res.steps otherwise).
      float lr = schedule.at(tuner ? res.images / round_samples : res.steps);
      if (lr != trainer.learning_rate()) {
        // A drop of a step schedule restarts every replica from the central model.
        bool drop = schedule.kind == LrSchedule::Kind::Step && lr < trainer.learning_rate();
        trainer.set_learning_rate(lr);
        if (drop && trainer.algorithm() == Algorithm::Sma) trainer.restart_from_central();
      }
      // Reading the loss waits for the device: on GPUs it is read every loss_every rounds
      // (and at the end of an epoch) so that rounds queue up behind each other.
      const bool last = pos + 2 * round_samples > samples;  // of the epoch
      const bool read = (s + 1) % loss_every == 0 || last;
      float loss = resident ? trainer.round_resident(pos + first * batch, read) : trainer.round(xs, ys, read);
      if (read && pg.size() > 1) {
        // The mean loss over all learners, and whether a rank was asked to stop (by SIGINT or
        // SIGTERM): every rank then stops before the same round.
        double v[3] = {static_cast<double>(loss) * static_cast<double>(k), g_stop_signal == SIGINT ? 1.0 : 0.0,
                       g_stop_signal == SIGTERM ? 1.0 : 0.0};
        pg.all_reduce_sum(v, 3, "the loss and stop requests");
        loss = static_cast<float>(v[0] / static_cast<double>(k_all));
        agreed_stop = v[2] > 0 ? SIGTERM : v[1] > 0 ? SIGINT : 0;
      }
      ++res.steps;
      ++epoch_rounds;
      res.images += round_samples;  // all processes' images
      epoch_images += round_samples;
      pos += round_samples;
      if (tuner && tuner->after_round()) {
        count_changed();
        progress.set_rounds(s + 1 + (samples - pos) / round_samples);
      }
      if (!read) {
        if (co.every_rounds > 0 && res.steps % co.every_rounds == 0) save(epoch, s + 1);
        continue;
      }
      if (!std::isfinite(loss))
        throw TrainingDiverged("training diverged: the loss is " + std::to_string(loss) + " at step " +
                               std::to_string(trainer.rounds()) + " (epoch " + std::to_string(epoch) + "); " +
                               advice());
      loss_sum += loss;
      ++loss_count;
      interval_loss += loss;
      ++interval_count;
      if (co.every_rounds > 0 && res.steps % co.every_rounds == 0) save(epoch, s + 1);
      const double el = seconds_since(t0);
      const double images = static_cast<double>(epoch_images);
      progress.update(s + 1, loss_sum / static_cast<double>(loss_count), images, el);
      if (tb && opt.log_every > 0 && (s + 1) % opt.log_every == 0) {
        std::vector<std::pair<std::string, double>> v = {
            {"train/loss", interval_loss / static_cast<double>(interval_count)},
            {"train/learning_rate", trainer.learning_rate()},
            {"train/images_per_sec", el > 0 ? images / el : 0}};
        // The spread of the replicas around z costs a download of every replica: only here.
        if (sma) v.emplace_back("sma/replica_spread", trainer.replica_spread());
        tb->scalars(res.steps, v);
        interval_loss = 0, interval_count = 0;
      }
    }
    progress.end_epoch();
    if (tuner) tuner->pause();  // evaluation is not training
    check_weights(epoch);
    double epoch_s = seconds_since(t0);
    res.train_seconds += epoch_s;
    res.last_epoch_seconds = epoch_s;
    // Where the first epoch's set-up went, taken before the evaluation sets up its own.
    const std::string start = epoch == start_epoch && log_start_costs() ? start_costs() : "";
    res.final_eval = trainer.evaluate(data.test);
    double train_loss = loss_count ? loss_sum / loss_count : NAN;
    double ips = epoch_rounds ? static_cast<double>(epoch_images) / epoch_s : 0;
    char buf[320];
    std::snprintf(
        buf, sizeof buf, "epoch %lld: train loss %.4f, test loss %.4f, test accuracy %.2f%%, %.1f s, %.0f img/s",
        static_cast<long long>(epoch), train_loss, res.final_eval.loss, 100 * res.final_eval.accuracy, epoch_s, ips);
    log << buf << std::endl;
    if (!start.empty()) log << "start: " << start << std::endl;
    if (res.final_eval.accuracy > res.best_accuracy || res.best_epoch == 0)
      res.best_accuracy = res.final_eval.accuracy, res.best_epoch = epoch;
    if (tb) {
      std::vector<std::pair<std::string, double>> v = {{"test/loss", res.final_eval.loss},
                                                       {"test/accuracy", res.final_eval.accuracy},
                                                       {"epoch/train_loss", train_loss},
                                                       {"epoch/images_per_sec", ips},
                                                       {"epoch/learning_rate", trainer.learning_rate()}};
      if (sma) v.emplace_back("sma/replica_spread", trainer.replica_spread());
      tb->scalars(res.steps, v);
      tb->flush();
    }
    if (metrics) {
      std::snprintf(buf, sizeof buf,
                    "{\"epoch\": %lld, \"step\": %lld, \"train_loss\": %.6f, \"test_loss\": %.6f, "
                    "\"test_accuracy\": %.6f, \"images_per_sec\": %.1f, \"elapsed_s\": %.3f, "
                    "\"lr\": %g, \"autotune_s\": %.3f, \"learners\": %lld}",
                    static_cast<long long>(epoch), static_cast<long long>(trainer.rounds()), train_loss,
                    res.final_eval.loss, res.final_eval.accuracy, ips, res.train_seconds, trainer.learning_rate(),
                    opt.autotune_seconds, static_cast<long long>(k_all));
      metrics << buf << "\n" << std::flush;
    }
    if (co.every_epochs > 0 && epoch % co.every_epochs == 0) s == steps_per_epoch ? save(epoch + 1, 0) : save(epoch, s);
    if (opt.max_steps >= 0 && res.steps >= opt.max_steps) break;
  }
  if (tuner) {
    tuner->finish();
    res.search_seconds = tuner->seconds();
  }
  res.learners = trainer.options().learners;
  return res;
}

}  // namespace cbt
