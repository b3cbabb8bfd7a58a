// The CUDA backend as the runtime uses it: memory and copies, the device-resident data set,
// and whole training runs that must match the CPU step by step.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "common/gpu.h"
#include "common/op_harness.h"
#include "common/paths.h"
#include "common/tiny_dataset.h"
#include "onnx_import/model_io.h"
#include "ops/cuda/algo_choice.h"
#include "ops/cuda/batch_norm.h"
#include "ops/cuda/conv_choices.h"
#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/workspace.h"
#include "runtime/autotune.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_raii.h"
#include "runtime/cuda/device_dataset.h"
#include "runtime/npy.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

constexpr Device kGpu{DeviceKind::CUDA, 0};
using test::same_bytes;

bool all_zero(const Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i)
    if (p[i]) return false;
  return true;
}

// One round's input of `learners` learners: random images (batch, per) and labels of 10 classes.
struct RoundInput {
  std::vector<Tensor> x, y;
};
RoundInput random_round(int learners, int64_t batch, int64_t per, std::mt19937_64& rng) {
  RoundInput in;
  for (int j = 0; j < learners; ++j) {
    in.x.push_back(test::random_tensor(DType::Float32, {batch, per}, rng()));
    in.y.push_back(test::random_int_tensor({batch}, 0, 10, rng()));
  }
  return in;
}

TEST(GpuRuntime, MemoryRoundTrip) {
  CBT_SKIP_WITHOUT_GPU();
  auto b = make_backend(kGpu);
  // Empty, tiny, odd, and larger than one pinned staging slot (direct pageable copy).
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1001}, int64_t{3} << 20}) {
    Tensor h = test::random_int_tensor({n}, -1000, 1000, 9);
    Tensor f = test::random_tensor(DType::Float32, {n}, 10);
    for (const Tensor& host : {h, f}) {
      Tensor d = b->upload(host);
      EXPECT_EQ(d.device(), kGpu);
      Tensor d2 = b->empty(host.dtype(), host.shape());
      b->copy(d2, d);
      EXPECT_TRUE(same_bytes(b->download(d2), host)) << dtype_name(host.dtype()) << " n=" << n;
    }
  }
}

TEST(GpuRuntime, StagedUploadsInARowKeepTheirOwnData) {
  CBT_SKIP_WITHOUT_GPU();
  auto b = make_backend(kGpu);
  // More uploads than staging slots, nothing read back in between.
  std::vector<Tensor> host, dev;
  for (int i = 0; i < 11; ++i) {
    host.push_back(test::random_tensor(DType::Float32, {4097}, 100 + i));
    dev.push_back(b->upload(host.back()));
  }
  for (int i = 0; i < 11; ++i) EXPECT_TRUE(same_bytes(b->download(dev[i]), host[i])) << i;
}

TEST(GpuRuntime, StagingSlotsGrowToTheUploadsTheyHold) {
  CBT_SKIP_WITHOUT_GPU();
  auto b = make_backend(kGpu);
  // Each slot starts empty and grows (64 KiB, doubling, up to 8 MiB) while the other slots'
  // copies may still be running: sizes that make every slot grow several times, up to exactly
  // one full slot, then small ones again; nothing read back in between.
  const int64_t sizes[] = {10, 16385, 3, 300001, 16384, 1 << 21, 77, 1 << 19, 1 << 21, 5000, 123457, 1};
  std::vector<Tensor> host, dev;
  uint64_t seed = 200;
  for (int rep = 0; rep < 2; ++rep)
    for (int64_t n : sizes) {
      host.push_back(test::random_tensor(DType::Float32, {n}, seed++));
      dev.push_back(b->upload(host.back()));
    }
  for (size_t i = 0; i < host.size(); ++i)
    EXPECT_TRUE(same_bytes(b->download(dev[i]), host[i])) << "upload " << i << " of " << host[i].numel() << " floats";
}

