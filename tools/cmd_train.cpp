// `cbtrain MODEL.onnx`: import, train on the data set, evaluate, export.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <regex>

#include "graph/atomic_file.h"
#include "onnx_import/model_io.h"
#include "ops/cpu/threads.h"
#include "runtime/autotune.h"
#include "runtime/collective.h"
#include "runtime/fit.h"
#include "runtime/program.h"
#include "tools/commands.h"

namespace cbt::cli {

namespace {
LossKind parse_loss(const std::string& s) {
  if (s == "mse") return LossKind::MeanSquaredError;
  if (s == "bce") return LossKind::BinaryCrossEntropy;
  return LossKind::CrossEntropy;
}
}  // namespace

// "--gpus 0,1" or "all"; empty when not given.
std::vector<int> parse_gpus(const std::string& s) {
  std::vector<int> out;
  if (s.empty()) return out;
  if (s == "all") {
    int n = device_count(DeviceKind::CUDA);
    if (n == 0) throw UserError("--gpus all but no CUDA device is visible");
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      size_t used = 0;
      int v = std::stoi(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw UserError("--gpus takes a list like 0,1 or 'all', not '" + s + "'");
    }
    // One GPU twice would be two learners' devices that NCCL refuses to pair.
    if (std::count(out.begin(), out.end() - 1, out.back()))
      throw UserError("--gpus names GPU " + std::to_string(out.back()) + " twice in '" + s +
                      "'; more learners on one GPU are --learners");
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::set<std::string> match_frozen(const Graph& model, const std::vector<std::string>& patterns) {
  std::set<std::string> out;
  const std::vector<std::string> names = state_initializers(model);
  for (const auto& p : patterns) {
    std::regex re;
    try {
      re = std::regex(p);
    } catch (const std::regex_error& e) {
      throw UserError("--freeze '" + p + "' is not a valid regular expression: " + e.what());
    }
    size_t hits = 0;
    for (const auto& n : names)
      if (std::regex_search(n, re)) out.insert(n), ++hits;
    if (hits == 0) {
      std::string some;
      for (size_t i = 0; i < names.size() && i < 8; ++i) some += (i ? ", " : "") + names[i];
      throw UserError("--freeze '" + p + "' matches no parameter of the model (they are named like: " + some +
                      (names.size() > 8 ? ", ..." : "") + "; `cbtrain inspect MODEL` lists them)");
    }
  }
  return out;
}

namespace {
// A flag that takes a count from 1 to `max` or 'auto' (which the caller has handled).
int parse_count(const char* flag, const std::string& s, int max) {
  try {
    size_t used = 0;
    const int n = std::stoi(s, &used);
    if (used == s.size() && n >= 1 && n <= max) return n;
  } catch (const std::exception&) {
  }
  throw UserError(std::string(flag) + " must be a number from 1 to " + std::to_string(max) + " or 'auto', not '" + s +
                  "'");
}

// --threads: a count, "auto" (TrainerOptions::kAutoThreads) or nothing (one thread: on a
// machine that is busy with other work, OpenMP teams of several threads wait at every
// barrier for a time slice, and a small model then trains many times slower than on one).
int parse_threads(const std::string& s) {
  if (s.empty()) return 1;
  if (s == "auto") return TrainerOptions::kAutoThreads;
  return parse_count("--threads", s, 1024);
}
}  // namespace

TrainerOptions trainer_options(const TrainArgs& a, const Graph& model, Device device, std::ostream& log,
                               double* autotune_seconds, int processes,
                               std::optional<AutotuneOptions>* tune_while_training) {
  if (autotune_seconds) *autotune_seconds = 0;
  TrainerOptions to;
  to.batch_size = a.batch_size;
  to.seed = a.seed;
  to.device = device;
  // One learner without --algorithm trains plain SGD: nothing to average. A count the tuner
  // chooses is known only after it (below).
  auto algorithm_for = [&a](int learners) {
    return a.algorithm == "ssgd" || (a.algorithm.empty() && learners == 1) ? Algorithm::Ssgd : Algorithm::Sma;
  };
  const int fixed_learners = a.learners == "auto" ? 0 : parse_count("--learners", a.learners, 64);
  to.algorithm = algorithm_for(fixed_learners);
  to.alpha = a.alpha;
  to.sma_momentum = a.sma_momentum;
  if (a.alpha == 0 && to.algorithm == Algorithm::Sma)
    throw UserError(
        "--alpha 0 never moves SMA's central model, which evaluation and the trained model are; "
        "give a positive --alpha, leave it out (it then follows the count), or use --algorithm ssgd");
  to.optimizer.kind = a.optimizer == "adamw" ? OptimizerKind::AdamW : OptimizerKind::SGD;
  to.optimizer.lr = a.lr;
  to.optimizer.momentum = a.momentum;
  to.optimizer.weight_decay = a.weight_decay;
  to.graph.output = a.output_name;
  to.graph.loss = parse_loss(a.loss);
  to.graph.label_smoothing = a.label_smoothing;
  if (!(a.label_smoothing >= 0 && a.label_smoothing < 1)) throw UserError("--label-smoothing must be in [0, 1)");
  if (a.label_smoothing > 0 && to.graph.loss != LossKind::CrossEntropy)
    throw UserError("--label-smoothing applies to --loss cross-entropy only");
  to.graph.frozen = match_frozen(model, a.freeze);
  to.clip_grad_norm = a.clip_grad_norm;
  to.deterministic = a.deterministic;
  if (device.is_cpu() || !a.threads.empty()) to.cpu_threads = parse_threads(a.threads);
  to.cuda_graphs = a.cuda_graphs == "on";
  to.graph.fuse = a.fusion == "on";
  to.tf32 = a.precision == "tf32";
  to.graph.bf16_channels_last = a.precision == "bf16";
  to.conv_algos = a.cudnn_algos == "find"        ? ConvAlgos::Find
                  : a.cudnn_algos == "heuristic" ? ConvAlgos::Heuristic
                                                 : ConvAlgos::Engines;
  to.gpus = parse_gpus(a.gpus);
  if (!to.gpus.empty()) to.device = Device{DeviceKind::CUDA, to.gpus[0]};
  if (a.learners == "auto") {
    AutotuneOptions ao;
    ao.threshold = a.autotune_threshold;
    if (a.autotune_max_learners < 1)
      throw UserError("--autotune-max-learners must be at least 1, not " + std::to_string(a.autotune_max_learners));
    ao.max_learners = a.autotune_max_learners;
    // A given alpha holds the count to where SMA's central model stays stable (sma_stable_learners).
    const int stable = to.algorithm == Algorithm::Sma ? sma_stable_learners(a.alpha, a.sma_momentum) : ao.max_learners;
    if (stable < ao.max_learners) {
      log << "autotune: at most " << stable << " learner(s) in all with --alpha " << a.alpha
          << " (alpha x (learners + 1 + --sma-momentum) below 2 x (1 + --sma-momentum))\n";
      ao.max_learners = stable;
    }
    ao.min_window_seconds = a.autotune_window;
    ao.processes = processes;
    if (tune_while_training) {
      to.learners = autotune_limit_per_device(to, ao);  // fit() times 1 to this many
      *tune_while_training = ao;
    } else {
      to.learners = autotune_learners(model, to, ao, log, autotune_seconds);
    }
  } else {
    to.learners = fixed_learners;
  }
  to.algorithm = algorithm_for(to.learners);
  return to;
}

void report_untied(const ImportedModel& model, std::ostream& out) {
  if (model.untied.empty()) return;
  out << "cbtrain: " << model.untied.size() << " parameter tensor(s) of the model were shared by "
      << "several layers (the exporter stores equal initializers once, e.g. the BatchNorm "
      << "parameters of a freshly initialised network); each layer now trains its own copy, "
      << "and the trained model names them apart (first: " << model.untied.front() << ")\n";
}

void report_exporter_made(const ImportedModel& model, std::ostream& out) {
  if (model.folded_batch_norms > 0)
    out << "cbtrain: the exporter folded " << model.folded_batch_norms << " BatchNorm layer(s) into the convolutions "
        << "(an inference form: their running statistics are not in the file), so they do not train as BatchNorm; "
        << "export with torch.onnx.export(..., dynamo=True, optimize=False) to train them\n";
  if (model.exporter_made.empty()) return;
  out << "cbtrain: " << model.exporter_made.size() << " tensor(s) of the model are no PyTorch parameter: the "
      << "exporter's optimiser made them from parameters, buffers or constants (first: '" << model.exporter_made.front()
      << "'), and some parameters are gone (folded, merged or dropped); they train as parameters, which matches "
      << "PyTorch only where they are a parameter's transpose. Export with torch.onnx.export(..., dynamo=True, "
      << "optimize=False) to train the model's own parameters\n";
}

// --output is written when training ends: a path that can never be written fails now, not
// hours into the run. Its folder must exist (a mistyped path is not made into folders).
void check_output_flag(const std::string& output) {
  if (output.empty()) return;
  namespace fs = std::filesystem;
  const fs::path file(output);
  std::error_code ec;
  if (fs::is_directory(file, ec))
    throw UserError("--output " + output + " is a folder; give the file to write, e.g. " +
                    (file / "model.onnx").string());
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UserError("--output " + output + ": " + dir.string() +
                    (fs::exists(dir, ec) ? " is not a folder" : " does not exist"));
  ensure_writable_folder(dir.string(), "--output folder");
}

void load_conv_choices_flag(const TrainArgs& a, Device device, std::ostream& log) {
  if (a.conv_choices.empty()) return;
  if (device.is_cpu()) throw UserError("--conv-choices needs a CUDA device (--device cuda)");
  const std::filesystem::path file(a.conv_choices);
  ensure_writable_folder(file.has_parent_path() ? file.parent_path().string() : ".", "--conv-choices folder");
  std::string why;
  const size_t n = load_conv_choices(a.conv_choices, &why);
  if (!why.empty())
    log << "cbtrain: ignoring the convolution choices in " << a.conv_choices << ": " << why
        << "; they are searched again and the file rewritten\n";
  else if (n > 0)
    log << "cbtrain: " << n << " convolution choice(s) read from " << a.conv_choices << "\n";
}

void save_conv_choices_flag(const TrainArgs& a, std::ostream& log) {
  if (a.conv_choices.empty()) return;
  const size_t n = save_conv_choices(a.conv_choices);
  log << "cbtrain: " << n << " convolution choice(s) written to " << a.conv_choices << "\n";
}

namespace {
// --lr-schedule step and --milestones go together (alone, each was silently a constant rate);
// a milestone the run never reaches is told.
void check_schedule_flags(const TrainArgs& a, std::ostream& out) {
  const bool step = parse_lr_schedule(a.lr_schedule) == LrSchedule::Kind::Step;
  if (step && a.milestones.empty())
    throw UserError(
        "--lr-schedule step needs --milestones: the epochs at which the rate is multiplied by --lr-gamma "
        "(e.g. --milestones 30,60)");
  if (!step && !a.milestones.empty())
    throw UserError("--milestones applies to --lr-schedule step only, not " + a.lr_schedule);
  for (int64_t m : a.milestones)
    if (m >= a.epochs)
      out << "warning: --milestones " << m << " is not before the last epoch (--epochs " << a.epochs
          << "): the rate never changes there\n";
}
}  // namespace

int run_train(const TrainArgs& a) {
  // mpirun: this is one of several processes; rank 0 prints, evaluates for the log and writes.
  ProcessGroupOptions po;
  po.timeout_s = a.collective_timeout;
  std::shared_ptr<ProcessGroup> pg = init_process_group(po);
  std::ostream discard(nullptr);  // non-root ranks: progress is rank 0's to print
  std::ostream& out = pg->is_root() ? std::cout : discard;
  Device device = parse_device(a.device);
  const std::vector<int> gpus = parse_gpus(a.gpus);  // a malformed list fails before the model is read
  if (!gpus.empty()) {
    // Named as the user gave them (the backend would speak of --device cuda:0).
    const int visible = device_count(DeviceKind::CUDA);
    const int highest = *std::max_element(gpus.begin(), gpus.end());
    if (visible == 0)
      throw UserError("--gpus " + a.gpus + " but no CUDA device is usable on this machine" +
                      (built_with_cuda() ? "" : " (this cbtrain was built without CUDA)") + "; use --device cpu");
    if (highest >= visible)
      throw UserError("--gpus " + a.gpus + " names GPU " + std::to_string(highest) + " but only " +
                      std::to_string(visible) + " CUDA device(s) are visible (0 to " + std::to_string(visible - 1) +
                      ")");
  }
  if (!gpus.empty() && device.is_cpu()) device = Device{DeviceKind::CUDA, 0};
  // Several processes on one machine with a plain --device cuda: one GPU each, by local rank.
  if (pg->size() > 1 && a.device == "cuda" && a.gpus.empty()) {
    const int n = device_count(DeviceKind::CUDA);
    if (n > 0) device.index = pg->local_rank() % n;
  }
  CheckpointOptions ckpt;
  ckpt.dir = a.checkpoint_dir;
  ckpt.resume = a.resume || a.force_resume;
  ckpt.force_resume = a.force_resume;
  if (ckpt.dir.empty() && !a.checkpoint_every.empty()) throw UserError("--checkpoint-every needs --checkpoint-dir");
  if (ckpt.dir.empty() && ckpt.resume) throw UserError("--resume needs --checkpoint-dir");
  if (!ckpt.dir.empty()) parse_checkpoint_every(a.checkpoint_every.empty() ? "1e" : a.checkpoint_every, ckpt);
  if (pg->is_root()) check_output_flag(a.output);  // only rank 0 writes it
  check_schedule_flags(a, out);
  install_stop_handlers();  // from here on, SIGINT/SIGTERM stop at the next round boundary
  ImportedModel model = load_model(a.model);
  report_untied(model, out);
  report_exporter_made(model, out);
  check_supported(model.graph, device);  // before the data set is read: fail fast
  load_conv_choices_flag(a, device, out);
  TrainTestData data;
  {
    // The GPUs' contexts are made while the data set is read.
    DeviceWarmUp warm_up(device.is_cpu() ? std::vector<int>{} : gpus.empty() ? std::vector<int>{device.index} : gpus);
    data = load_data(data_options(a.data_dir, a.data, model.graph, a.seed));
  }
  // Before any learner is built for it (a batch of 10^8 ran out of memory building the first).
  check_round_fits(a.batch_size, 1, data.train.size(), "--batch-size");

  const ProgressStyle style = parse_progress_style(a.progress, isatty(STDOUT_FILENO) == 1);
  double autotune_seconds = 0;
  // --learners auto searches on the training rounds, unless the count must be known before
  // training: several processes agree on it, a checkpoint records it, and --threads auto divides
  // the cores by it.
  std::optional<AutotuneOptions> tune;
  const bool tune_while_training = a.learners == "auto" && a.autotune_when == "training" && pg->size() == 1 &&
                                   ckpt.dir.empty() && !(device.is_cpu() && a.threads == "auto");
  if (a.learners == "auto" && a.autotune_when == "training" && !tune_while_training)
    out << "autotune: searching before training ("
        << (pg->size() > 1      ? "several processes"
            : !ckpt.dir.empty() ? "checkpoints"
                                : "--threads auto")
        << " need the count from the start)\n";
  TrainerOptions to = trainer_options(a, model.graph, device, out, &autotune_seconds, pg->size(),
                                      tune_while_training ? &tune : nullptr);
  if (pg->size() > 1 && a.learners == "auto") {
    // Each rank tuned on its own device; all train with rank 0's choice.
    int learners = to.learners;
    pg->broadcast(&learners, sizeof learners, 0, "the auto-tuned learner count");
    to.learners = learners;
  }
  // Several processes hold several learners in all: model averaging unless asked otherwise.
  if (pg->size() > 1 && a.algorithm.empty()) to.algorithm = Algorithm::Sma;
  to.processes = pg;
  // Tuning while training: the trainer of the largest count (fewer when it does not fit); its
  // build is the search's cost outside the training clock.
  std::unique_ptr<Trainer> built =
      tune ? build_search_trainer(model.graph, to, out, &autotune_seconds) : std::make_unique<Trainer>(model.graph, to);
  Trainer& trainer = *built;
  const int threads = trainer.options().cpu_threads;
  if (device.is_cpu() && threads > 1 && trainer.learners() * threads > cpu::available_cores())
    out << "cbtrain: warning: " << trainer.learners() << " learner(s) x " << threads << " thread(s) on "
        << cpu::available_cores() << " core(s): threads will wait for each other; fewer make the steps faster\n";
  if (pg->size() > 1) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    std::cout << "cbtrain: rank " << pg->rank() << " of " << pg->size() << " (pid " << getpid() << " on " << host
              << ") trains learners " << trainer.first_learner() << "-"
              << trainer.first_learner() + trainer.learners() - 1 << " on " << device.str() << std::endl;
  }

  // The resolved configuration: printed, and saved next to the outputs so that
  // `cbtrain --config FILE` repeats the run (with --learners auto resolved to its choice; when
  // tuned while training, "auto" until training has chosen, then rewritten).
  std::vector<std::string> config_files;
  std::string cfg;
  auto resolved = [&](int learners) {
    return a.resolved_config({{"learners", "\"" + std::to_string(learners) + "\""}});
  };
  if (a.resolved_config && pg->is_root()) {
    cfg = tune ? a.resolved_config({}) : resolved(to.learners);
    if (style != ProgressStyle::Off) out << "configuration:\n" << cfg;
    if (!a.save_config.empty()) config_files.push_back(a.save_config);
    if (!a.tensorboard.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(a.tensorboard, ec);  // EventWriter reports failures
      config_files.push_back((std::filesystem::path(a.tensorboard) / "config.toml").string());
    }
    for (const auto& f : config_files) write_file_atomically(f, cfg);
  }

  out << "cbtrain: " << a.model << " on " << device.str() << ", " << trainer.num_parameters() << " parameters, "
      << (tune ? "up to " : "") << trainer.total_learners() << " learner(s)" << (tune ? " (tuned while training)" : "")
      << " x batch " << a.batch_size
      << (trainer.total_learners() > 1 ? (trainer.algorithm() == Algorithm::Sma ? " (sma)" : " (ssgd)") : "")
      << (pg->size() > 1 ? " in " + std::to_string(pg->size()) + " processes" : std::string())
      << (device.is_cpu() ? ", " + std::to_string(trainer.options().cpu_threads) + " thread(s) each" : std::string())
      << ", " << a.optimizer << " lr " << a.lr << ", " << data.train.size() << " training / " << data.test.size()
      << " test samples from " << a.data_dir << std::endl;
  if (!trainer.training_graph().frozen.empty()) {
    int64_t values = 0;
    for (const auto& n : trainer.training_graph().frozen) values += model.graph.initializers.at(n).numel();
    out << "frozen: " << trainer.training_graph().frozen.size() << " tensor(s), " << values << " values";
    for (const auto& n : trainer.training_graph().frozen) out << " " << n;
    out << std::endl;
  }

  FitOptions fo;
  fo.epochs = a.epochs;
  fo.max_steps = a.max_steps;
  fo.metrics_path = a.metrics;
  fo.autotune_seconds = autotune_seconds;
  fo.log_every = a.log_every;
  fo.progress = style;
  fo.tensorboard_dir = a.tensorboard;
  fo.seed = a.seed;
  fo.schedule.kind = parse_lr_schedule(a.lr_schedule);
  fo.schedule.base_lr = a.lr;
  fo.schedule.warmup_steps = a.warmup_steps;
  fo.schedule.gamma = a.lr_gamma;
  fo.milestone_epochs = a.milestones;  // fit() counts them in rounds of its learners
  fo.checkpoint = ckpt;
  fo.tune_learners = tune;
  FitResult r = fit(trainer, data, fo, out);
  if (tune && !cfg.empty() && !r.stopped_by_signal) {
    cfg = resolved(r.learners);
    for (const auto& f : config_files) write_file_atomically(f, cfg);
  }
  if (r.stopped_by_signal) {
    if (pg->is_root()) save_conv_choices_flag(a, out);  // the searches were done all the same
    return 128 + r.stopped_by_signal;                   // the shell's convention: 130, 143
  }

  char buf[256];
  std::snprintf(buf, sizeof buf, "final test accuracy %.2f%% after %lld steps, %.1f s of training",
                100 * r.final_eval.accuracy, static_cast<long long>(r.steps), r.train_seconds);
  out << buf << std::endl;
  if (!a.output.empty()) {
    auto weights = trainer.trained_initializers();  // every rank: BatchNorm statistics are reduced
    if (pg->is_root()) {
      save_model(model, weights, a.output);
      if (!cfg.empty()) {  // beside the model, once the model is there
        config_files.push_back(std::filesystem::path(a.output).replace_extension(".config.toml").string());
        write_file_atomically(config_files.back(), cfg);
      }
    }
  }
  if (pg->is_root()) save_conv_choices_flag(a, out);  // after the model: it must not wait on this file

  // The summary: results, time, and where every file went.
  out << "summary:\n";
  std::snprintf(buf, sizeof buf, "  test accuracy   %.2f%% (final), %.2f%% best at epoch %lld\n",
                100 * r.final_eval.accuracy, 100 * r.best_accuracy, static_cast<long long>(r.best_epoch));
  out << buf;
  std::snprintf(buf, sizeof buf, "  training        %s for %lld steps, %lld images, %.0f img/s\n",
                format_duration(r.train_seconds).c_str(), static_cast<long long>(r.steps),
                static_cast<long long>(r.images),
                r.train_seconds > 0 ? static_cast<double>(r.images) / r.train_seconds : 0.0);
  out << buf;
  if (tune) {
    std::snprintf(buf, sizeof buf,
                  "  learners        %d per device, chosen in the first %.1f s of training (and %.1f s of building)\n",
                  r.learners, r.search_seconds, autotune_seconds);
    out << buf;
  }
  if (!a.output.empty()) out << "  model           " << a.output << "\n";
  if (!a.metrics.empty()) out << "  metrics         " << a.metrics << "\n";
  if (!r.tensorboard_file.empty()) out << "  tensorboard     " << r.tensorboard_file << "\n";
  for (const auto& f : config_files) out << "  configuration   " << f << "\n";
  if (!r.checkpoint.empty()) out << "  checkpoint      " << r.checkpoint << "\n";
  if (!a.conv_choices.empty()) out << "  conv choices    " << a.conv_choices << "\n";
  if (!a.output.empty()) out << "wrote " << a.output << "\n";
  out << std::flush;
  return 0;
}

}  // namespace cbt::cli
