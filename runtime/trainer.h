// The training engine: K learners (replicas) on one device kept together by Synchronous
// Model Averaging (DESIGN.md), or synchronous SGD over their averaged gradients; evaluation
// and export read the central model z.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/autodiff.h"
#include "ops/cpu/threads.h"
#include "runtime/collective.h"
#include "runtime/dataset.h"
#include "runtime/inferencer.h"
#include "runtime/learner.h"
#include "runtime/learner_threads.h"
#include "runtime/process_group.h"
#include "runtime/resident_data.h"

namespace cbt {

enum class OptimizerKind { SGD, AdamW };
// Sma: DESIGN.md's equations. Ssgd: gradients of all learners averaged, one model (with one
// learner this is plain SGD/AdamW).
enum class Algorithm { Sma, Ssgd };

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::SGD;
  float lr = 0.01f;
  float momentum = 0.9f;  // SGD
  float weight_decay = 5e-4f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // AdamW
};

// SMA's correction factor when none is given: min(0.4, (1 + mu_z) / k) for k learners in all
// and central momentum mu_z. The corrections then move z by (1 + mu_z) times the way to the
// replicas' mean, half the largest step for which z's relaxation towards the mean alone stays
// stable (2 (1 + mu_z) / k; with the replicas' pull, 2 (1 + mu_z) / (k + 1 + mu_z), see
// sma_stable_learners), and pull each replica towards z, which runs ahead with its momentum,
// (1 + mu_z) times harder than 1/k does. Measured on ResNet-20 (Fashion-MNIST, batch 32, lr
// 0.05 cosine, 14 learners): 91% test accuracy at epoch 6 in 10 of 11 runs with alpha between
// 0.136 and 0.2 (7 in the other), at epochs 8, 8 and 9 with 1/k; alpha 0.3 diverged. LeNet-5
// about unchanged (docs/bench/h200_2026-11-27_s14/).
// With few learners (1 + mu_z) / k comes near the whole bound (0.95 against 0.97 for 2
// learners and mu_z 0.9; 1 for one learner, which the search while training may time), so the
// default stops at 0.4: ResNet-20 with 2 learners reached 91% at epochs 6, 6, 6 with 0.95 and
// 5, 4, 3 with 0.4; with 3, at 5, 5 with 0.633 and 5, 4 with 0.3 (one H200, 2026-11-29,
// docs/bench/h200_2026-11-29_s26/ call 6). From 5 learners on (mu_z 0.9) nothing changes.
constexpr float kMaxDefaultSmaAlpha = 0.4f;
float default_sma_alpha(int k, float sma_momentum);

// The most learners in all (at least 1) for which SMA stays stable with a given correction
// factor `alpha`, whatever the learning rate: between the replicas' mean m and z, d = m - z and
// z's last step e follow d' = (1 - alpha - alpha k) d - mu_z e and e' = alpha k d + mu_z e (the
// replicas pulled towards z by alpha, z moved by alpha k d plus its momentum), which grows
// without bound once alpha (k + 1 + mu_z) reaches 2 (1 + mu_z). Measured: ResNet-20 with
// alpha 0.5 diverged with 8 learners and with 7 (0.5 x 8.9 = 4.45 > 3.8), at round 340-350
// on every seed (docs/bench/h200_2026-11-29_s25/); 14 x 0.3 diverged too (above). The default
// alpha (1 + mu_z) / k is within it from 2 learners on. INT_MAX for alpha <= 0 (z does not move).
int sma_stable_learners(float alpha, float sma_momentum);

