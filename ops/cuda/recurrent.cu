// LSTM, GRU and RNN over cuDNN's recurrent networks, for the forms RecurrentForm::fused names
// (graph/recurrent.h): one call runs the whole sequence in both directions. ONNX's W, R and B
// are gathered into cuDNN's weight space each call (the learners' parameters change every step)
// through an index map made once per node; RecurrentGrad runs the forward pass again in
// training mode (its reserve space lives only for the call), then cuDNN's backward data and
// weights, and scatters the weight-space gradient back into dW, dR and dB.
#include "graph/recurrent.h"

#include <cudnn.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ops/cuda/common.cuh"
#include "ops/cuda/cudnn_util.h"

namespace cbt::cuda {
namespace {

using RnnDesc = CudnnDescriptor<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using RnnDataDesc =
    CudnnDescriptor<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;
using DropoutDesc =
    CudnnDescriptor<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;

// Device memory owned by a plan.
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  template <class T>
  void upload(const std::vector<T>& v) {
    CBT_CUDA_CHECK(cudaMalloc(&p, v.size() * sizeof(T) + 1));
    CBT_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

// Per node: cuDNN's descriptors and sizes for the bound shapes, and the index maps between
// ONNX's W | R | B (concatenated) and cuDNN's weight space.
struct RnnPlan {
  RecurrentForm f;
  cudnnRNNAlgo_t algo = CUDNN_RNN_ALGO_STANDARD;
  bool proven = false;  // a call with this plan has run
  // A forward node's plan in a training program: it runs cuDNN's training mode and keeps the
  // weight space, the output in cuDNN's layout and the reserve space for RecurrentGrad, which
  // shares the plan (kStateOfAttr) and so need not run the forward pass again.
  bool training = false;
  bool kept = false;  // a training forward has filled the kept buffers
  DeviceBuffer kept_weights, kept_y, kept_reserve;
  // A dropout of 0 with its states made once: without one, cuDNN makes its own in every call
  // (allocations that a CUDA graph cannot capture).
  DeviceBuffer dropout_states;
  DropoutDesc dropout;
  RnnDesc rnn;
  RnnDataDesc x, y;
  TensorDesc h;  // (dirs, N, H): the initial and final states
  size_t weight_bytes = 0, work_inference = 0, work_training = 0, reserve = 0;
  int64_t weight_floats = 0, n_w = 0, n_r = 0, n_b = 0;
  DeviceBuffer seq_lengths;  // int32 (N): every sequence full
  DeviceBuffer source;       // int32 (weight_floats): index into W | R | B, or -1 (zero)
  DeviceBuffer target;       // int32 (n_w + n_r + n_b): where each ONNX value sits in the weight space
};

// ONNX's gate of cuDNN's linear layer id (modulo the gates): LSTM i f c o -> i o f c,
// GRU r z h -> z r h.
int64_t onnx_gate(RecurrentKind kind, int64_t id) {
  static const int64_t lstm[] = {0, 2, 3, 1}, gru[] = {1, 0, 2};
  return kind == RecurrentKind::Lstm ? lstm[id] : kind == RecurrentKind::Gru ? gru[id] : 0;
}

std::shared_ptr<RnnPlan> make_plan(const CudaContext& cc, const RecurrentForm& f, cudnnRNNAlgo_t algo, bool training) {
  auto p = std::make_shared<RnnPlan>();
  p->f = f;
  p->algo = algo;
  p->training = training;
  const int64_t H = f.hidden, I = f.input, g = f.gates, gh = g * H;
  const cudnnRNNMode_t mode = f.kind == RecurrentKind::Lstm  ? CUDNN_LSTM
                              : f.kind == RecurrentKind::Gru ? CUDNN_GRU
                              : f.activations[0] == "Relu"   ? CUDNN_RNN_RELU
                                                             : CUDNN_RNN_TANH;
  cudnnHandle_t handle = cudnn_on_stream(cc);
  size_t state_bytes = 0;
  CBT_CUDNN_CHECK(cudnnDropoutGetStatesSize(handle, &state_bytes));
  CBT_CUDA_CHECK(cudaMalloc(&p->dropout_states.p, state_bytes + 1));
  CBT_CUDNN_CHECK(cudnnSetDropoutDescriptor(p->dropout, handle, 0.0f, p->dropout_states.p, state_bytes, 0));
  CBT_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
      p->rnn, algo, mode, CUDNN_RNN_DOUBLE_BIAS, f.dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
      CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, cc.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH,
      cudnn_dim(I), cudnn_dim(H), cudnn_dim(H), 1, nullptr, CUDNN_RNN_PADDED_IO_DISABLED));
  // Every sequence is full, so the packed layout is the (T, N, features) tensor itself.
  const std::vector<int> lengths(static_cast<size_t>(f.batch), cudnn_dim(f.steps));
  CBT_CUDNN_CHECK(cudnnSetRNNDataDescriptor(p->x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                            cudnn_dim(f.steps), cudnn_dim(f.batch), cudnn_dim(I), lengths.data(),
                                            nullptr));
  CBT_CUDNN_CHECK(cudnnSetRNNDataDescriptor(p->y, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                            cudnn_dim(f.steps), cudnn_dim(f.batch), cudnn_dim(f.dirs * H),
                                            lengths.data(), nullptr));
  const int dims[3] = {cudnn_dim(f.dirs), cudnn_dim(f.batch), cudnn_dim(H)};
  const int strides[3] = {dims[1] * dims[2], dims[2], 1};
  CBT_CUDNN_CHECK(cudnnSetTensorNdDescriptor(p->h, CUDNN_DATA_FLOAT, 3, dims, strides));
  CBT_CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle, p->rnn, &p->weight_bytes));
  size_t unused = 0;
  CBT_CUDNN_CHECK(
      cudnnGetRNNTempSpaceSizes(handle, p->rnn, CUDNN_FWD_MODE_INFERENCE, p->x, &p->work_inference, &unused));
  CBT_CUDNN_CHECK(
      cudnnGetRNNTempSpaceSizes(handle, p->rnn, CUDNN_FWD_MODE_TRAINING, p->x, &p->work_training, &p->reserve));
  p->seq_lengths.upload(lengths);
  if (training) {
    CBT_CUDA_CHECK(cudaMalloc(&p->kept_weights.p, p->weight_bytes));
    CBT_CUDA_CHECK(cudaMalloc(&p->kept_y.p, f.steps * f.batch * f.dirs * H * sizeof(float)));
    CBT_CUDA_CHECK(cudaMalloc(&p->kept_reserve.p, p->reserve + 1));
  }

  // The index maps, from where cuDNN puts each matrix and bias of each direction.
  p->weight_floats = static_cast<int64_t>(p->weight_bytes / sizeof(float));
  p->n_w = f.dirs * gh * I, p->n_r = f.dirs * gh * H, p->n_b = f.dirs * 2 * gh;
  std::vector<int32_t> source(static_cast<size_t>(p->weight_floats), -1);
  DeviceBuffer probe;  // cuDNN answers addresses inside a weight space it is given
  CBT_CUDA_CHECK(cudaMalloc(&probe.p, p->weight_bytes));
  const auto* base = static_cast<const float*>(probe.p);
  for (int64_t d = 0; d < f.dirs; ++d)
    for (int64_t id = 0; id < 2 * g; ++id) {
      TensorDesc m, b;
      void *m_addr = nullptr, *b_addr = nullptr;
      CBT_CUDNN_CHECK(cudnnGetRNNWeightParams(handle, p->rnn, static_cast<int32_t>(d), p->weight_bytes, probe.p,
                                              static_cast<int32_t>(id), m, &m_addr, b, &b_addr));
      const bool recurrent = id >= g;
      const int64_t gate = onnx_gate(f.kind, id % g), cols = recurrent ? H : I;
      cudnnDataType_t type;
      int nd = 0, md[3] = {0, 0, 0}, ms[3] = {0, 0, 0};
      CBT_CUDNN_CHECK(cudnnGetTensorNdDescriptor(m, 3, &type, &nd, md, ms));
      CBT_CHECK(nd == 3 && md[1] == H && md[2] == cols, "cuDNN's recurrent weight matrix has an unexpected shape");
      const int64_t m_off = static_cast<const float*>(m_addr) - base, b_off = static_cast<const float*>(b_addr) - base;
      const int64_t row0 = d * gh + gate * H;
      for (int64_t r = 0; r < H; ++r) {
        for (int64_t c = 0; c < cols; ++c)
          source[m_off + r * ms[1] + c * ms[2]] =
              static_cast<int32_t>(recurrent ? p->n_w + (row0 + r) * H + c : (row0 + r) * I + c);
        source[b_off + r] = static_cast<int32_t>(p->n_w + p->n_r + d * 2 * gh + (recurrent ? gh : 0) + gate * H + r);
      }
    }
  std::vector<int32_t> target(static_cast<size_t>(p->n_w + p->n_r + p->n_b), -1);
  for (int64_t j = 0; j < p->weight_floats; ++j)
    if (source[j] >= 0) target[source[j]] = static_cast<int32_t>(j);
  for (int32_t t : target) CBT_CHECK(t >= 0, "cuDNN's recurrent weight space misses an ONNX weight");
  p->source.upload(source);
  p->target.upload(target);
  return p;
}