TEST(GpuRuntime, DeviceWarmUpLeavesAMissingDeviceToTheBackend) {
  // Runs without a GPU too: the warm-up must neither throw nor hide the backend's message.
  { DeviceWarmUp warm_up({1000}); }
  EXPECT_THROW(make_backend(Device{DeviceKind::CUDA, 1000}), UserError);
  { DeviceWarmUp nothing({}); }
  if (!test::gpu_available()) GTEST_SKIP() << "no CUDA device: the warm-up of a real GPU is not run";
  {
    DeviceWarmUp warm_up({0});
    auto b = make_backend(kGpu);  // while the thread may still be making the context
    Tensor h = test::random_tensor(DType::Float32, {999}, 7);
    EXPECT_TRUE(same_bytes(b->download(b->upload(h)), h));
  }
}

TEST(GpuRuntime, AllocationsAreZeroedAlsoWhenReused) {
  CBT_SKIP_WITHOUT_GPU();
  auto b = make_backend(kGpu);
  for (int round = 0; round < 3; ++round) {
    Tensor t = b->empty(DType::Float32, {5000});
    EXPECT_TRUE(all_zero(b->download(t))) << "round " << round;
    b->copy_from_host(t, test::random_tensor(DType::Float32, {5000}, round + 1));
    // Through graph/tensor.h's allocator too.
    Tensor u(DType::Int64, {777}, kGpu);
    EXPECT_TRUE(all_zero(b->download(u))) << "round " << round;
    b->copy_from_host(u, test::random_int_tensor({777}, 1, 9, round + 1));
    b->synchronize();
  }  // t and u go back to the pool and come out again in the next round
}

TEST(GpuRuntime, MissingDeviceIsAUserError) {
  // Runs without a GPU too: that is the case the message is for.
  try {
    make_backend(Device{DeviceKind::CUDA, 1000});
    FAIL() << "cuda:1000 was accepted";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("cuda:1000"), std::string::npos) << msg;
    if (test::gpu_available()) EXPECT_NE(msg.find("CUDA device(s) are visible"), std::string::npos) << msg;
  }
}

TEST(GpuRuntime, Tf32NeedsACudaBackend) {
  CpuBackend cpu;
  EXPECT_THROW(set_tf32(cpu, true), UserError);
  EXPECT_NO_THROW(set_tf32(cpu, false));
}

TEST(GpuRuntime, DeviceDatasetGatherEqualsCpuGather) {
  CBT_SKIP_WITHOUT_GPU();
  Dataset d;
  d.images = test::random_tensor(DType::Float32, {37, 1, 5, 7}, 3);
  d.labels = test::random_int_tensor({37}, 0, 10, 4);
  d.num_classes = 10;
  CudaBackend b(0);
  DeviceDataset dd(b);
  dd.upload(d);
  ASSERT_EQ(dd.size(), 37);
  ASSERT_EQ(dd.sample_numel(), 35);
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    std::vector<int64_t> order = epoch_order(d.size(), 5, epoch);
    dd.upload_order(order);
    // Full batches of 8, then the 5 left over.
    for (int64_t start = 0; start < d.size(); start += 8) {
      int64_t count = std::min<int64_t>(8, d.size() - start);
      Tensor xh(DType::Float32, {count, 1, 5, 7}), yh(DType::Int64, {count});
      gather_batch(d, order.data() + start, count, xh, yh);
      Tensor xd = b.empty(DType::Float32, {count, 1, 5, 7}), yd = b.empty(DType::Int64, {count});
      dd.gather(dd.order(start), count, xd, yd);
      EXPECT_TRUE(same_bytes(b.download(xd), xh)) << "epoch " << epoch << " start " << start;
      EXPECT_TRUE(same_bytes(b.download(yd), yh)) << "epoch " << epoch << " start " << start;
    }
  }
  EXPECT_THROW(dd.upload_order({0, 37}), InternalError);
}

struct TrajectoryCase {
  const char* folder;
  const char* onnx;
  int64_t steps;
};

