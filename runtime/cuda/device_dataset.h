// A data set that lives in GPU memory: uploaded once, batches gathered on the stream by
// shuffled indices (the epoch order is uploaded once per epoch).
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/dataset.h"

namespace cbt {

class DeviceDataset {
 public:
  explicit DeviceDataset(CudaBackend& backend) : backend_(backend) {}

  // Whether `d` takes at most `fraction` of the free memory of the backend's GPU.
  static bool fits(const Dataset& d, CudaBackend& backend, double fraction = 0.5);

  // Copies images (N, ...) float32 and labels (N) int64 to the device (replacing any
  // previous set), and keeps the image geometry for augmented gathers.
  void upload(const Dataset& d);
  // Uploads one epoch's order of sample indices (each checked to be in [0, size())) and,
  // when not empty, its augmentation choices (3 per position, runtime/augment.h).
  void upload_order(const std::vector<int64_t>& order, const std::vector<int32_t>& choices = {});
  // Device pointer to element `start` of the uploaded order.
  const int64_t* order(int64_t start = 0) const;
  // Device pointer to the choices of position `start`; nullptr when none were uploaded.
  const int32_t* choices(int64_t start = 0) const;

  // x (count, ...) float32 and y (count) int64, both on the backend's device, receive the
  // samples listed at `indices` (a device pointer, e.g. order(s * batch)), cropped and
  // flipped by `choices` (device pointer, 3 per sample) when given. Asynchronous, on the
  // stream of `on` (a backend of the same GPU; default: the data set's own).
  void gather(const int64_t* indices, int64_t count, const Tensor& x, const Tensor& y, const int32_t* choices = nullptr,
              CudaBackend* on = nullptr);

  int64_t size() const { return size_; }
  int64_t sample_numel() const { return per_; }

 private:
  CudaBackend& backend_;
  Tensor images_, labels_, order_, choices_;
  int64_t size_ = 0, per_ = 0;
  ImageLayout image_;
};

}  // namespace cbt
