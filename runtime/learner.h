// One learner: a model replica with its own backend queue (a CUDA stream, or a CPU thread),
// its training program (forward, loss, backward) and flat buffers for parameters, gradients,
// optimizer state, BatchNorm statistics and its SMA correction.
#pragma once
#include <memory>

#include "graph/autodiff.h"
#include "runtime/flat_buffer.h"
#include "runtime/program.h"

namespace cbt {

// An update kernel over flat buffers (cbtrain domain) appended to the learner's program.
struct LocalUpdate {
  std::string op_type;           // "" for none
  std::vector<Tensor> operands;  // device tensors, in the kernel's input order
  Attributes attrs = {};
};

class Learner {
 public:
  // `use_graph`: replay the training program as a CUDA graph on GPUs (see ProgramSpec).
  Learner(const TrainingGraph& tg, const FlatLayout& params, const FlatLayout& buffers, bool second_moment,
          std::unique_ptr<Backend> backend, bool use_graph = true);

  // Builds the training program and, as a second program, the `updates` (e.g. clipping, then
  // the optimizer step) in order. Call once, after construction (the updates' operands are this
  // learner's buffers).
  void build_program(const std::vector<LocalUpdate>& updates);
  // Uploads a host batch (x: the model input, y: the labels) on this learner's queue.
  void set_batch(const Tensor& x_host, const Tensor& y_host);
  // Forward, loss and backward (filling grads()).
  void run_gradient(uint64_t seed);
  // The local updates given to build_program, if any (queued after run_gradient's work).
  void run_update();
  // Loss of the last run (waits for this learner's queue).
  float loss();

  Backend& backend() { return *backend_; }
  const Tensor& input() const { return x_; }
  const Tensor& labels() const { return y_; }
  const FlatBuffer& params() const { return params_; }
  const FlatBuffer& grads() const { return grads_; }
  const FlatBuffer& moment1() const { return moment1_; }
  const FlatBuffer& moment2() const { return moment2_; }
  const FlatBuffer& buffers() const { return buffers_; }
  const FlatBuffer& correction() const { return correction_; }
  const Program& program() const { return *program_; }

 private:
  std::unique_ptr<Backend> backend_;
  const TrainingGraph& tg_;
  bool use_graph_;
  FlatBuffer params_, grads_, moment1_, moment2_, buffers_, correction_;
  Tensor x_, y_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<Program> update_;  // null when there are no local updates
};

// Runs one kernel on a backend's queue with flat-buffer operands (updates, reductions).
void run_kernel(Backend& backend, const std::string& op_type, std::vector<Tensor> inputs,
                std::vector<Tensor> outputs = {}, Attributes attrs = {});

}  // namespace cbt