// Losses of `rounds` rounds on the recorded batches of models/<folder>/trajectory.*.npy
// (learner j of round r takes batch r * learners + j). With `built` > learners the trainer
// builds that many learners a device and trains the first `learners` (set_active_learners).
std::vector<float> train_losses(const TrajectoryCase& c, Device device, int learners = 1,
                                Algorithm algorithm = Algorithm::Ssgd, std::vector<int> gpus = {}, int built = 0) {
  std::string dir = test::source_path(std::string("models/") + c.folder + "/");
  ImportedModel m = load_model(dir + c.onnx);
  Tensor xs = load_npy(dir + "trajectory.x.npy");  // (steps, batch, ...)
  Tensor ys = load_npy(dir + "trajectory.y.npy");  // (steps, batch)
  const int64_t batch = xs.dim(1), per = xs.numel() / (xs.dim(0) * batch);
  TrainerOptions to;
  to.batch_size = batch;
  to.learners = learners;
  to.algorithm = algorithm;
  to.optimizer.lr = 0.05f;
  to.optimizer.momentum = 0.9f;
  to.optimizer.weight_decay = 5e-4f;
  to.device = device;
  to.gpus = gpus;
  // The CPU runs the GPU's fusions too (GELU, attention): their CPU kernels are the reference.
  to.graph.gpu_fusions = true;
  to.learners = learners / std::max<int>(1, static_cast<int>(gpus.size()));  // per device
  const int active = to.learners;
  if (built > 0) to.learners = built;
  Trainer trainer(m.graph, to);
  if (built > 0) trainer.set_active_learners(active);
  std::vector<float> losses;
  for (int64_t r = 0; r < c.steps && (r + 1) * learners <= xs.dim(0); ++r) {
    std::vector<Tensor> x, y;
    for (int64_t j = 0; j < learners; ++j) {
      const int64_t s = r * learners + j;
      x.push_back(
          Tensor::view(DType::Float32, {batch, per}, xs.ptr<float>() + s * batch * per, Device{}, xs.storage()));
      y.push_back(Tensor::view(DType::Int64, {batch}, ys.ptr<int64_t>() + s * batch, Device{}, ys.storage()));
    }
    losses.push_back(trainer.round(x, y));
  }
  return losses;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t s = 0; s < want.size(); ++s)
    EXPECT_NEAR(got[s], want[s], 1e-3 * std::fabs(want[s])) << what << " step " << s;
}

class GpuTrajectory : public ::testing::TestWithParam<TrajectoryCase> {};

// Same seed, same model: CPU and GPU runs give losses equal within 1e-3 relative. ResNet-20
// is chaotic after its first steps at this batch size (tests/runtime/trajectory_test.cpp),
// so only 3 of its steps are compared. UpNet trains through InstanceNormalization, Resize,
// DepthToSpace, CumSum, Trilu, Sin and Mish (or its TorchScript form) as exported; SeqNet
// through LSTM, GRU and RNN, unrolled over 28 steps.
TEST_P(GpuTrajectory, LossesMatchTheCpuWithin1e3Relative) {
  CBT_SKIP_WITHOUT_GPU();
  const TrajectoryCase c = GetParam();
  std::vector<float> want = train_losses(c, Device{});
  std::vector<float> got = train_losses(c, kGpu);
  expect_close(got, want, c.onnx);
}

INSTANTIATE_TEST_SUITE_P(Models, GpuTrajectory,
                         ::testing::Values(TrajectoryCase{"lenet5", "lenet5.ts17.onnx", 20},
                                           TrajectoryCase{"resnet20", "resnet20.ts17.onnx", 3},
                                           TrajectoryCase{"upnet", "upnet.ts17.onnx", 20},
                                           TrajectoryCase{"upnet", "upnet.dynamo.onnx", 20},
                                           TrajectoryCase{"seqnet", "seqnet.ts17.onnx", 20},
                                           TrajectoryCase{"seqnet", "seqnet.dynamo.onnx", 20}),
                         [](const auto& info) {
                           std::string n = info.param.onnx;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Every export of models/architectures/ (fourteen architectures from three exporters; on the CPU
// they train as PyTorch does, Architectures.TrainAsPyTorchDoes) trains on the GPU as on the CPU:
// its first 8 steps within 1e-3 (rounding differences grow through the steps of the deeper ones:
// MobileNetV2's 10th is 1.5e-3 apart).
TEST(GpuArchitectures, TrainAsOnTheCpu) {
  CBT_SKIP_WITHOUT_GPU();
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("models/architectures")))
    if (e.path().extension() == ".onnx") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 40u);
  for (const auto& f : files) {
    const TrajectoryCase c{"architectures", f.c_str(), 8};
    expect_close(train_losses(c, kGpu), train_losses(c, Device{}), f);
  }
}