// cuDNN's weight space from ONNX's W, R and B (B may be absent: zeros).
__global__ void gather_weights(float* ws, const int32_t* source, int64_t n, const float* w, const float* r,
                               const float* b, int64_t n_w, int64_t n_r) {
  CBT_GRID_STRIDE_LOOP(j, n) {
    const int32_t s = source[j];
    ws[j] = s < 0 ? 0.0f : s < n_w ? w[s] : s < n_w + n_r ? r[s - n_w] : b ? b[s - n_w - n_r] : 0.0f;
  }
}

// dW, dR, dB from the weight space's gradient.
__global__ void scatter_grads(const float* dws, const int32_t* target, int64_t n_w, int64_t n_r, int64_t n_b, float* dw,
                              float* dr, float* db) {
  CBT_GRID_STRIDE_LOOP(i, n_w + n_r + n_b) {
    const float v = dws[target[i]];
    if (i < n_w)
      dw[i] = v;
    else if (i < n_w + n_r)
      dr[i - n_w] = v;
    else
      db[i - n_w - n_r] = v;
  }
}

// (T, A, C, H) -> (T, C, A, H): cuDNN's (T, N, dirs, H) outputs and ONNX's (T, dirs, N, H).
__global__ void swap_middle(const float* src, float* dst, int64_t T, int64_t A, int64_t C, int64_t H) {
  CBT_GRID_STRIDE_LOOP(i, T * A * C * H) {
    const int64_t h = i % H, c = i / H % C, a = i / (H * C) % A, t = i / (H * C * A);
    dst[((t * C + c) * A + a) * H + h] = src[i];
  }
}

