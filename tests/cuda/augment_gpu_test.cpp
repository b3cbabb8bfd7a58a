// The augmented gather of a device-resident data set (crop and flip per sample on the GPU)
// against the CPU gather with the same random choices, in both layouts.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <regex>

#include "common/data_writers.h"
#include "common/gpu.h"
#include "common/op_harness.h"
#include "common/paths.h"
#include "common/tiny_dataset.h"
#include "runtime/augment.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/device_dataset.h"
#include "runtime/resident_data.h"

namespace cbt {
namespace {

Dataset augmented_set(Layout layout, Augmentation a) {
  Dataset d;
  d.image = ImageLayout{3, 9, 11, layout};
  const Shape shape = layout == Layout::NCHW ? Shape{41, 3, 9, 11} : Shape{41, 9, 11, 3};
  d.images = test::random_tensor(DType::Float32, shape, 61);
  d.labels = test::random_int_tensor({41}, 0, 10, 62);
  d.num_classes = 10;
  d.augment = a;
  return d;
}

TEST(GpuAugment, DeviceGatherWithCropAndFlipEqualsCpuGather) {
  CBT_SKIP_WITHOUT_GPU();
  CudaBackend b(0);
  for (Layout layout : {Layout::NCHW, Layout::NHWC})
    for (Augmentation a : {Augmentation{4, true}, Augmentation{2, false}, Augmentation{0, true}}) {
      Dataset d = augmented_set(layout, a);
      DeviceDataset dd(b);
      dd.upload(d);
      for (int64_t epoch = 1; epoch <= 2; ++epoch) {
        const auto order = epoch_order(d.size(), 9, epoch);
        const auto choices = epoch_augmentation(d, 9, epoch);
        ASSERT_EQ(choices.size(), 3 * order.size());
        dd.upload_order(order, choices);
        for (int64_t start = 0; start < d.size(); start += 8) {
          const int64_t count = std::min<int64_t>(8, d.size() - start);
          Shape xs = d.images.shape();
          xs[0] = count;
          Tensor xh(DType::Float32, xs), yh(DType::Int64, {count});
          gather_batch(d, order.data() + start, count, xh, yh, choices.data() + 3 * start);
          Tensor xd = b.empty(DType::Float32, xs), yd = b.empty(DType::Int64, {count});
          dd.gather(dd.order(start), count, xd, yd, dd.choices(start));
          Tensor xg = b.download(xd), yg = b.download(yd);
          const std::string where = std::string(layout == Layout::NCHW ? "NCHW" : "NHWC") + " pad " +
                                    std::to_string(a.pad) + " flip " + std::to_string(a.flip) + " epoch " +
                                    std::to_string(epoch) + " start " + std::to_string(start);
          EXPECT_EQ(std::memcmp(xg.data(), xh.data(), xh.nbytes()), 0) << where;
          EXPECT_EQ(std::memcmp(yg.data(), yh.data(), yh.nbytes()), 0) << where;
        }
      }
      // Without choices the same set gathers plain samples.
      const auto order = epoch_order(d.size(), 9, 3);
      dd.upload_order(order);
      EXPECT_EQ(dd.choices(0), nullptr);
    }
}

TEST(GpuAugment, ResidentDatasetCarriesTheChoices) {
  CBT_SKIP_WITHOUT_GPU();
  CudaBackend b(0);
  Dataset d = augmented_set(Layout::NHWC, Augmentation{3, true});
  auto r = make_resident_dataset(d, b);
  ASSERT_NE(r, nullptr);
  const auto order = epoch_order(d.size(), 4, 1);
  const auto choices = epoch_augmentation(d, 4, 1);
  r->set_order(order, choices);
  const int64_t start = 16, count = 16;
  Tensor xh(DType::Float32, {count, 9, 11, 3}), yh(DType::Int64, {count});
  gather_batch(d, order.data() + start, count, xh, yh, choices.data() + 3 * start);
  Tensor xd = b.empty(DType::Float32, {count, 9, 11, 3}), yd = b.empty(DType::Int64, {count});
  r->gather(start, count, xd, yd, b);
  Tensor xg = b.download(xd);
  EXPECT_EQ(std::memcmp(xg.data(), xh.data(), xh.nbytes()), 0);
}

// stdout and stderr of `cbtrain ARGS`; the exit code in `code`.
std::string run_cbtrain(const std::string& args, int& code) {
  std::string out;
  FILE* p = popen((test::cbtrain_binary() + " " + args + " 2>&1").c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The test loss after epoch 1 (of z: comparable across devices, unlike the train loss, which
// GPUs sample every 10 rounds) and the final accuracy of a run's output.
std::pair<double, double> loss_and_accuracy(const std::string& out) {
  std::smatch a, b;
  if (!std::regex_search(out, a, std::regex(R"(epoch 1: train loss [0-9.]+, test loss ([0-9.]+))")) ||
      !std::regex_search(out, b, std::regex(R"(final test accuracy ([0-9.]+)%)")))
    return {-1, -1};
  return {std::stod(a[1]), std::stod(b[1])};
}

TEST(GpuAugment, ChannelsLastCifarWithAugmentationTrainsOnTheGpuLikeOnTheCpu) {
  CBT_SKIP_WITHOUT_GPU();
  auto d = test::temp_dir("gpu_cifar_augment");
  test::write_cifar(d / "data_batch_1.bin", test::coloured_samples(640, 10, 3, 32, 32, 700));
  test::write_cifar(d / "test_batch.bin", test::coloured_samples(200, 10, 3, 32, 32, 701));
  const std::string args = test::source_path("tests/tools/data/tiny_rgb_nhwc.onnx") + " --data " + d.string() +
                           " --augment crop:4,flip --epochs 4 --batch-size 16 --lr 0.05 --log-every 0";
  int cpu_code = -1, gpu_code = -1;
  const std::string cpu = run_cbtrain(args + " --device cpu", cpu_code);
  const std::string gpu = run_cbtrain(args + " --device cuda", gpu_code);
  ASSERT_EQ(cpu_code, 0) << cpu;
  ASSERT_EQ(gpu_code, 0) << gpu;
  auto [cpu_loss, cpu_acc] = loss_and_accuracy(cpu);
  auto [gpu_loss, gpu_acc] = loss_and_accuracy(gpu);
  EXPECT_GT(gpu_acc, 60.0) << gpu;
  // The same order, crops and flips on both: the losses after epoch 1 differ by rounding only.
  EXPECT_NEAR(gpu_loss, cpu_loss, std::max(0.05 * cpu_loss, 0.005)) << "cpu:\n" << cpu << "\ngpu:\n" << gpu;
}

}  // namespace
}  // namespace cbt