// Two learners, each on its own stream, meeting the synchronisation stream through events:
// the same rounds as two CPU learners.
TEST(GpuRuntime, TwoLearnersMatchTheCpuForSmaAndSsgd) {
  CBT_SKIP_WITHOUT_GPU();
  const TrajectoryCase c{"lenet5", "lenet5.ts17.onnx", 10};
  for (Algorithm a : {Algorithm::Sma, Algorithm::Ssgd}) {
    std::string what = a == Algorithm::Sma ? "sma" : "ssgd";
    expect_close(train_losses(c, kGpu, 2, a), train_losses(c, Device{}, 2, a), what);
  }
}

// Two of four learners built on the GPU train as two CPU learners: the auto-tuner times its
// counts this way, on one trainer.
TEST(GpuRuntime, TwoOfFourLearnersBuiltMatchTwoCpuLearnersForSmaAndSsgd) {
  CBT_SKIP_WITHOUT_GPU();
  const TrajectoryCase c{"lenet5", "lenet5.ts17.onnx", 10};
  for (Algorithm a : {Algorithm::Sma, Algorithm::Ssgd}) {
    std::string what = a == Algorithm::Sma ? "sma" : "ssgd";
    expect_close(train_losses(c, kGpu, 2, a, {}, 4), train_losses(c, Device{}, 2, a), what);
  }
}

// The tuner on a GPU builds one trainer of its largest count and times every count on it.
TEST(GpuRuntime, TheTunerTimesEveryCountOnOneTrainer) {
  CBT_SKIP_WITHOUT_GPU();
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  TrainerOptions to;
  to.batch_size = 16;
  to.device = kGpu;
  AutotuneOptions ao;
  ao.max_learners = 3;
  ao.threshold = -100;  // every count is kept: all three are timed
  std::ostringstream log;
  double seconds = -1;
  EXPECT_EQ(autotune_learners(m.graph, to, ao, log, &seconds), 3);
  const std::string s = log.str();
  EXPECT_NE(s.find("autotune: built 3 learner(s) to time 1 to 3 of them"), std::string::npos) << s;
  for (int k = 1; k <= 3; ++k)
    EXPECT_NE(s.find("autotune: " + std::to_string(k) + " learner(s): "), std::string::npos) << s;
  EXPECT_GT(seconds, 0);
}

// A learner's convolutions are timed as many side by side as the GPU has learners, but
// evaluation runs its forward passes alone, so its searches time one copy (cuDNN's engines and
// the direct kernels alike; with four copies, ResNet-20's evaluation searches took 3 s).
TEST(GpuRuntime, EvaluationTimesItsConvolutionsAlone) {
  CBT_SKIP_WITHOUT_GPU();
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  TrainerOptions to;
  to.batch_size = 9;  // batch sizes no other test uses: the searches are not cached yet
  to.learners = 4;
  to.algorithm = Algorithm::Sma;
  to.device = kGpu;
  Trainer trainer(m.graph, to);
  std::mt19937_64 rng(5);
  const RoundInput in = random_round(4, 9, 28 * 28, rng);
  const uint64_t alone_before = cuda::engine_searches(1), four_before = cuda::engine_searches(4);
  trainer.round(in.x, in.y);
  const uint64_t alone_trained = cuda::engine_searches(1), four_trained = cuda::engine_searches(4);
  EXPECT_GE(four_trained - four_before, 3u)
      << "LeNet-5's first convolution: forward, backward filter; the second: three";
  EXPECT_EQ(alone_trained, alone_before) << "the learners' searches time four copies";

  const RoundInput samples = random_round(1, 11, 28 * 28, rng);  // a test set of 11
  Dataset test_set;
  test_set.images = samples.x[0];
  test_set.labels = samples.y[0];
  test_set.num_classes = 10;
  const EvalResult r = trainer.evaluate(test_set);
  EXPECT_GE(cuda::engine_searches(1) - alone_trained, 2u) << "evaluation's two forward convolutions";
  EXPECT_EQ(cuda::engine_searches(4), four_trained) << "evaluation timed copies side by side";
  EXPECT_EQ(r.samples, 11);
}