void swap_dirs(const CudaContext& cc, const float* src, float* dst, const RecurrentForm& f, bool to_onnx) {
  const int64_t n = f.steps * f.batch * f.dirs * f.hidden;
  if (to_onnx)
    swap_middle<<<blocks_for(n), kThreads, 0, cc.stream>>>(src, dst, f.steps, f.batch, f.dirs, f.hidden);
  else
    swap_middle<<<blocks_for(n), kThreads, 0, cc.stream>>>(src, dst, f.steps, f.dirs, f.batch, f.hidden);
  CBT_CUDA_CHECK(cudaGetLastError());
}

// The form of a forward node (its sequence_lens, a device tensor here, were checked when the
// graph was bound) or of RecurrentGrad's forward (its attribute "cell", inputs 0-5).
RecurrentForm form_of(const KernelContext& ctx, bool grad) {
  Node fwd = ctx.node;
  std::vector<const Tensor*> in;
  if (grad) {
    fwd.op_type = ctx.node.attrs.get_string("cell", "");
    fwd.attrs.erase("cell");
    fwd.attrs.erase(kStateOfAttr);
    fwd.inputs = {"X", "W", "R", ctx.has_in(3) ? "B" : "", "", ctx.has_in(4) ? "h0" : "", ctx.has_in(5) ? "c0" : ""};
    fwd.outputs = {"Y"};
    in = {&ctx.in(0),
          &ctx.in(1),
          &ctx.in(2),
          ctx.has_in(3) ? &ctx.in(3) : nullptr,
          nullptr,
          ctx.has_in(4) ? &ctx.in(4) : nullptr,
          ctx.has_in(5) ? &ctx.in(5) : nullptr};
  } else {
    if (fwd.inputs.size() > 4) fwd.inputs[4] = "";
    for (size_t i = 0; i < fwd.inputs.size(); ++i) in.push_back(ctx.has_in(i) ? &ctx.in(i) : nullptr);
  }
  std::vector<ValueType> types;
  for (const Tensor* t : in) types.push_back(t ? ValueType{t->dtype(), t->shape()} : ValueType{});
  RecurrentForm f = read_recurrent_form(
      fwd, [&types](size_t i) { return i < types.size() && types[i].defined() ? &types[i] : nullptr; },
      [](size_t) -> const Tensor* { return nullptr; });
  CBT_CHECK(f.fused(), "node ", ctx.node.describe(), " is not a form that cuDNN's recurrent networks compute");
  return f;
}

