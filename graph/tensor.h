// Tensor: a typed, shaped handle onto storage that may be shared (views into flat buffers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/errors.h"

namespace cbt {

// BFloat16 is the activations' type of --precision bf16's channels-last region (graph/channels_last.h).
enum class DType : uint8_t { Undefined, Float32, Float64, Int64, Int32, Int8, UInt8, Bool, Float16, BFloat16 };

size_t dtype_size(DType t);
const char* dtype_name(DType t);
bool is_floating(DType t);
// The types the arithmetic kernels take: float32, float64, int64, int32.
bool is_arith(DType t);

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::Float32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::Float64;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::Int64;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::Int32;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::Int8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::UInt8;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::Bool;
}

using Shape = std::vector<int64_t>;

// Number of elements; throws ModelError on a negative dim or on overflow.
int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);

enum class DeviceKind : uint8_t { CPU, CUDA };
struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;
  bool operator==(const Device&) const = default;
  bool is_cpu() const { return kind == DeviceKind::CPU; }
  std::string str() const;
};

// Allocates zero-initialised bytes on a device. The CPU allocator is built in; the CUDA
// backend registers its own (graph/ must not depend on CUDA). set_allocator returns the one
// it replaces (tests wrap the CPU allocator and put it back).
using Allocator = std::function<std::shared_ptr<std::byte>(size_t bytes, Device)>;
Allocator set_allocator(DeviceKind kind, Allocator alloc);
std::shared_ptr<std::byte> allocate_bytes(size_t bytes, Device dev);

class Tensor {
 public:
  Tensor() = default;
  // Owning tensor with freshly allocated zeroed storage.
  Tensor(DType dtype, Shape shape, Device dev = {});
  // View onto existing memory; `owner` keeps it alive (may be null for borrowed memory).
  static Tensor view(DType dtype, Shape shape, void* data, Device dev, std::shared_ptr<std::byte> owner);

  bool defined() const { return dtype_ != DType::Undefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t dim(int i) const;  // negative i counts from the end
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  Device device() const { return device_; }

  void* data() const { return data_; }
  // The storage this tensor keeps alive (null for borrowed memory); for views into it.
  const std::shared_ptr<std::byte>& storage() const { return storage_; }
  template <class T>
  T* ptr() const {
    CBT_CHECK(dtype_ == dtype_of<T>(), "tensor is ", dtype_name(dtype_), ", accessed as ", dtype_name(dtype_of<T>()));
    return static_cast<T*>(data_);
  }

  // Same storage, other shape (numel must match).
  Tensor reshaped(Shape shape) const;
  // Deep copy on the same device (CPU only here; the CUDA backend copies its own).
  Tensor clone() const;
  // Element i converted to double / int64 (CPU tensors; for shape logic and tests).
  double at_f64(int64_t i) const;
  int64_t at_i64(int64_t i) const;
  // Values as int64 (CPU integer tensors; for shape-carrying inputs like Reshape's shape).
  std::vector<int64_t> to_i64_vector() const;

  static Tensor from_i64(const std::vector<int64_t>& v, Shape shape = {});
  static Tensor from_f32(const std::vector<float>& v, Shape shape);
  static Tensor scalar_f32(float v);

 private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  int64_t numel_ = 0;
  Device device_;
  std::shared_ptr<std::byte> storage_;
  void* data_ = nullptr;
};

// Converts a CPU float tensor between Float32 and Float64 (used by gradient checks).
Tensor cast_float(const Tensor& t, DType to);

// Calls f.template operator()<T>() with T = float or double according to dtype.
template <class F>
decltype(auto) dispatch_float(DType t, F&& f) {
  if (t == DType::Float32) return f.template operator()<float>();
  if (t == DType::Float64) return f.template operator()<double>();
  throw InternalError(std::string("expected a float tensor, got ") + dtype_name(t));
}

}  // namespace cbt