// The choices a run saves (--conv-choices) spare the next run every search: after they are
// forgotten and read back from the file, a new trainer of the same model searches nothing and,
// deterministic, trains bit for bit as the first did.
TEST(GpuRuntime, SavedConvolutionChoicesSpareTheNextRunItsSearches) {
  CBT_SKIP_WITHOUT_GPU();
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  TrainerOptions to;
  to.batch_size = 13;  // a batch size no other test uses: nothing of it is cached yet
  to.learners = 2;
  to.algorithm = Algorithm::Sma;
  to.device = kGpu;
  to.deterministic = true;
  std::mt19937_64 rng(9);
  const RoundInput in = random_round(2, 13, 28 * 28, rng);
  auto first_loss = [&] {
    Trainer trainer(m.graph, to);
    return trainer.round(in.x, in.y);
  };
  const uint64_t before = cuda::engine_searches(2);
  const float searched = first_loss();
  const uint64_t searches = cuda::engine_searches(2) - before;
  EXPECT_GE(searches, 4u) << "LeNet-5's convolutions: forward and backward filter, and the second's backward data";

  const std::string file = (test::temp_dir("conv_choices") / "choices.txt").string();
  const size_t saved = save_conv_choices(file);
  EXPECT_GE(saved, static_cast<size_t>(searches));
  cuda::forget_conv_choices();
  std::string why;
  EXPECT_EQ(load_conv_choices(file, &why), saved);
  EXPECT_TRUE(why.empty()) << why;
  const uint64_t again = cuda::engine_searches(2);
  const float reused = first_loss();
  EXPECT_EQ(cuda::engine_searches(2), again) << "searched although every choice was read back";
  EXPECT_EQ(reused, searched);

  // A damaged file: its lines are skipped, the searches run again, nothing breaks.
  {
    std::ofstream broken(file);
    broken << cuda::conv_choices_header() << "\ndevice 0 " << cuda::device_signature(0) << "\nchoice 0 1 2\n";
  }
  cuda::forget_conv_choices();
  EXPECT_EQ(load_conv_choices(file, &why), 0u);
  EXPECT_EQ(first_loss(), searched);
  EXPECT_GT(cuda::engine_searches(2), again);
}

// Two GPUs x 2 learners train exactly as 4 CPU learners (up to reduction order): the
// corrections or gradients of each GPU are reduced there, then summed across GPUs by NCCL.
TEST(GpuRuntime, TwoGpusMatchFourCpuLearnersForSmaAndSsgd) {
  CBT_SKIP_WITHOUT_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "fewer than 2 CUDA devices: skipped";
  const TrajectoryCase c{"lenet5", "lenet5.ts17.onnx", 5};
  for (Algorithm a : {Algorithm::Sma, Algorithm::Ssgd}) {
    std::string what = a == Algorithm::Sma ? "sma" : "ssgd";
    expect_close(train_losses(c, kGpu, 4, a, {0, 1}), train_losses(c, Device{}, 4, a), what);
  }
}

// Two GPUs of one model share their convolution searches (first_device_alike): two learners on
// each of two GPUs search as many convolutions as two learners on one GPU. Before, each GPU
// searched its own in turn, and the first round of two GPUs took twice as long.
TEST(GpuRuntime, TwoAlikeGpusSearchEachConvolutionOnce) {
  CBT_SKIP_WITHOUT_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "fewer than 2 CUDA devices: skipped";
  if (cuda::first_device_alike(1) != 0) GTEST_SKIP() << "GPUs 0 and 1 are of different models: each searches";
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  std::mt19937_64 rng(9);
  auto searches = [&](std::vector<int> gpus, int64_t batch) {  // a batch size of its own: nothing cached
    TrainerOptions to;
    to.batch_size = batch;
    to.learners = 2;
    to.algorithm = Algorithm::Sma;
    to.device = kGpu;
    to.gpus = gpus;
    Trainer trainer(m.graph, to);
    const RoundInput in = random_round(2 * static_cast<int>(gpus.size()), batch, 28 * 28, rng);
    const uint64_t before = cuda::engine_searches(2);
    trainer.round(in.x, in.y);
    return cuda::engine_searches(2) - before;
  };
  const uint64_t one_gpu = searches({0}, 13), two_gpus = searches({0, 1}, 15);
  EXPECT_GE(one_gpu, 3u);
  EXPECT_EQ(two_gpus, one_gpu);
}