// cuDNN's persistent kernels for small hidden sizes (one launch runs every step; the standard
// algorithm launches a matrix product and a cell kernel per step, 8x slower for SeqNet), where
// their limits allow (PyTorch's: a hidden size up to 192 for LSTM and GRU, 384 for RNN forward;
// 128 and 256 for the backward pass).
cudnnRNNAlgo_t preferred_algo(const RecurrentForm& f, bool grad) {
  const bool gated = f.kind != RecurrentKind::Rnn;
  const int64_t limit = grad ? (gated ? 128 : 256) : (gated ? 192 : 384);
  return f.hidden <= limit ? CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H : CUDNN_RNN_ALGO_STANDARD;
}

// CBT_LOG_RNN=1: each node's cuDNN algorithm and the refusals that changed it.
void log_rnn(const KernelContext& ctx, const char* what, const RnnPlan* p, const std::string& why = "") {
  static const bool on = std::getenv("CBT_LOG_RNN") != nullptr;
  if (!on) return;
  std::fprintf(stderr, "cbtrain: %s %s: %s%s", ctx.node.describe().c_str(), what,
               p && p->algo == CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H ? "persistent (small hidden size)" : "standard",
               why.c_str());
  if (p)
    std::fprintf(stderr, "%s, workspace %zu, reserve %zu bytes", p->training ? " in training mode" : "",
                 p->work_training, p->reserve);
  std::fprintf(stderr, "\n");
}

// The persistent algorithm refused (`when`, by `e`): the standard algorithm's plan, logged.
std::shared_ptr<RnnPlan> standard_plan(const KernelContext& ctx, const CudaContext& cc, const RecurrentForm& f,
                                       bool training, const char* when, const InternalError& e) {
  log_rnn(ctx, when, nullptr, std::string(" (") + e.what() + ")");
  return make_plan(cc, f, CUDNN_RNN_ALGO_STANDARD, training);
}

std::shared_ptr<RnnPlan> plan_of(KernelContext& ctx, const CudaContext& cc, bool grad) {
  if (ctx.state && *ctx.state) return std::static_pointer_cast<RnnPlan>(*ctx.state);
  const RecurrentForm f = form_of(ctx, grad);
  std::shared_ptr<RnnPlan> plan;
  // A training forward's plan serves its backward too: the backward's algorithm.
  const bool training = !grad && ctx.training;
  const cudnnRNNAlgo_t algo = preferred_algo(f, grad || training);
  try {
    plan = make_plan(cc, f, algo, training);
  } catch (const InternalError& e) {
    if (algo == CUDNN_RNN_ALGO_STANDARD) throw;
    plan = standard_plan(ctx, cc, f, training, "refused the persistent algorithm", e);
  }
  log_rnn(ctx, "runs", plan.get());
  if (ctx.state) *ctx.state = plan;
  return plan;
}

// Runs `body` with the node's plan; a persistent plan that cuDNN refuses on its first call is
// replaced by the standard algorithm's (the first call is never inside a CUDA graph capture).
template <class Body>
void with_plan(KernelContext& ctx, const CudaContext& cc, bool grad, Body body) {
  // (RecurrentGrad finds its forward's plan where they share the cache.)
  std::shared_ptr<RnnPlan> plan = plan_of(ctx, cc, grad);
  try {
    body(*plan);
  } catch (const InternalError& e) {
    if (plan->proven || plan->algo == CUDNN_RNN_ALGO_STANDARD) throw;
    plan = standard_plan(ctx, cc, plan->f, plan->training, "refused the persistent algorithm at its first call", e);
    if (ctx.state) *ctx.state = plan;
    body(*plan);
  }
  plan->proven = true;
}

const float* f32_or_null(const KernelContext& ctx, size_t i) {
  return ctx.has_in(i) ? ctx.in(i).ptr<float>() : nullptr;
}