struct TrainerOptions {
  int64_t batch_size = 32;  // per learner
  int64_t eval_batch_size = 500;
  int learners = 1;
  Algorithm algorithm = Algorithm::Ssgd;
  float alpha = -1.0f;        // SMA correction factor; < 0: default_sma_alpha, following k
  float sma_momentum = 0.9f;  // mu_z
  OptimizerOptions optimizer;
  // Clip the gradient by its global norm before each update (0: off): each learner's own
  // under SMA, the averaged one under synchronous SGD.
  float clip_grad_norm = 0.0f;
  TrainingGraphOptions graph;  // loss, output, label smoothing, frozen parameters
  uint64_t seed = 42;
  Device device;
  std::vector<int> gpus;  // several GPUs of this process (K learners on each); empty: `device`
  // The processes that train together (mpirun); null: this process alone. Every rank brings
  // the same number of learners; rank r's learner j is learner r*k+j of the whole run.
  std::shared_ptr<ProcessGroup> processes;
  bool cuda_graphs = true;                    // replay each learner's iteration as a CUDA graph on GPUs
  bool tf32 = false;                          // --precision tf32
  ConvAlgos conv_algos = ConvAlgos::Engines;  // --cudnn-algos
  // Learners of a device its convolution searches assume run side by side (they time that
  // many copies at once, up to 8); 0: `learners`. The auto-tuner sets its largest count, so
  // that one search serves every count it tries instead of one search per count up to 8.
  int conv_timing_learners = 0;
  // One thread per CPU kernel in every learner thread, so that reductions run in a fixed
  // order and a run (and a resumed run) gives the same weights bit for bit; on GPUs only
  // deterministic cuDNN algorithms and no atomic sums (Backend::set_deterministic).
  bool deterministic = false;
  // Threads of each CPU learner's kernels (OpenBLAS and OpenMP): a count; 0: the current
  // setting of ops/cpu/threads.h (1 unless changed); kAutoThreads: the cores this process may
  // use (cpu::available_cores) shared among its learners. --deterministic needs 1. The
  // trainer's options() hold the count it resolved to.
  static constexpr int kAutoThreads = -1;
  int cpu_threads = 0;
};

// The whole training state as host tensors, for checkpoints: every learner's flat buffers
// (parameters, momenta, BatchNorm statistics), z, z_prev and the central statistics, named
// "learner<j>/<role>" and "central/<role>"; plus the round count (it seeds Dropout and
// AdamW's bias correction) and the learning rate in use.
struct TrainerState {
  std::vector<std::pair<std::string, Tensor>> tensors;
  int64_t rounds = 0;
  float lr = 0;
};

struct EvalResult {
  double accuracy = 0;  // fraction in [0, 1]
  double loss = 0;      // mean cross-entropy over the set
  int64_t samples = 0;
};

class Trainer {
 public:
  Trainer(const Graph& model, const TrainerOptions& opt);
  ~Trainer();

  int learners() const { return static_cast<int>(active_.size()); }  // training, of this process
  int total_learners() const { return total_learners_; }             // of all processes
  int first_learner() const { return first_learner_; }               // global index of learner 0 here
  // Learners built, of this process (TrainerOptions::learners per device); learners() of them
  // train, the first per device (all unless set_active_learners chose fewer).
  int built_learners() const { return static_cast<int>(learners_.size()); }
  // Trains with the first `per_device` built learners of each device; the others keep their
  // memory and sit idle. The auto-tuner times every count on one trainer this way. A learner
  // that joins starts from the model: under SMA from z (its BatchNorm statistics from the mean
  // of the learners that trained) with a zero momentum, under synchronous SGD as a copy of its
  // device's first learner. The default alpha (default_sma_alpha) follows the count unless TrainerOptions gave alpha.
  // Every process must choose the same count. CPU learners keep the thread count of their build.
  // state() and restore() hold every built learner.
  void set_active_learners(int per_device);
  ProcessGroup& processes() { return *opt_.processes; }
  // One round: learner j trains on (xs[j], ys[j]) (empty xs/ys: on the batches already on
  // the devices); returns the mean loss over learners, or NaN without waiting for the
  // devices when read_loss is false.
  float round(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys, bool read_loss = true);
  // Keeps `train` in the memory of every device when it fits (returns whether it does); then
  // round_resident() trains on batches gathered there.
  bool make_resident(const Dataset& train);
  // The epoch's order and, when augmenting, its choices (augment.h; empty: none).
  void set_resident_order(const std::vector<int64_t>& order, const std::vector<int32_t>& augment = {});
  // One round on the resident set: learner j takes positions [start + j*B, start + (j+1)*B)
  // of the epoch order.
  float round_resident(int64_t start, bool read_loss = true);
  // Waits until every queued round is done.
  void synchronize();
  // Device bytes one learner holds: its planned arena, its flat buffers and its backend's
  // workspaces (of them, the part backed by memory so far: Backend::reserved_bytes).
  size_t bytes_per_learner();
  size_t workspace_bytes_per_learner() { return learners_.at(0)->backend().reserved_bytes(); }
  // One step with one learner (convenience for K = 1).
  float step(const Tensor& x_host, const Tensor& y_host) { return round({x_host}, {y_host}); }