// --deterministic on the GPU: two runs with the same seed (SMA over 3 learners, random data)
// end with the same weights and BatchNorm statistics bit for bit.
std::map<std::string, Tensor> deterministic_run(const std::string& onnx, int64_t chw[3]) {
  ImportedModel m = load_model(test::source_path(onnx));
  TrainerOptions to;
  to.batch_size = 8;
  to.learners = 3;
  to.algorithm = Algorithm::Sma;
  to.device = kGpu;
  to.deterministic = true;
  to.optimizer.lr = 0.05f;
  Trainer trainer(m.graph, to);
  std::mt19937_64 rng(77);
  const int64_t per = chw[0] * chw[1] * chw[2];
  for (int r = 0; r < 6; ++r) {
    const RoundInput in = random_round(3, 8, per, rng);
    trainer.round(in.x, in.y);
  }
  return trainer.trained_initializers();
}

TEST(GpuRuntime, DeterministicRunsAreBitIdentical) {
  CBT_SKIP_WITHOUT_GPU();
  struct M {
    const char* onnx;
    int64_t chw[3];
  };
  for (M m : {M{"models/lenet5/lenet5.ts17.onnx", {1, 28, 28}}, M{"models/resnet20/resnet20.ts17.onnx", {1, 28, 28}},
              M{"models/opzoo/opzoo.ts17.onnx", {1, 28, 28}}}) {
    auto a = deterministic_run(m.onnx, m.chw);
    auto b = deterministic_run(m.onnx, m.chw);
    ASSERT_EQ(a.size(), b.size()) << m.onnx;
    int differing = 0;
    for (const auto& [name, t] : a)
      if (!same_bytes(t, b.at(name))) ++differing;
    EXPECT_EQ(differing, 0) << m.onnx << ": tensors that differ between two runs";
  }
}

// BatchNorm's one-launch kernels (ops/cuda/batch_norm.h), captured in the learners' CUDA
// graphs: ResNet-20 trains to the same weights and statistics bit for bit as with the
// two-launch path (CBT_BN_ONE_LAUNCH=off).
TEST(GpuRuntime, OneLaunchBatchNormTrainsResNet20BitForBitAsTwoLaunches) {
  CBT_SKIP_WITHOUT_GPU();
  if (!cuda::batch_norm_one_launch_supported(0))
    GTEST_SKIP() << "this GPU or build has no thread-block clusters: the one-launch path is off";
  int64_t chw[3] = {1, 28, 28};
  const uint64_t before = cuda::batch_norm_one_launch_runs();
  auto one = deterministic_run("models/resnet20/resnet20.ts17.onnx", chw);
  EXPECT_GE(cuda::batch_norm_one_launch_runs() - before, 2u * 19u) << "ResNet-20 has 19 BatchNorms";
  setenv("CBT_BN_ONE_LAUNCH", "off", 1);
  const uint64_t off_before = cuda::batch_norm_one_launch_runs();
  auto two = deterministic_run("models/resnet20/resnet20.ts17.onnx", chw);
  const uint64_t off_runs = cuda::batch_norm_one_launch_runs() - off_before;
  unsetenv("CBT_BN_ONE_LAUNCH");
  EXPECT_EQ(off_runs, 0u);
  ASSERT_EQ(one.size(), two.size());
  int differing = 0;
  for (const auto& [name, t] : one)
    if (!same_bytes(t, two.at(name))) ++differing;
  EXPECT_EQ(differing, 0) << "tensors that differ between the two paths";
}

