// ResidentDataset on a GPU, through DeviceDataset.
#include "runtime/resident_data.h"

#include "runtime/cuda/device_dataset.h"

namespace cbt {

namespace {
class CudaResidentDataset final : public ResidentDataset {
 public:
  CudaResidentDataset(const Dataset& d, CudaBackend& backend) : data_(backend) { data_.upload(d); }
  void set_order(const std::vector<int64_t>& order, const std::vector<int32_t>& augment) override {
    data_.upload_order(order, augment);
  }
  void gather(int64_t start, int64_t count, const Tensor& x, const Tensor& y, Backend& on) override {
    auto* cuda = dynamic_cast<CudaBackend*>(&on);
    CBT_CHECK(cuda, "a resident data set is gathered on a CUDA backend");
    data_.gather(data_.order(start), count, x, y, data_.choices(start), cuda);
  }

 private:
  DeviceDataset data_;
};
}  // namespace

std::unique_ptr<ResidentDataset> make_cuda_resident_dataset(const Dataset& d, Backend& backend) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (!cuda || !DeviceDataset::fits(d, *cuda)) return nullptr;
  return std::make_unique<CudaResidentDataset>(d, *cuda);
}

}  // namespace cbt
