// The cbtrain sub-commands; main.cpp parses flags into these option structs.
#pragma once
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_import/model_io.h"
#include "runtime/autotune.h"
#include "runtime/trainer.h"
#include "tools/data_flags.h"

namespace cbt::cli {

struct TrainArgs {
  std::string model;
  std::string data_dir;
  DataArgs data;  // --data-format, --normalize, --augment, --test-split
  int64_t epochs = 2;
  int64_t batch_size = 32;
  int64_t max_steps = -1;
  float lr = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 5e-4f;
  std::string optimizer = "sgd";
  std::string lr_schedule = "constant";
  int64_t warmup_steps = 0;
  std::vector<int64_t> milestones;  // in epochs, for --lr-schedule step
  float lr_gamma = 0.1f;
  std::string loss = "cross-entropy";
  std::string output_name;
  uint64_t seed = 42;
  std::string device = "cpu";
  std::string learners = "1";  // a number or "auto"
  std::string cuda_graphs = "on";
  std::string fusion =
      "on";  // graph/fusion.h: Relu folded into BatchNorm, Gemm and Conv; the loss gradient into the loss
  std::string precision = "fp32";
  std::string gpus;  // "0,1", "all" or "" (one device: --device)
  // The tuner's own defaults (AutotuneOptions), so that the flags cannot drift from them.
  double autotune_threshold = AutotuneOptions{}.threshold;
  int autotune_max_learners = AutotuneOptions{}.max_learners;     // in all: every GPU of every process
  double autotune_window = AutotuneOptions{}.min_window_seconds;  // seconds of each timed window, at least
  std::string autotune_when = "training";  // "training": searched on the training rounds; "before"
  std::string algorithm;                   // "" = sma with several learners, plain SGD with one
  float alpha = -1.0f;
  float sma_momentum = 0.9f;
  std::string output;
  std::string metrics;
  int64_t log_every = 200;
  std::string checkpoint_dir;
  std::string checkpoint_every;  // "N" rounds or "Ne" epochs; "" = every epoch
  bool resume = false;
  bool force_resume = false;
  bool deterministic = false;
  std::string threads;                  // CPU kernel threads per learner: a number or "auto"; "" = 1
  std::string cudnn_algos = "measure";  // measure (cuDNN's engines, timed), find or heuristic
  std::string conv_choices;             // a file of convolution choices kept across runs; "" = none
  double collective_timeout = 60;       // seconds a rank waits for the others (mpirun)
  float clip_grad_norm = 0.0f;          // 0: off
  float label_smoothing = 0.0f;
  std::vector<std::string> freeze;  // regular expressions over initializer names
  std::string progress = "auto";    // auto, bar, lines, off
  std::string tensorboard;          // folder of TensorBoard event files
  std::string save_config;          // also write the resolved configuration here
  // The resolved configuration as a --config file, with some values replaced (e.g.
  // "learners" after --learners auto); set by main(), empty in tests that build TrainArgs.
  std::function<std::string(const std::map<std::string, std::string>&)> resolved_config;
};

struct InspectArgs {
  std::string model;
  bool plan = false;
  int64_t batch_size = 32;
};

struct InferArgs {
  std::string model;
  std::string input;
  std::string output;
  std::string device = "cpu";
};

struct BenchArgs {
  TrainArgs train;  // model, device, batch size, learners, optimizer flags
  int warmup = 10;
  int steps = 50;
  bool json = false;
};

struct PlotArgs {
  std::string run;     // a --metrics .jsonl file or a --tensorboard folder
  std::string output;  // .png or .svg; default: next to the run
  std::string title;
  int width = 900;
};

int run_train(const TrainArgs& a);
int run_plot(const PlotArgs& a);
int run_bench(const BenchArgs& a);
int run_inspect(const InspectArgs& a);
int run_infer(const InferArgs& a);
int run_ops();

// Trainer options from the training flags; resolves --learners auto with the auto-tuner
// (its decisions go to `log`).
// `autotune_seconds`, when given, receives the learner search's seconds (0 without --learners auto).
// `processes`: the mpirun ranks that each search alone and share --autotune-max-learners.
// `tune_while_training`, when given, takes --learners auto's search instead: the options get
// the largest count, and it receives the search's options for FitOptions::tune_learners.
TrainerOptions trainer_options(const TrainArgs& a, const Graph& model, Device device, std::ostream& log,
                               double* autotune_seconds = nullptr, int processes = 1,
                               std::optional<AutotuneOptions>* tune_while_training = nullptr);
// --conv-choices FILE. Before the trainer is built: UserError on a CPU device or a folder that
// cannot take the file; the choices read (a missing file is the first run's; one made with
// another GPU model, cuDNN or CUDA is named and ignored) are counted in `log`. After
// training: the choices written back.
void load_conv_choices_flag(const TrainArgs& a, Device device, std::ostream& log);
void save_conv_choices_flag(const TrainArgs& a, std::ostream& log);
// The line saying which initializers load_model gave each layer a copy of (none: nothing).
void report_untied(const ImportedModel& model, std::ostream& out);
// Says which tensors the exporter's optimiser made from parameters and how many BatchNorms it
// folded (ImportedModel::exporter_made, folded_batch_norms).
void report_exporter_made(const ImportedModel& model, std::ostream& out);

// Initializer names of `model` matched (std::regex_search) by any of `patterns`; UserError
// for a bad expression or one that matches no trainable tensor.
std::set<std::string> match_frozen(const Graph& model, const std::vector<std::string>& patterns);

// "cpu", "cuda", "cuda:1" -> Device; UserError otherwise.
using cbt::parse_device;  // runtime/backend.h

}  // namespace cbt::cli
