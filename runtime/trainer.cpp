// Trainer: builds the training graph once, one Learner per replica, and runs rounds of
// SMA or synchronous SGD with the update kernels of ops/ over flat buffers.
#include "runtime/trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "ops/cpu/threads.h"

namespace cbt {

float default_sma_alpha(int k, float sma_momentum) {
  return std::min(kMaxDefaultSmaAlpha, (1.0f + sma_momentum) / static_cast<float>(std::max(k, 1)));
}

int sma_stable_learners(float alpha, float sma_momentum) {
  if (alpha <= 0) return std::numeric_limits<int>::max();
  const double mu = sma_momentum, a = alpha, limit = 2 * (1 + mu);  // alpha (k + 1 + mu) < limit
  const double k = std::floor(limit / a - 1 - mu);
  if (k >= static_cast<double>(std::numeric_limits<int>::max())) return std::numeric_limits<int>::max();
  return std::max(1, static_cast<int>(a * (k + 1 + mu) < limit ? k : k - 1));
}

Trainer::Trainer(const Graph& model, const TrainerOptions& opt) : model_(model), opt_(opt) {
  check_supported(model_, opt.device);
  if (opt.learners < 1) throw UserError("--learners must be at least 1");
  if (opt.algorithm == Algorithm::Sma && opt.optimizer.kind != OptimizerKind::SGD)
    throw UserError("--algorithm sma uses SGD with momentum locally; use --optimizer sgd or --algorithm ssgd");
  if (!opt.gpus.empty() && opt.device.is_cpu()) throw UserError("--gpus needs --device cuda");
  if (opt.cpu_threads < 0 && opt.cpu_threads != TrainerOptions::kAutoThreads)
    throw UserError("--threads must be at least 1");
  if (opt.cpu_threads > 0 && !opt.device.is_cpu())
    throw UserError("--threads sets the threads of CPU learners; it has no effect with --device " + opt.device.str());
  if (opt.deterministic && opt.cpu_threads > 1)
    throw UserError("--deterministic runs each CPU kernel on one thread; use more learners (-k) instead of --threads");
  if (opt.device.is_cpu()) {
    int& t = opt_.cpu_threads;
    if (opt.deterministic)
      t = 1;
    else if (t == TrainerOptions::kAutoThreads)
      t = std::max(1, cpu::available_cores() / opt.learners);
    else if (t == 0)
      t = cpu::kernel_threads();
    cpu::set_kernel_threads(t);
  }
  const size_t devices_n = std::max<size_t>(1, opt.gpus.size());
  if (!opt_.processes) opt_.processes = single_process_group();
  ProcessGroup& pg = *opt_.processes;
  const int local_k = opt.learners * static_cast<int>(devices_n);
  if (pg.size() > 1) {
    // The global index of a learner is rank * local_k + j: every rank must bring local_k.
    double sum = local_k;
    pg.all_reduce_sum(&sum, 1, "the learner count");
    if (sum != static_cast<double>(local_k) * pg.size())
      throw UserError("every process must train as many learners (--learners x GPUs): rank " +
                      std::to_string(pg.rank()) + " has " + std::to_string(local_k) + ", the " +
                      std::to_string(pg.size()) + " ranks together " + std::to_string(static_cast<int64_t>(sum)));
  }
  total_learners_ = local_k * pg.size();
  first_learner_ = local_k * pg.rank();
  // alpha follows k, the count of all learners of all devices and processes
  // (default_sma_alpha).
  auto_alpha_ = opt_.alpha < 0;
  if (auto_alpha_) opt_.alpha = default_sma_alpha(total_learners_, opt_.sma_momentum);
  if (opt.algorithm == Algorithm::Sma) {
    if (!(opt.sma_momentum >= 0 && opt.sma_momentum < 1))
      throw UserError(detail::concat("--sma-momentum must be in [0, 1): with ", opt.sma_momentum,
                                     " the central model's steps never die down"));
    const int stable = sma_stable_learners(opt_.alpha, opt_.sma_momentum);
    if (!auto_alpha_ && total_learners_ > stable)
      throw UserError(
          detail::concat("--alpha ", opt_.alpha, " with ", total_learners_,
                         " learners in all would make SMA diverge whatever the learning rate: alpha x (learners + 1 + "
                         "--sma-momentum) must stay below 2 x (1 + --sma-momentum) = ",
                         2 * (1 + opt_.sma_momentum), ", so at most ", stable,
                         " learners with this alpha; or leave --alpha out (it then follows the count)"));
  }

  BindOptions bo;
  bo.batch = opt.batch_size;
  // Every learner is on a GPU (one --device cuda or --gpus): cuDNN runs the recurrent layers,
  // and the fusions that pay with the GPU's kernels are made.
  const bool on_gpus = !opt.gpus.empty() || opt.device.kind == DeviceKind::CUDA;
  bo.fused_recurrent = on_gpus;
  BoundGraph bound = bind_graph(model_, bo, cpu_evaluator(model_.opset));
  TrainingGraphOptions graph = opt.graph;
  graph.gpu_fusions = graph.gpu_fusions || on_gpus;
  if (graph.bf16_channels_last && !on_gpus)
    throw UserError("--precision bf16 needs CUDA devices (--device cuda or --gpus): the CPU has no bfloat16 kernels");
  tg_ = build_training_graph(bound, graph);
  input_type_ = tg_.types.at(tg_.data_input);
  param_layout_ = FlatLayout::of(tg_.params, tg_.types);
  buffer_layout_ = FlatLayout::of(tg_.buffers, tg_.types);

  const bool adam = opt.optimizer.kind == OptimizerKind::AdamW;
  std::vector<Device> devices;
  for (int g : opt.gpus) devices.push_back(Device{DeviceKind::CUDA, g});
  if (devices.empty()) devices.push_back(opt.device);
  // Every queue of the run, the learners' and the synchronisation ones, with its settings.
  // A learner's convolutions are timed as many side by side as the GPU has learners; the
  // synchronisation queue's, evaluation's forward passes, alone, as they run.
  const int learner_copies = opt.conv_timing_learners > 0 ? opt.conv_timing_learners : opt.learners;
  auto backend_for = [&opt](Device d, int conv_copies) {
    std::unique_ptr<Backend> b = make_backend(d);
    if (opt.tf32) b->allow_tf32(true);
    b->set_deterministic(opt.deterministic);
    b->set_conv_algos(opt.conv_algos, conv_copies);
    return b;
  };
  for (size_t g = 0; g < devices.size(); ++g) {
    DeviceGroup grp;
    for (int j = 0; j < opt.learners; ++j) {
      grp.built.push_back(learners_.size());
      active_.push_back(learners_.size());
      group_of_.push_back(g);
      learners_.push_back(std::make_unique<Learner>(tg_, param_layout_, buffer_layout_, adam,
                                                    backend_for(devices[g], learner_copies), opt.cuda_graphs));
      learner_hyper_.push_back(learners_.back()->backend().empty(DType::Float32, {8}));
    }
    grp.learners = grp.built;
    grp.sync = backend_for(devices[g], 1);
    Backend& sb = *grp.sync;
    grp.z = FlatBuffer(param_layout_, sb);
    grp.z_prev = FlatBuffer(param_layout_, sb);
    grp.sum = FlatBuffer(param_layout_, sb);
    grp.z_buffers = FlatBuffer(buffer_layout_, sb);
    grp.hyper = sb.empty(DType::Float32, {8});
    for (const auto& e : param_layout_.entries) {
      sb.copy_from_host(grp.z.view(e.name), tg_.graph.initializers.at(e.name));
      sb.copy_from_host(grp.z_prev.view(e.name), tg_.graph.initializers.at(e.name));
    }
    for (const auto& e : buffer_layout_.entries)
      sb.copy_from_host(grp.z_buffers.view(e.name), tg_.graph.initializers.at(e.name));
    groups_.push_back(std::move(grp));
  }
  std::vector<Backend*> syncs;
  for (auto& g : groups_) syncs.push_back(g.sync.get());
  all_reduce_ = make_all_reduce(syncs, opt_.processes);
  upload_hyper();

  // The local update joins each learner's program (and so its CUDA graph) wherever it needs
  // nothing from other learners: always under SMA, and for a single learner.
  if (opt_.clip_grad_norm < 0) throw UserError("--clip-grad-norm must be positive (0: off)");
  for (size_t j = 0; j < learners_.size(); ++j) {
    Learner& l = *learners_[j];
    LocalUpdate u;
    if (opt_.algorithm == Algorithm::Sma) {
      u = {"SMALearnerUpdate",
           {l.params().flat(), l.grads().flat(), l.moment1().flat(), groups_[group_of_[j]].z.flat(),
            l.correction().flat(), learner_hyper_[j]}};
    } else if (learners_.size() == 1) {
      if (adam)
        u = {"AdamW", {l.params().flat(), l.grads().flat(), l.moment1().flat(), l.moment2().flat(), learner_hyper_[j]}};
      else
        u = {"SGDMomentum", {l.params().flat(), l.grads().flat(), l.moment1().flat(), learner_hyper_[j]}};
    }
    std::vector<LocalUpdate> updates;
    if (opt_.clip_grad_norm > 0 && !u.op_type.empty()) updates.push_back(clip_update(l.grads().flat(), 1.0f));
    updates.push_back(u);
    l.build_program(updates);
  }

  std::map<std::string, Tensor> weights = groups_[0].z.views();
  weights.insert(groups_[0].z_buffers.views().begin(), groups_[0].z_buffers.views().end());
  inferencer_ = std::make_unique<Inferencer>(model_, primary(), std::move(weights));
}

Trainer::~Trainer() = default;

LocalUpdate Trainer::clip_update(const Tensor& grads, float scale) const {
  Attributes a;
  a.set("max_norm", opt_.clip_grad_norm);
  a.set("scale", scale);
  return {"ClipGradNorm", {grads}, a};
}

void Trainer::upload_hyper() {
  const OptimizerOptions& o = opt_.optimizer;
  const float k = static_cast<float>(total_learners_);
  Tensor h(DType::Float32, {8});
  float* p = h.ptr<float>();
  if (opt_.algorithm == Algorithm::Sma) {
    p[0] = o.lr, p[1] = o.momentum, p[2] = o.weight_decay, p[3] = opt_.alpha;
  } else if (o.kind == OptimizerKind::SGD) {
    p[0] = o.lr, p[1] = o.momentum, p[2] = o.weight_decay, p[3] = 1.0f / k;
  } else {
    p[0] = o.lr, p[1] = o.beta1, p[2] = o.beta2, p[3] = o.eps, p[4] = o.weight_decay;
    p[5] = static_cast<float>(rounds_ + 1), p[6] = 1.0f / k;
  }
  for (size_t j = 0; j < learners_.size(); ++j) learners_[j]->backend().copy_from_host(learner_hyper_[j], h);
  Tensor c(DType::Float32, {8});
  c.ptr<float>()[0] = opt_.sma_momentum;
  for (auto& g : groups_) g.sync->copy_from_host(g.hyper, c);
}

void Trainer::set_learning_rate(float lr) {
  opt_.optimizer.lr = lr;
  upload_hyper();
}

// f(i, j) for the i-th learner that trains, learners_[j]. CPU learners run on threads of their
// own (kept from round to round); GPU learners only enqueue work on their streams, which one
// host thread does fastest.
template <class F>
void Trainer::for_each_learner(F&& f) {
  if (active_.size() == 1 || !opt_.device.is_cpu()) {
    for (size_t i = 0; i < active_.size(); ++i) f(i, active_[i]);
    return;
  }
  if (!learner_threads_ || learner_threads_->size() != active_.size())
    learner_threads_ = std::make_unique<LearnerThreads>(active_.size(), opt_.cpu_threads);
  learner_threads_->run([&](size_t i) { f(i, active_[i]); });
}

void Trainer::set_active_learners(int per_device) {
  const int built = static_cast<int>(groups_.at(0).built.size());
  if (per_device < 1 || per_device > built)
    throw UserError("set_active_learners: " + std::to_string(per_device) + " learner(s) per device, " +
                    std::to_string(built) + " built");
  // The joining learners start from what the trained ones hold now.
  refresh_central_buffers();
  std::vector<size_t> active;
  for (auto& g : groups_) {
    const auto ready = g.sync->record();
    const size_t first = g.built[0];
    const auto first_done = learners_[first]->backend().record();
    for (size_t i = g.learners.size(); i < static_cast<size_t>(per_device); ++i) {
      Learner& l = *learners_[g.built[i]];
      Backend& b = l.backend();
      b.wait(ready);
      if (opt_.algorithm == Algorithm::Sma) {
        b.copy(l.params().flat(), g.z.flat());
        if (l.buffers().flat().defined()) b.copy(l.buffers().flat(), g.z_buffers.flat());
        for (const FlatBuffer* m : {&l.moment1(), &l.moment2()})
          if (m->flat().defined()) b.copy_from_host(m->flat(), Tensor(m->flat().dtype(), m->flat().shape()));
      } else {
        // Every replica of synchronous SGD holds the same state.
        Learner& src = *learners_[first];
        b.wait(first_done);
        for (auto [dst, from] : {std::pair{&l.params(), &src.params()},
                                 {&l.moment1(), &src.moment1()},
                                 {&l.moment2(), &src.moment2()},
                                 {&l.buffers(), &src.buffers()}})
          if (dst->flat().defined()) b.copy(dst->flat(), from->flat());
      }
    }
    g.learners.assign(g.built.begin(), g.built.begin() + per_device);
    active.insert(active.end(), g.learners.begin(), g.learners.end());
  }
  active_ = std::move(active);
  const int local_k = static_cast<int>(active_.size());
  total_learners_ = local_k * opt_.processes->size();
  first_learner_ = local_k * opt_.processes->rank();
  opt_.learners = per_device;
  if (auto_alpha_) opt_.alpha = default_sma_alpha(total_learners_, opt_.sma_momentum);
  upload_hyper();
  synchronize();  // the host tensors of the zero momenta are freed on return
}

float Trainer::round(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys, bool read_loss) {
  CBT_CHECK(xs.size() == ys.size() && (xs.empty() || xs.size() == active_.size()), "round: ", xs.size(),
            " batches for ", active_.size(), " learners");
  if (opt_.optimizer.kind == OptimizerKind::AdamW) upload_hyper();  // the step count
  const uint64_t round_seed = rng_hash(opt_.seed, static_cast<uint64_t>(rounds_));
  const size_t k = active_.size();

  // 1. Every learner: forward, loss, backward on its own batch, then (SMA, or one learner)
  // its local update. Under SMA the update reads z, which the last round's synchronisation
  // is still computing: only the update waits for it, the gradient does not (DESIGN.md).
  for_each_learner([&](size_t i, size_t j) {
    Learner& l = *learners_[j];
    if (!xs.empty()) l.set_batch(xs[i], ys[i]);  // else: the batch already on the device
    l.run_gradient(rng_hash(round_seed, static_cast<uint64_t>(first_learner_) + i));
    if (const auto& ready = groups_[group_of_[j]].central_ready) l.backend().wait(ready);
    l.run_update();
  });

  // 2. Synchronisation: each device reduces its own learners in one kernel, the devices of
  // all processes sum their reductions (NCCL; MPI for CPU processes), and each device applies
  // the same update to its own z.
  // (Synchronous SGD on one learner built updates itself in its program.)
  if (opt_.algorithm == Algorithm::Sma || learners_.size() > 1 || opt_.processes->size() > 1) {
    std::vector<Tensor> sums;
    for (auto& g : groups_) {
      std::vector<Tensor> parts;
      for (size_t j : g.learners) {
        Learner& l = *learners_[j];
        g.sync->wait(l.backend().record());
        parts.push_back(opt_.algorithm == Algorithm::Sma ? l.correction().flat() : l.grads().flat());
      }
      run_kernel(*g.sync, "SumBuffers", parts, {g.sum.flat()});
      sums.push_back(g.sum.flat());
    }
    if (all_reduce_)
      all_reduce_->sum(sums, opt_.algorithm == Algorithm::Sma ? "the sum of SMA corrections" : "the sum of gradients");
    for (auto& g : groups_) {
      if (opt_.algorithm == Algorithm::Sma)
        run_kernel(*g.sync, "SMACentralUpdate", {g.z.flat(), g.z_prev.flat(), g.sum.flat(), g.hyper});
      else if (opt_.clip_grad_norm > 0) {
        // The update applies sum/k: clip that average (every device clips the same sum).
        LocalUpdate c = clip_update(g.sum.flat(), 1.0f / static_cast<float>(k));
        run_kernel(*g.sync, c.op_type, c.operands, {}, c.attrs);
      }
      auto ready = g.sync->record();
      if (opt_.algorithm == Algorithm::Sma) {
        g.central_ready = ready;  // the learners' next updates wait for it
        continue;
      }
      for (size_t j : g.learners) {
        Learner& l = *learners_[j];
        l.backend().wait(ready);
        // Synchronous SGD: every replica applies the summed gradient (scaled by 1/k).
        if (opt_.optimizer.kind == OptimizerKind::SGD)
          run_kernel(l.backend(), "SGDMomentum",
                     {l.params().flat(), g.sum.flat(), l.moment1().flat(), learner_hyper_[j]});
        else
          run_kernel(l.backend(), "AdamW",
                     {l.params().flat(), g.sum.flat(), l.moment1().flat(), l.moment2().flat(), learner_hyper_[j]});
      }
    }
    // The sums are safe to overwrite next round: each sync queue then waits for its
    // learners' next records, which follow these updates on their streams.
  }
  ++rounds_;
  if (!read_loss) return NAN;
  double mean = 0;
  for (size_t j : active_) mean += learners_[j]->loss();
  return static_cast<float>(mean / static_cast<double>(k));
}

bool Trainer::make_resident(const Dataset& train) {
  // Every device keeps its own copy: its learners gather their batches there.
  resident_.clear();
  for (auto& g : groups_) {
    resident_.push_back(make_resident_dataset(train, *g.sync));
    if (!resident_.back()) {
      resident_.clear();
      return false;
    }
  }
  return true;
}

void Trainer::set_resident_order(const std::vector<int64_t>& order, const std::vector<int32_t>& augment) {
  // On each device the new order replaces the old one on its synchronisation queue once its
  // learners have gathered their last batches; they gather from it after it has arrived.
  for (size_t d = 0; d < groups_.size(); ++d) {
    Backend& q = *groups_[d].sync;
    for (size_t j : groups_[d].built) q.wait(learners_[j]->backend().record());
    resident_.at(d)->set_order(order, augment);
    auto ready = q.record();
    for (size_t j : groups_[d].built) learners_[j]->backend().wait(ready);
  }
}

float Trainer::round_resident(int64_t start, bool read_loss) {
  CBT_CHECK(!resident_.empty(), "round_resident without a resident data set");
  const int64_t b = opt_.batch_size;
  // Each learner gathers its batch on its own queue, after its last step read the previous
  // one: no learner waits for another (or for the synchronisation) to start its round.
  for (size_t i = 0; i < active_.size(); ++i) {
    Learner& l = *learners_[active_[i]];
    resident_[group_of_[active_[i]]]->gather(start + static_cast<int64_t>(i) * b, b, l.input(), l.labels(),
                                             l.backend());
  }
  return round({}, {}, read_loss);
}

void Trainer::synchronize() {
  for (auto& l : learners_) l->backend().synchronize();
  for (auto& g : groups_) g.sync->synchronize();
}

size_t Trainer::bytes_per_learner() {
  Learner& l = *learners_.at(0);
  size_t bytes = l.program().plan().arena_bytes + workspace_bytes_per_learner();
  for (const FlatBuffer* b : {&l.params(), &l.grads(), &l.moment1(), &l.moment2(), &l.buffers(), &l.correction()})
    if (b->flat().defined()) bytes += b->flat().nbytes();
  return bytes;
}

void Trainer::sync_central_from_replica() {
  // Under synchronous SGD every replica is the model: z mirrors learner 0 on demand.
  if (opt_.algorithm != Algorithm::Ssgd) return;
  primary().wait(learners_[0]->backend().record());
  primary().copy(groups_[0].z.flat(), learners_[0]->params().flat());
}

void Trainer::refresh_central_buffers() {
  sync_central_from_replica();
  if (buffer_layout_.entries.empty()) return;
  // BatchNorm statistics of z: the mean over all learners of all devices and processes.
  Attributes a;
  a.set("scale", 1.0f / static_cast<float>(total_learners_));
  std::vector<Tensor> means;
  for (auto& g : groups_) {
    std::vector<Tensor> bufs;
    for (size_t j : g.learners) {
      g.sync->wait(learners_[j]->backend().record());
      bufs.push_back(learners_[j]->buffers().flat());
    }
    run_kernel(*g.sync, "SumBuffers", bufs, {g.z_buffers.flat()}, a);
    means.push_back(g.z_buffers.flat());
  }
  if (all_reduce_) all_reduce_->sum(means, "the mean of BatchNorm statistics");
}

void Trainer::restart_from_central() {
  refresh_central_buffers();
  for (auto& g : groups_) {
    auto ready = g.sync->record();
    for (size_t j : g.learners) {
      Learner& l = *learners_[j];
      l.backend().wait(ready);
      l.backend().copy(l.params().flat(), g.z.flat());
      if (!buffer_layout_.entries.empty()) l.backend().copy(l.buffers().flat(), g.z_buffers.flat());
    }
  }
}

double Trainer::replica_spread() {
  if (opt_.algorithm != Algorithm::Sma) return 0;
  synchronize();
  Tensor z = primary().download(groups_[0].z.flat());
  const float* zp = z.ptr<float>();
  const int64_t n = z.numel();
  double zz = 0;
  for (int64_t i = 0; i < n; ++i) zz += static_cast<double>(zp[i]) * zp[i];
  double sum = 0;
  for (size_t j : active_) {
    Learner& l = *learners_[j];
    // Every device holds the same z; a learner's replica is compared with it.
    Tensor x = l.backend().download(l.params().flat());
    const float* xp = x.ptr<float>();
    double d = 0;
    for (int64_t i = 0; i < n; ++i) d += (static_cast<double>(xp[i]) - zp[i]) * (static_cast<double>(xp[i]) - zp[i]);
    sum += d;
  }
  if (zz == 0) return 0;
  return std::sqrt(sum / static_cast<double>(active_.size()) / zz);
}

std::optional<cpu::ScopedKernelThreads> Trainer::all_cpu_threads() const {
  // Between rounds the learners' cores are idle: the forward passes on z use all of them
  // (not with --deterministic, whose reductions keep one thread).
  if (!opt_.device.is_cpu() || opt_.deterministic || active_.size() < 2) return std::nullopt;
  return std::optional<cpu::ScopedKernelThreads>(std::in_place, opt_.cpu_threads * static_cast<int>(active_.size()));
}

std::vector<Tensor> Trainer::infer(const Tensor& x_host) {
  refresh_central_buffers();
  auto threads = all_cpu_threads();
  return inferencer_->run(x_host);
}

EvalResult Trainer::evaluate(const Dataset& data) {
  refresh_central_buffers();
  auto threads = all_cpu_threads();
  EvalResult r;
  size_t pred_index = 0;
  for (size_t i = 0; i < model_.outputs.size(); ++i)
    if (model_.outputs[i].name == tg_.prediction) pred_index = i;
  const int64_t n = data.size(), per = data.sample_numel();
  // This process's share of the set: [lo, hi).
  ProcessGroup& pg = *opt_.processes;
  const int64_t lo = n * pg.rank() / pg.size(), hi = n * (pg.rank() + 1) / pg.size();
  int64_t correct = 0;
  double loss_sum = 0;
  for (int64_t start = lo; start < hi; start += opt_.eval_batch_size) {
    const int64_t b = std::min(opt_.eval_batch_size, hi - start);
    Tensor x =
        Tensor::view(DType::Float32, {b, per}, data.images.ptr<float>() + start * per, Device{}, data.images.storage());
    Tensor out = inferencer_->run(x)[pred_index];
    const int64_t classes = out.numel() / b;
    for (int64_t i = 0; i < b; ++i) {
      // Argmax, and the cross-entropy of the row's softmax (logits and probabilities give
      // the same argmax; a softmax output gives a slightly different loss scale).
      const float* row = out.ptr<float>() + i * classes;
      int64_t arg = 0;
      float mx = row[0];
      for (int64_t c = 1; c < classes; ++c)
        if (row[c] > mx) mx = row[c], arg = c;
      const int64_t label = data.labels.ptr<int64_t>()[start + i];
      correct += (arg == label);
      double zsum = 0;
      for (int64_t c = 0; c < classes; ++c) zsum += std::exp(static_cast<double>(row[c] - mx));
      if (label < classes) loss_sum += std::log(zsum) - (row[label] - mx);
    }
  }
  if (pg.size() > 1) {
    double totals[2] = {static_cast<double>(correct), loss_sum};
    pg.all_reduce_sum(totals, 2, "the evaluation totals");
    correct = static_cast<int64_t>(totals[0]);
    loss_sum = totals[1];
  }
  r.samples = n;
  r.accuracy = n ? static_cast<double>(correct) / static_cast<double>(n) : 0;
  r.loss = n ? loss_sum / static_cast<double>(n) : 0;
  return r;
}

std::map<std::string, Tensor> Trainer::trained_initializers() {
  refresh_central_buffers();
  std::map<std::string, Tensor> out;
  for (const auto& [n, v] : groups_[0].z.views()) out[n] = primary().download(v);
  for (const auto& [n, v] : groups_[0].z_buffers.views()) out[n] = primary().download(v);
  return out;
}

TrainerState Trainer::state() {
  sync_central_from_replica();
  synchronize();
  TrainerState s;
  s.rounds = rounds_;
  s.lr = opt_.optimizer.lr;
  auto add = [&](const std::string& name, Backend& b, const FlatBuffer& f) {
    if (f.flat().defined()) s.tensors.emplace_back(name, b.download(f.flat()));
  };
  for (size_t j = 0; j < learners_.size(); ++j) {
    Learner& l = *learners_[j];
    const std::string p = "learner" + std::to_string(j) + "/";
    add(p + "params", l.backend(), l.params());
    add(p + "moment1", l.backend(), l.moment1());
    add(p + "moment2", l.backend(), l.moment2());
    add(p + "buffers", l.backend(), l.buffers());
  }
  add("central/z", primary(), groups_[0].z);
  add("central/z_prev", primary(), groups_[0].z_prev);
  add("central/buffers", primary(), groups_[0].z_buffers);
  return s;
}

void Trainer::restore(const TrainerState& s) {
  std::map<std::string, const Tensor*> by_name;
  for (const auto& [n, t] : s.tensors) by_name[n] = &t;
  // Everything is checked before anything is copied: a refused state leaves the trainer as it was.
  std::vector<std::tuple<Backend*, Tensor, const Tensor*>> copies;
  auto put = [&](const std::string& name, Backend& b, const FlatBuffer& f) {
    if (!f.flat().defined()) return;
    auto it = by_name.find(name);
    if (it == by_name.end()) throw UserError("the checkpoint has no '" + name + "' for this model and configuration");
    const Tensor& t = *it->second;
    if (t.dtype() != f.flat().dtype() || t.shape() != f.flat().shape())
      throw UserError("the checkpoint's '" + name + "' is " + dtype_name(t.dtype()) + " " + shape_str(t.shape()) +
                      ", this model and configuration need " + dtype_name(f.flat().dtype()) + " " +
                      shape_str(f.flat().shape()));
    copies.emplace_back(&b, f.flat(), &t);
  };
  for (size_t j = 0; j < learners_.size(); ++j) {
    Learner& l = *learners_[j];
    const std::string p = "learner" + std::to_string(j) + "/";
    put(p + "params", l.backend(), l.params());
    put(p + "moment1", l.backend(), l.moment1());
    put(p + "moment2", l.backend(), l.moment2());
    put(p + "buffers", l.backend(), l.buffers());
  }
  put("central/z", primary(), groups_[0].z);
  put("central/z_prev", primary(), groups_[0].z_prev);
  put("central/buffers", primary(), groups_[0].z_buffers);
  if (copies.size() != by_name.size())
    throw UserError("the checkpoint holds " + std::to_string(by_name.size()) +
                    " state tensors, this model and "
                    "configuration " +
                    std::to_string(copies.size()) + " (another number of learners or optimizer?)");
  synchronize();
  for (auto& [b, dst, src] : copies) b->copy_from_host(dst, *src);
  // Every other device holds the same central model.
  for (size_t g = 1; g < groups_.size(); ++g) {
    DeviceGroup& grp = groups_[g];
    grp.sync->copy_from_host(grp.z.flat(), *by_name.at("central/z"));
    grp.sync->copy_from_host(grp.z_prev.flat(), *by_name.at("central/z_prev"));
    if (grp.z_buffers.flat().defined()) grp.sync->copy_from_host(grp.z_buffers.flat(), *by_name.at("central/buffers"));
  }
  rounds_ = s.rounds;
  opt_.optimizer.lr = s.lr;
  upload_hyper();
  synchronize();
}

std::map<std::string, Tensor> Trainer::replica_parameters(int j) {
  Learner& l = *learners_.at(static_cast<size_t>(j));
  std::map<std::string, Tensor> out;
  for (const auto& [n, v] : l.params().views()) out[n] = l.backend().download(v);
  return out;
}

std::map<std::string, Tensor> Trainer::central_parameters() {
  sync_central_from_replica();
  std::map<std::string, Tensor> out;
  for (const auto& [n, v] : groups_[0].z.views()) out[n] = primary().download(v);
  return out;
}

}  // namespace cbt
