// cbtrain command line: train (default), inspect, infer, ops, bench, plot. Exit codes: 0 ok,
// 2 bad input, 3 training diverged, 4 another process of an mpirun launch failed, 1 internal
// error, 130 / 143 stopped by SIGINT / SIGTERM.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "ops/cpu/blas_core.h"
#include "runtime/fit.h"
#include "runtime/process_group.h"
#include "tools/commands.h"
#include "tools/config_file.h"
#include "tools/number_checks.h"

using namespace cbt;
using namespace cbt::cli;

// How the kernels run (precision, CUDA graphs, fusion), alike for training and bench.
static void add_kernel_flags(CLI::App& cmd, TrainArgs& t) {
  cmd.add_option("--precision", t.precision,
                 "fp32; tf32: tensor cores for matrix products and convolutions (GPU); bf16: the\n"
                 "convolutions, BatchNorms and residual Adds in bfloat16 with channels-last activations,\n"
                 "weights, gradients and statistics in float32 (GPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}));
  cmd.add_option("--cuda-graphs", t.cuda_graphs, "replay each learner's iteration as a CUDA graph")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  cmd.add_option("--fusion", t.fusion,
                 "fold each Relu into the BatchNorm, Gemm, Conv or residual Add before it, a sum of two\n"
                 "gradients into the ReluGrad after it, and the loss's gradient into the loss (same\n"
                 "results, fewer passes); run RMSNorm written out as one kernel and torch.roll's\n"
                 "Slices and Concats as one Roll; on GPUs also run X * Sigmoid(X) as one SiLU, a MatMul\n"
                 "and its bias Add as one Gemm, GELU written out (Div, Erf, Add, Mul, Mul) as one Gelu\n"
                 "and attention's MatMul, [Add bias or masks,] Softmax, MatMul as one kernel (the same\n"
                 "up to rounding)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
}

// How GPU convolutions are chosen, and the file that keeps the choices, alike for training and bench.
static void add_convolution_flags(CLI::App& cmd, TrainArgs& t) {
  cmd.add_option("--cudnn-algos", t.cudnn_algos,
                 "GPU convolution algorithms: measure (time the engines of cuDNN's backend API once\n"
                 "at start-up, take the fastest), find (time cuDNN's legacy algorithms) or heuristic\n"
                 "(cuDNN's legacy ranking, no measuring)")
      ->capture_default_str()
      ->check(CLI::IsMember({"measure", "find", "heuristic"}));
  cmd.add_option("--conv-choices", t.conv_choices,
                 "GPU: keep the convolution choices in this file, read at the start (when made on the same\n"
                 "GPU model, cuDNN and CUDA) and written at the end, so that later runs skip their searches");
}

// The learner search's flags, alike for training and bench (whose --learners auto searches
// before its timed rounds).
static void add_autotune_flags(CLI::App& cmd, TrainArgs& t) {
  cmd.add_option("--autotune-threshold", t.autotune_threshold,
                 "--learners auto keeps a learner only while it brings more than this share of a\n"
                 "learner's images/s (higher: fewer learners, more central updates per image)")
      ->capture_default_str()
      ->check(finite_number<double>())
      ->check(non_negative_number());
  cmd.add_option("--autotune-max-learners", t.autotune_max_learners,
                 "--learners auto chooses at most this many learners in all, shared by every GPU\n"
                 "and process (more learners average into z more slowly)")
      ->capture_default_str();
  cmd.add_option("--autotune-window", t.autotune_window,
                 "--learners auto times each count over three windows of at least this many seconds\n"
                 "(the median counts); longer windows see through noisier devices")
      ->capture_default_str()
      ->check(finite_number<double>())
      ->check(CLI::Range(0.001, 10.0));
}

static int run(int argc, char** argv) {
  // A file-size limit (ulimit -f) must fail the write with EFBIG, reported like a full disk,
  // not kill the process half-way through a file.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"cbtrain: train ONNX models on the CPU or GPUs and export them back to ONNX"};
  app.set_version_flag("--version", "cbtrain 0.1.0");
  app.require_subcommand(0, 1);

  TrainArgs t;
  app.add_option("model", t.model, "ONNX model to train")->check(CLI::ExistingFile);
  app.add_option("--data", t.data_dir, "folder with the data set (see --data-format)")->default_str(kDefaultDataDir);
  add_data_flags(app, t.data);
  app.add_option("--epochs", t.epochs, "training epochs")->capture_default_str()->check(positive_number());
  app.add_option("--batch-size,-b", t.batch_size, "samples per step")->capture_default_str()->check(positive_number());
  app.add_option("--max-steps", t.max_steps, "stop after this many steps (smoke runs)")->check(non_negative_number());
  app.add_option("--lr", t.lr, "learning rate")
      ->capture_default_str()
      ->check(finite_number<float>())
      ->check(positive_number());
  app.add_option("--momentum", t.momentum, "SGD momentum")
      ->capture_default_str()
      ->check(finite_number<float>())
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--weight-decay", t.weight_decay, "weight decay")
      ->capture_default_str()
      ->check(finite_number<float>())
      ->check(non_negative_number());
  app.add_option("--lr-schedule", t.lr_schedule, "constant, cosine (to 0 at the end) or step")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "cosine", "step"}));
  app.add_option("--warmup-steps", t.warmup_steps, "linear learning-rate warm-up steps")
      ->capture_default_str()
      ->check(non_negative_number());
  app.add_option("--milestones", t.milestones,
                 "epochs at which --lr-schedule step multiplies the rate by --lr-gamma (30 60 or 30,60)")
      ->delimiter(',')
      ->check(positive_number());
  app.add_option("--lr-gamma", t.lr_gamma, "factor of --lr-schedule step")
      ->capture_default_str()
      ->check(finite_number<float>())
      ->check(positive_number());
  app.add_option("--optimizer", t.optimizer, "sgd or adamw")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "adamw"}));
  app.add_option("--loss", t.loss,
                 "loss on the output: cross-entropy (softmax, on logits), mse, or bce = binary "
                 "cross-entropy WITH LOGITS (sigmoid inside); mse/bce compare with one-hot labels")
      ->capture_default_str()
      ->check(CLI::IsMember({"cross-entropy", "mse", "bce"}));
  app.add_option("--label-smoothing", t.label_smoothing, "label smoothing of the cross-entropy, in [0, 1)")
      ->capture_default_str()
      ->check(finite_number<float>())
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--clip-grad-norm", t.clip_grad_norm, "clip the gradient to this global L2 norm (0: off)")
      ->capture_default_str()
      ->check(finite_number<float>())
      ->check(non_negative_number());
  app.add_option("--freeze", t.freeze,
                 "never train parameters whose name matches this regular expression (repeatable)");
  app.add_option("--output-name", t.output_name, "model output to train (default: the first)");
  app.add_option("--seed", t.seed, "random seed")->capture_default_str()->check(non_negative_number());
  app.add_option("--device", t.device, "cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--learners,-k", t.learners, "model replicas (learners) per device, or auto")->capture_default_str();
  app.add_option("--gpus", t.gpus, "several GPUs of this machine, e.g. 0,1 or all (K learners on each)");
  app.add_option("--threads", t.threads,
                 "CPU: threads of each learner's kernels, or auto (the cores this process may use,\n"
                 "or OMP_NUM_THREADS, divided among the learners); default 1");
  add_kernel_flags(app, t);
  add_autotune_flags(app, t);
  app.add_option("--autotune-when", t.autotune_when,
                 "--learners auto: training (time the counts on the first rounds of training, which\n"
                 "train the model) or before (on random data before training; always with several\n"
                 "processes or checkpoints)")
      ->capture_default_str()
      ->check(CLI::IsMember({"training", "before"}));
  app.add_option("--algorithm", t.algorithm, "sma (model averaging, default with several learners) or ssgd")
      ->check(CLI::IsMember({"sma", "ssgd"}));
  app.add_option("--alpha", t.alpha,
                 "SMA correction factor (default: min(0.4, (1 + sma-momentum) / k) for k learners in all)")
      ->check(finite_number<float>())
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--sma-momentum", t.sma_momentum, "momentum of the central model")
      ->capture_default_str()
      ->check(finite_number<float>())
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--output,-o", t.output, "write the trained model to this .onnx file");
  app.add_option("--metrics", t.metrics, "write one JSON object per epoch to this file");
  app.add_option("--log-every", t.log_every, "steps between progress lines and TensorBoard scalars (0: none)")
      ->capture_default_str()
      ->check(non_negative_number());
  app.add_option("--progress", t.progress, "auto (a bar on a terminal, lines otherwise), bar, lines or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "bar", "lines", "off"}));
  app.add_option("--tensorboard", t.tensorboard, "write TensorBoard event files to this folder");
  app.add_option("--save-config", t.save_config, "write the resolved configuration (a --config file) here")
      ->configurable(false);
  app.set_config("--config", "", "read flags from a TOML/INI file (`name = value`); flags given here override it");
  app.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt name is an error, not ignored
  app.add_option("--checkpoint-dir", t.checkpoint_dir, "write crash-safe checkpoints to this folder");
  app.add_option("--checkpoint-every", t.checkpoint_every,
                 "checkpoint every N rounds, or every N epochs with a suffix e (default: 1e)");
  app.add_flag("--resume", t.resume, "continue from the newest intact checkpoint in --checkpoint-dir");
  app.add_flag("--force-resume", t.force_resume, "--resume even with another model or configuration");
  app.add_flag("--deterministic", t.deterministic,
               "bit-identical runs for a seed: one thread per CPU kernel, fixed reduction orders,\n"
               "deterministic cuDNN algorithms and no atomic sums on GPUs");
  add_convolution_flags(app, t);
  app.add_option("--collective-timeout", t.collective_timeout,
                 "seconds a process waits for the others (mpirun) before all stop, naming the missing rank")
      ->capture_default_str()
      ->check(finite_number<double>())
      ->check(positive_number());

  InspectArgs ia;
  auto* inspect = app.add_subcommand("inspect", "show inputs, outputs, ops, parameters and support");
  inspect->add_option("model", ia.model, "ONNX model")->required()->check(CLI::ExistingFile);
  inspect->add_flag("--plan", ia.plan, "print the memory plan of the training step");
  inspect->add_option("--batch-size,-b", ia.batch_size, "batch size for --plan")
      ->capture_default_str()
      ->check(positive_number());

  InferArgs fa;
  auto* infer = app.add_subcommand("infer", "forward pass on a NumPy array");
  infer->add_option("model", fa.model, "ONNX model")->required()->check(CLI::ExistingFile);
  infer->add_option("--input,-i", fa.input, "input .npy (float32)")->required()->check(CLI::ExistingFile);
  infer->add_option("--output,-o", fa.output, "output .npy")->required();
  infer->add_option("--device", fa.device, "cpu, cuda or cuda:N")->capture_default_str();

  auto* ops = app.add_subcommand("ops", "list the supported ONNX ops per device");

  BenchArgs ba;
  auto* bench = app.add_subcommand("bench", "training throughput on synthetic data (images/s)");
  bench->add_option("model", ba.train.model, "ONNX model")->required()->check(CLI::ExistingFile);
  bench->add_option("--device", ba.train.device, "cpu, cuda or cuda:N")->capture_default_str();
  bench->add_option("--batch-size,-b", ba.train.batch_size, "samples per learner")
      ->capture_default_str()
      ->check(positive_number());
  bench->add_option("--learners,-k", ba.train.learners, "learners per device, or auto")->capture_default_str();
  bench->add_option("--algorithm", ba.train.algorithm, "sma or ssgd")->check(CLI::IsMember({"sma", "ssgd"}));
  bench->add_option("--gpus", ba.train.gpus, "several GPUs, e.g. 0,1 or all");
  add_autotune_flags(*bench, ba.train);
  bench->add_option("--threads", ba.train.threads, "CPU: threads of each learner's kernels, or auto (default 1)");
  add_kernel_flags(*bench, ba.train);
  add_convolution_flags(*bench, ba.train);
  bench->add_option("--warmup", ba.warmup, "rounds before timing")->capture_default_str()->check(non_negative_number());
  bench->add_option("--steps", ba.steps, "rounds per timed window (median of 3)")
      ->capture_default_str()
      ->check(positive_number());
  bench->add_flag("--json", ba.json, "print one JSON object");

  PlotArgs pa;
  auto* plot = app.add_subcommand("plot", "draw the loss, accuracy and learning-rate curves of a run to PNG/SVG");
  plot->add_option("run", pa.run, "a --metrics .jsonl file or a --tensorboard folder")->required();
  plot->add_option("--output,-o", pa.output, "the .png or .svg file (default: next to the run)");
  plot->add_option("--title", pa.title, "title above the charts (default: the run's path)");
  plot->add_option("--width", pa.width, "width in pixels")->capture_default_str()->check(CLI::Range(300, 8000));
  t.resolved_config = [&app](const std::map<std::string, std::string>& overrides) {
    return config_toml(app, overrides);
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse NAME" for a name it does not know: say which file,
    // and what the names are.
    std::string file;
    if (const CLI::Option* c = app.get_config_ptr(); c && c->count()) file = c->as<std::string>();
    std::string msg = e.what();
    const std::string unknown = "INI was not able to parse ";
    if (msg.rfind(unknown, 0) == 0)
      msg = "'" + msg.substr(unknown.size()) +
            "' is not a setting of cbtrain (the settings are the long flags without their dashes, as --save-config "
            "writes them)";
    std::cerr << "error: " << (file.empty() ? "" : "--config " + file + ": ") << msg << "\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (const std::string empty = empty_number_message(app); !empty.empty()) {
    std::string file;
    if (const CLI::Option* c = app.get_config_ptr(); c && c->count())
      file = " (on the command line or in --config " + c->as<std::string>() + ")";
    std::cerr << "error: " << empty << file << "\n";
    return 2;
  }
  try {
    if (*inspect) return run_inspect(ia);
    if (*infer) return run_infer(fa);
    if (*ops) return run_ops();
    if (*bench) return run_bench(ba);
    if (*plot) return run_plot(pa);
    if (t.model.empty()) {
      std::cerr << "error: no model given\n" << app.help();
      return 2;
    }
    if (t.data_dir.empty()) t.data_dir = kDefaultDataDir;
    return run_train(t);
  } catch (const ModelError& e) {
    // Errors found after import (binding, shapes, gradients) name the node; add the file.
    const std::string& path = *inspect ? ia.model : *infer ? fa.model : *bench ? ba.train.model : t.model;
    std::string msg = e.what();
    if (!path.empty() && msg.find(path) == std::string::npos) msg = path + ": " + msg;
    std::cerr << "error: " << msg << "\n";
    return 2;
  } catch (const UserError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const TrainingDiverged& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  } catch (const RankFailure& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 4;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cbtrain: " << e.what() << "\n";
    return 1;
  }
}

int main(int argc, char** argv) {
  // OpenBLAS reads OPENBLAS_CORETYPE once, as it loads: where it fell back to its generic
  // kernels on a CPU with AVX2, this process starts again with the faster ones chosen (before
  // anything else has run: no MPI, no threads yet). Setting OPENBLAS_CORETYPE turns this off.
  if (const char* core = cbt::cpu::suggested_blas_core()) {
    setenv("OPENBLAS_CORETYPE", core, 1);
    execv("/proc/self/exe", argv);  // only returns on failure: go on with the generic kernels
  }
  const int rc = run(argc, argv);
  // Under mpirun: a failure on any rank ends every rank (MPI_Abort); success meets them all.
  cbt::finish_process_group(rc);
  return rc;
}
