// DeviceDataset: one upload of the data set, per-epoch index uploads, gathers on the stream.
#include "runtime/cuda/device_dataset.h"

#include <string>

#include "ops/cuda/data.h"

namespace cbt {

bool DeviceDataset::fits(const Dataset& d, CudaBackend& backend, double fraction) {
  size_t free_b = 0, total_b = 0;
  cuda::DeviceGuard guard(backend.device().index);
  CBT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  double need = static_cast<double>(d.images.nbytes() + d.labels.nbytes());
  return need <= fraction * static_cast<double>(free_b);
}

void DeviceDataset::upload(const Dataset& d) {
  CBT_CHECK(d.images.dtype() == DType::Float32 && d.labels.dtype() == DType::Int64,
            "DeviceDataset: images must be float32 and labels int64");
  size_ = d.size();
  per_ = d.sample_numel();
  CBT_CHECK(d.images.numel() == size_ * per_, "DeviceDataset: images and labels disagree");
  order_ = Tensor();
  choices_ = Tensor();
  image_ = d.image;
  images_ = backend_.upload(d.images);
  labels_ = backend_.upload(d.labels);
}

void DeviceDataset::upload_order(const std::vector<int64_t>& order, const std::vector<int32_t>& choices) {
  for (size_t i = 0; i < order.size(); ++i)
    CBT_CHECK(order[i] >= 0 && order[i] < size_, "DeviceDataset: index ", order[i], " at ", i,
              " is outside the data set of ", size_, " samples");
  const auto n = static_cast<int64_t>(order.size());
  if (!order_.defined() || order_.numel() != n) order_ = backend_.empty(DType::Int64, {n});
  Tensor host = Tensor::view(DType::Int64, {n}, const_cast<int64_t*>(order.data()), Device{}, nullptr);
  backend_.copy_from_host(order_, host);
  if (choices.empty()) {
    choices_ = Tensor();
    return;
  }
  CBT_CHECK(choices.size() == 3 * order.size(), "DeviceDataset: ", choices.size(), " augmentation choices for ",
            order.size(), " positions (3 each)");
  CBT_CHECK(image_.numel() == per_, "DeviceDataset: augmentation needs image samples");
  if (!choices_.defined() || choices_.numel() != 3 * n) choices_ = backend_.empty(DType::Int32, {3 * n});
  Tensor hc = Tensor::view(DType::Int32, {3 * n}, const_cast<int32_t*>(choices.data()), Device{}, nullptr);
  backend_.copy_from_host(choices_, hc);
}

const int32_t* DeviceDataset::choices(int64_t start) const {
  if (!choices_.defined()) return nullptr;
  CBT_CHECK(start >= 0 && 3 * start <= choices_.numel(), "DeviceDataset: choices of ", start, " out of range");
  return choices_.ptr<int32_t>() + 3 * start;
}

const int64_t* DeviceDataset::order(int64_t start) const {
  CBT_CHECK(order_.defined() && start >= 0 && start <= order_.numel(), "DeviceDataset: no order uploaded, or start ",
            start, " out of range");
  return order_.ptr<int64_t>() + start;
}

void DeviceDataset::gather(const int64_t* indices, int64_t count, const Tensor& x, const Tensor& y,
                           const int32_t* choices, CudaBackend* on) {
  const Device dev = backend_.device();
  CudaBackend& be = on ? *on : backend_;
  CBT_CHECK(be.device() == dev, "DeviceDataset: gather on ", be.device().str(), " for data on ", dev.str());
  CBT_CHECK(x.device() == dev && y.device() == dev, "DeviceDataset: x and y must be on ", dev.str());
  CBT_CHECK(x.dtype() == DType::Float32 && x.numel() == count * per_, "DeviceDataset: x has ", x.numel(),
            " elements, expected ", count, " x ", per_);
  CBT_CHECK(y.dtype() == DType::Int64 && y.numel() == count, "DeviceDataset: y must be (", count, ") int64");
  be.kernel_context();  // makes the GPU current
  if (choices) {
    CBT_CHECK(image_.numel() == per_, "DeviceDataset: augmentation needs image samples");
    const cuda::ImageGeometry g{image_.channels, image_.height, image_.width, image_.layout == Layout::NHWC};
    cuda::gather_augment_batch(images_.ptr<float>(), labels_.ptr<int64_t>(), g, indices, choices, count, x.ptr<float>(),
                               y.ptr<int64_t>(), be.stream());
    return;
  }
  cuda::gather_batch(images_.ptr<float>(), labels_.ptr<int64_t>(), per_, indices, count, x.ptr<float>(),
                     y.ptr<int64_t>(), be.stream());
}

}  // namespace cbt