// Fills `ws` from inputs W (1), R (2) and B (3) of the node.
void fill_weights(const KernelContext& ctx, const CudaContext& cc, const RnnPlan& p, float* ws) {
  gather_weights<<<blocks_for(p.weight_floats), kThreads, 0, cc.stream>>>(
      ws, p.source.as<int32_t>(), p.weight_floats, ctx.in(1).ptr<float>(), ctx.in(2).ptr<float>(), f32_or_null(ctx, 3),
      p.n_w, p.n_r);
  CBT_CUDA_CHECK(cudaGetLastError());
}

void forward_with(KernelContext& ctx, const CudaContext& cc, RnnPlan& p);
void backward_with(KernelContext& ctx, const CudaContext& cc, const RnnPlan& p);

// X, W, R, B?, sequence_lens?, initial_h?, initial_c? -> Y, Y_h, Y_c (each may be unwanted).
void recurrent_forward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  with_plan(ctx, cc, false, [&](RnnPlan& p) { forward_with(ctx, cc, p); });
}

void forward_with(KernelContext& ctx, const CudaContext& cc, RnnPlan& p) {
  const RecurrentForm& f = p.f;
  Scratch s(cc);
  float* ws = p.training ? p.kept_weights.as<float>() : s.take<float>(p.weight_floats, "recurrent weights");
  fill_weights(ctx, cc, p, ws);
  const int64_t y_n = f.steps * f.batch * f.dirs * f.hidden, state_n = f.dirs * f.batch * f.hidden;
  // (T, 1, N, H) is cuDNN's (T, N, H); a training forward keeps its own copy.
  const bool direct_y = ctx.has_out(0) && f.dirs == 1 && !p.training;
  float* y = p.training ? p.kept_y.as<float>()
             : direct_y ? ctx.out(0).ptr<float>()
                        : s.take<float>(y_n, "recurrent output");
  float* hy = ctx.has_out(1) ? ctx.out(1).ptr<float>() : s.take<float>(state_n, "final hidden state");
  float* cy = f.kind != RecurrentKind::Lstm ? nullptr
              : ctx.has_out(2)              ? ctx.out(2).ptr<float>()
                                            : s.take<float>(state_n, "final cell state");
  const size_t work_bytes = p.training ? p.work_training : p.work_inference;
  void* work = s.rest(work_bytes, "cuDNN recurrent workspace");
  CBT_CUDNN_CHECK(cudnnRNNForward(cudnn_on_stream(cc), p.rnn,
                                  p.training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                                  p.seq_lengths.as<int32_t>(), p.x, ctx.in(0).ptr<float>(), p.y, y, p.h,
                                  f32_or_null(ctx, 5), hy, p.h, f32_or_null(ctx, 6), cy, p.weight_bytes, ws, work_bytes,
                                  work, p.training ? p.reserve : 0, p.training ? p.kept_reserve.p : nullptr));
  if (ctx.has_out(0) && f.dirs == 2)
    swap_dirs(cc, y, ctx.out(0).ptr<float>(), f, true);
  else if (ctx.has_out(0) && !direct_y)
    CBT_CUDA_CHECK(cudaMemcpyAsync(ctx.out(0).data(), y, y_n * sizeof(float), cudaMemcpyDeviceToDevice, cc.stream));
  p.kept = p.training;
}

// X, W, R, B?, initial_h?, initial_c?, dY?, dY_h?, dY_c? -> dX, dW, dR, dB, d_initial_h,
// d_initial_c.
void recurrent_backward(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  with_plan(ctx, cc, true, [&](const RnnPlan& p) { backward_with(ctx, cc, p); });
}