  // With several processes every rank evaluates its share of `data` and all get the totals.
  EvalResult evaluate(const Dataset& data);
  // Forward pass in inference mode with the central model on a host batch.
  std::vector<Tensor> infer(const Tensor& x_host);

  void set_learning_rate(float lr);
  float learning_rate() const { return opt_.optimizer.lr; }
  // Every replica restarts from the central model (SMA, on a learning-rate drop).
  void restart_from_central();
  // How far the replicas have spread around the central model: the root mean square over
  // learners of ||x_j - z|| / ||z|| (0 under synchronous SGD). Downloads every replica.
  double replica_spread();

  // Host copies of the central model's initializers (parameters and BatchNorm statistics).
  std::map<std::string, Tensor> trained_initializers();
  // Host copies of learner j's parameters / of z (tests).
  std::map<std::string, Tensor> replica_parameters(int j);
  std::map<std::string, Tensor> central_parameters();

  const TrainingGraph& training_graph() const { return tg_; }
  const Program& training_program() const { return learners_.at(0)->program(); }
  int64_t num_parameters() const { return param_layout_.values; }
  const ValueType& input_type() const { return input_type_; }  // one learner's batch
  int64_t rounds() const { return rounds_; }
  Algorithm algorithm() const { return opt_.algorithm; }
  const TrainerOptions& options() const { return opt_; }  // resolved (alpha, learners)
  bool alpha_given() const { return !auto_alpha_; }       // alpha set by the options, not following k
  const Graph& model() const { return model_; }

  // Host copy of the whole training state (waits for the devices).
  TrainerState state();
  // Restores a state taken from a trainer of the same model and options; UserError when a
  // tensor is missing or has another shape.
  void restore(const TrainerState& s);

 private:
  void upload_hyper();
  std::optional<cpu::ScopedKernelThreads> all_cpu_threads() const;
  LocalUpdate clip_update(const Tensor& grads, float scale) const;
  void refresh_central_buffers();
  void sync_central_from_replica();
  template <class F>
  void for_each_learner(F&& f);

  Graph model_;
  TrainerOptions opt_;
  TrainingGraph tg_;
  ValueType input_type_;
  FlatLayout param_layout_, buffer_layout_;
  std::vector<std::unique_ptr<Learner>> learners_;
  // One per device: its synchronisation queue and its copy of the central model (every
  // device applies the same update to its own z). groups_[0] evaluates and exports.
  struct DeviceGroup {
    std::unique_ptr<Backend> sync;
    FlatBuffer z, z_prev, sum, z_buffers;
    Tensor hyper;                  // [mu_z]
    std::vector<size_t> built;     // indices into learners_
    std::vector<size_t> learners;  // those of them that train (the first few of `built`)
    // SMA: done when the last round's z is; the learners' next local updates wait for it.
    std::shared_ptr<void> central_ready;
  };
  std::vector<DeviceGroup> groups_;
  std::vector<size_t> group_of_;           // learner -> group
  std::vector<size_t> active_;             // the learners that train, group by group
  bool auto_alpha_ = false;                // the default alpha follows the count of learners
  std::unique_ptr<AllReduce> all_reduce_;  // across devices and processes; null with one
  int total_learners_ = 1, first_learner_ = 0;
  std::vector<Tensor> learner_hyper_;  // per learner, on its backend
  Backend& primary() { return *groups_[0].sync; }
  std::unique_ptr<Inferencer> inferencer_;
  std::vector<std::unique_ptr<ResidentDataset>> resident_;  // per group, when resident
  std::unique_ptr<LearnerThreads> learner_threads_;         // CPU learners, when more than one
  int64_t rounds_ = 0;
};

}  // namespace cbt