// The kernels' workspace: an address range backed only as far as it is asked for; the address
// stays put and bytes written before a growth survive it; nothing grows during a capture.
TEST(GpuRuntime, WorkspaceMapsWhatIsAskedForAtAFixedAddress) {
  CBT_SKIP_WITHOUT_GPU();
  CBT_CUDA_CHECK(cudaSetDevice(0));
  cuda::Stream stream = cuda::make_stream();
  const size_t limit = size_t{32} << 20;
  cuda::Workspace ws(0, limit);
  ASSERT_NE(ws.base(), nullptr);
  EXPECT_EQ(ws.mapped(), 0u);
  EXPECT_GE(ws.limit(), limit);
  ws.ensure(1000, stream.get());
  const size_t first = ws.mapped();
  EXPECT_GE(first, 1000u);
  EXPECT_LT(first, limit);
  Tensor pattern = test::random_tensor(DType::Float32, {250}, 5);
  CBT_CUDA_CHECK(cudaMemcpyAsync(ws.base(), pattern.data(), pattern.nbytes(), cudaMemcpyHostToDevice, stream.get()));
  void* base = ws.base();
  ws.ensure(first + 3 * 1000 * 1000, stream.get());
  EXPECT_EQ(ws.base(), base);
  EXPECT_GE(ws.mapped(), first + 3u * 1000 * 1000);
  // The new end is usable, the old start kept its bytes.
  auto* bytes = static_cast<std::byte*>(ws.base());
  CBT_CUDA_CHECK(cudaMemsetAsync(bytes + ws.mapped() - 4096, 7, 4096, stream.get()));
  Tensor back(DType::Float32, {250});
  CBT_CUDA_CHECK(cudaMemcpyAsync(back.data(), ws.base(), back.nbytes(), cudaMemcpyDeviceToHost, stream.get()));
  CBT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  EXPECT_TRUE(same_bytes(back, pattern));
  EXPECT_THROW(ws.ensure(ws.limit() + 1, stream.get()), InternalError);
  // Within what is mapped a capture is fine; beyond it the request is refused.
  const size_t before = ws.mapped();
  CBT_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  ws.ensure(before, stream.get());
  EXPECT_THROW(ws.ensure(before + 1, stream.get()), InternalError);
  cudaGraph_t g = nullptr;
  CBT_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &g));
  if (g) CBT_CUDA_CHECK(cudaGraphDestroy(g));
  EXPECT_EQ(ws.mapped(), before);
}

// A small model's learner holds the workspace its kernels use, not the whole 32 MiB range:
// LeNet-5 at batch 32 (CUDA graphs on, two learners) stays under 12 MiB per learner with its
// 4 MiB cuBLAS workspace (38.7 MiB with the whole range backed).
TEST(GpuRuntime, ASmallModelsLearnerHoldsOnlyTheWorkspaceItUses) {
  CBT_SKIP_WITHOUT_GPU();
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  TrainerOptions to;
  to.batch_size = 32;
  to.learners = 2;
  to.algorithm = Algorithm::Sma;
  to.device = kGpu;
  to.optimizer.lr = 0.05f;
  Trainer trainer(m.graph, to);
  std::mt19937_64 rng(11);
  for (int r = 0; r < 4; ++r) {
    std::vector<Tensor> x, y;
    for (int j = 0; j < 2; ++j) {
      x.push_back(test::random_tensor(DType::Float32, {32, 784}, rng()));
      y.push_back(test::random_int_tensor({32}, 0, 9, rng()));
    }
    EXPECT_TRUE(std::isfinite(trainer.round(x, y)));
  }
  const size_t bytes = trainer.bytes_per_learner();
  EXPECT_GT(bytes, size_t{4} << 20);  // the cuBLAS workspace at least
  EXPECT_LT(bytes, size_t{12} << 20) << "bytes per learner";
}

TEST(GpuRuntime, CommandLineTrainsOnCuda) {
  CBT_SKIP_WITHOUT_GPU();
  // Fashion-MNIST where Debian puts it, or where CBT_DATA says (the GPU machine has no Debian
  // package).
  const char* env_data = std::getenv("CBT_DATA");
  const std::string data = env_data && *env_data ? env_data : kDefaultDataDir;
  if (!std::filesystem::is_directory(data)) GTEST_SKIP() << "no data set at " << data << " (set CBT_DATA)";
  auto out = test::temp_dir("gpu_cli") / "lenet5.onnx";
  std::string cmd = test::cbtrain_binary() + " " + test::source_path("models/lenet5/lenet5.ts17.onnx") + " --data " +
                    data + " --device cuda --epochs 1 --max-steps 50 --log-every 0 -o " + out.string() + " > /dev/null";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << cmd;
  EXPECT_EQ(WEXITSTATUS(status), 0) << cmd;
  EXPECT_TRUE(std::filesystem::exists(out)) << cmd;

  std::string bad = test::cbtrain_binary() + " " + test::source_path("models/lenet5/lenet5.ts17.onnx") +
                    " --device cuda:1000 --max-steps 1 2> /dev/null > /dev/null";
  status = std::system(bad.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << bad;
  EXPECT_EQ(WEXITSTATUS(status), 2) << bad;
}

}  // namespace
}  // namespace cbt