void backward_with(KernelContext& ctx, const CudaContext& cc, const RnnPlan& p) {
  const RecurrentForm& f = p.f;
  cudnnHandle_t handle = cudnn_on_stream(cc);
  Scratch s(cc);
  // With its forward's kept weights, output and reserve, or (a RecurrentGrad alone) running the
  // forward pass again in training mode.
  const bool again = !p.kept;
  float* ws = again ? s.take<float>(p.weight_floats, "recurrent weights") : p.kept_weights.as<float>();
  float* dws = s.take<float>(p.weight_floats, "recurrent weight gradients");
  if (again) fill_weights(ctx, cc, p, ws);
  CBT_CUDA_CHECK(cudaMemsetAsync(dws, 0, p.weight_bytes, cc.stream));
  const int64_t y_n = f.steps * f.batch * f.dirs * f.hidden, state_n = f.dirs * f.batch * f.hidden;
  float* y = again ? s.take<float>(y_n, "recurrent output") : p.kept_y.as<float>();
  float* dy = s.take<float>(y_n, "recurrent output gradient");
  void* reserve =
      again ? s.take<std::byte>(static_cast<int64_t>(p.reserve), "cuDNN recurrent reserve") : p.kept_reserve.p;
  if (!ctx.has_in(6))
    CBT_CUDA_CHECK(cudaMemsetAsync(dy, 0, y_n * sizeof(float), cc.stream));
  else if (f.dirs == 1)
    CBT_CUDA_CHECK(
        cudaMemcpyAsync(dy, ctx.in(6).ptr<float>(), y_n * sizeof(float), cudaMemcpyDeviceToDevice, cc.stream));
  else
    swap_dirs(cc, ctx.in(6).ptr<float>(), dy, f, false);
  const float* x = ctx.in(0).ptr<float>();
  const float *hx = f32_or_null(ctx, 4), *cx = f32_or_null(ctx, 5);
  if (again) {
    float* hy = s.take<float>(state_n, "final hidden state");
    float* cy = f.kind == RecurrentKind::Lstm ? s.take<float>(state_n, "final cell state") : nullptr;
    void* work = s.rest(p.work_training, "cuDNN recurrent workspace");
    CBT_CUDNN_CHECK(cudnnRNNForward(handle, p.rnn, CUDNN_FWD_MODE_TRAINING, p.seq_lengths.as<int32_t>(), p.x, x, p.y, y,
                                    p.h, hx, hy, p.h, cx, cy, p.weight_bytes, ws, p.work_training, work, p.reserve,
                                    reserve));
  }
  void* work = s.rest(p.work_training, "cuDNN recurrent workspace");
  // The gradients of absent inputs (no initial state, no bias) are 0, as on the CPU.
  float* dhx = hx && ctx.has_out(4) ? ctx.out(4).ptr<float>() : nullptr;
  float* dcx = cx && ctx.has_out(5) ? ctx.out(5).ptr<float>() : nullptr;
  CBT_CUDNN_CHECK(cudnnRNNBackwardData_v8(handle, p.rnn, p.seq_lengths.as<int32_t>(), p.y, y, dy, p.x,
                                          ctx.out(0).ptr<float>(), p.h, hx, f32_or_null(ctx, 7), dhx, p.h, cx,
                                          f32_or_null(ctx, 8), dcx, p.weight_bytes, ws, p.work_training, work,
                                          p.reserve, reserve));
  CBT_CUDNN_CHECK(cudnnRNNBackwardWeights_v8(handle, p.rnn, CUDNN_WGRAD_MODE_ADD, p.seq_lengths.as<int32_t>(), p.x, x,
                                             p.h, hx, p.y, y, p.weight_bytes, dws, p.work_training, work, p.reserve,
                                             reserve));
  scatter_grads<<<blocks_for(p.n_w + p.n_r + p.n_b), kThreads, 0, cc.stream>>>(
      dws, p.target.as<int32_t>(), p.n_w, p.n_r, p.n_b, ctx.out(1).ptr<float>(), ctx.out(2).ptr<float>(),
      ctx.out(3).ptr<float>());
  CBT_CUDA_CHECK(cudaGetLastError());
  for (size_t k : {size_t{3}, size_t{4}, size_t{5}})
    if (ctx.has_out(k) && !ctx.has_in(k))
      CBT_CUDA_CHECK(cudaMemsetAsync(ctx.out(k).data(), 0, ctx.out(k).nbytes(), cc.stream));
}

}  // namespace

CBT_REGISTER_KERNEL("", "LSTM", DeviceKind::CUDA, recurrent_forward);
CBT_REGISTER_KERNEL("", "GRU", DeviceKind::CUDA, recurrent_forward);
CBT_REGISTER_KERNEL("", "RNN", DeviceKind::CUDA, recurrent_forward);
CBT_REGISTER_KERNEL(kCbtDomain, "RecurrentGrad", DeviceKind::CUDA, recurrent_backward);

}  // namespace cbt::cuda
