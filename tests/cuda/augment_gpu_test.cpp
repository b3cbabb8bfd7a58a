// The augmented gather of a device-resident data set (crop and flip per sample on the GPU)
// against the CPU gather with the same random choices, in both layouts.
#include <gtest/gtest.h>

#include <cstring>

#include "common/gpu.h"
#include "common/op_harness.h"
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
  r->gather(start, count, xd, yd);
  Tensor xg = b.download(xd);
  EXPECT_EQ(std::memcmp(xg.data(), xh.data(), xh.nbytes()), 0);
}

}  // namespace
}  // namespace cbt
