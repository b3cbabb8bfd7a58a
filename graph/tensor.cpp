// Tensor storage, shapes and dtype helpers.
#include "graph/tensor.h"

#include <array>
#include <cstring>
#include <mutex>
#include <sstream>
#include <utility>

#include "graph/host_memory.h"

namespace cbt {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
    case DType::Int64:
      return 8;
    case DType::Int32:
      return 4;
    case DType::Int8:
      return 1;
    case DType::UInt8:
      return 1;
    case DType::Bool:
      return 1;
    case DType::Float16:
    case DType::BFloat16:
      return 2;
    case DType::Undefined:
      return 0;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Int64:
      return "int64";
    case DType::Int32:
      return "int32";
    case DType::Int8:
      return "int8";
    case DType::UInt8:
      return "uint8";
    case DType::Bool:
      return "bool";
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Undefined:
      return "undefined";
  }
  return "?";
}

bool is_floating(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}
bool is_arith(DType t) { return t == DType::Float32 || t == DType::Float64 || t == DType::Int64 || t == DType::Int32; }

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    CBT_MODEL_CHECK(d >= 0, "negative dimension in shape ", shape_str(s));
    CBT_MODEL_CHECK(!__builtin_mul_overflow(n, d, &n), "shape ", shape_str(s), " overflows 64-bit element count");
  }
  return n;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  if (s.size() == 1) os << ",";
  os << ")";
  return os.str();
}

std::string Device::str() const { return kind == DeviceKind::CPU ? "cpu" : "cuda:" + std::to_string(index); }

namespace {
std::mutex g_alloc_mutex;

// A host allocation of `bytes` that cannot be had, as a user error with the figures: every
// allocation is zeroed, so one larger than what the host can still give would be ended by the
// kernel's out-of-memory killer while it is written, not refused by malloc.
[[noreturn]] void host_out_of_memory(size_t bytes, const HostMemory& m) {
  std::string msg = "out of host memory: " + std::to_string(bytes >> 20) + " MiB requested";
  if (m.total)
    msg += ", " + std::to_string(m.available >> 20) + " MiB available of " + std::to_string(m.total >> 20) + " MiB";
  throw UserError(msg + "; use a smaller batch size");
}

std::array<Allocator, 2>& allocators() {
  static std::array<Allocator, 2> a{[](size_t bytes, Device) {
                                      // 64-byte aligned, zeroed: kernels may use aligned vector loads.
                                      size_t rounded = (bytes + 63) / 64 * 64;
                                      // Small requests skip the check (most allocations are).
                                      if (rounded >= (size_t{256} << 20)) {
                                        const HostMemory m = host_memory();
                                        if (m.total && rounded > m.available) host_out_of_memory(rounded, m);
                                      }
                                      auto* p = static_cast<std::byte*>(std::aligned_alloc(64, rounded ? rounded : 64));
                                      if (!p) {
                                        host_out_of_memory(rounded, host_memory());
                                      }
                                      std::memset(p, 0, rounded);
                                      return std::shared_ptr<std::byte>(p, [](std::byte* q) { std::free(q); });
                                    },
                                    nullptr};
  return a;
}
}  // namespace

Allocator set_allocator(DeviceKind kind, Allocator alloc) {
  std::lock_guard lock(g_alloc_mutex);
  return std::exchange(allocators()[static_cast<size_t>(kind)], std::move(alloc));
}

std::shared_ptr<std::byte> allocate_bytes(size_t bytes, Device dev) {
  Allocator a;
  {
    std::lock_guard lock(g_alloc_mutex);
    a = allocators()[static_cast<size_t>(dev.kind)];
  }
  CBT_CHECK(a, "no allocator registered for device ", dev.str());
  return a(bytes, dev);
}

Tensor::Tensor(DType dtype, Shape shape, Device dev)
    : dtype_(dtype), shape_(std::move(shape)), numel_(shape_numel(shape_)), device_(dev) {
  storage_ = allocate_bytes(nbytes(), dev);
  data_ = storage_.get();
}

Tensor Tensor::view(DType dtype, Shape shape, void* data, Device dev, std::shared_ptr<std::byte> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  t.device_ = dev;
  t.storage_ = std::move(owner);
  t.data_ = data;
  return t;
}

int64_t Tensor::dim(int i) const {
  int r = static_cast<int>(shape_.size());
  if (i < 0) i += r;
  CBT_CHECK(i >= 0 && i < r, "dim ", i, " out of range for shape ", shape_str(shape_));
  return shape_[i];
}

Tensor Tensor::reshaped(Shape shape) const {
  CBT_CHECK(shape_numel(shape) == numel_, "reshape ", shape_str(shape_), " -> ", shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  CBT_CHECK(device_.is_cpu(), "Tensor::clone is host-only");
  Tensor t(dtype_, shape_, device_);
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

double Tensor::at_f64(int64_t i) const {
  CBT_CHECK(device_.is_cpu() && i >= 0 && i < numel_, "at_f64 index ", i);
  switch (dtype_) {
    case DType::Float32:
      return static_cast<const float*>(data_)[i];
    case DType::Float64:
      return static_cast<const double*>(data_)[i];
    case DType::Int64:
      return static_cast<double>(static_cast<const int64_t*>(data_)[i]);
    case DType::Int32:
      return static_cast<const int32_t*>(data_)[i];
    case DType::Int8:
      return static_cast<const int8_t*>(data_)[i];
    case DType::UInt8:
      return static_cast<const uint8_t*>(data_)[i];
    case DType::Bool:
      return static_cast<const uint8_t*>(data_)[i] ? 1.0 : 0.0;
    default:
      CBT_CHECK(false, "at_f64 on ", dtype_name(dtype_));
  }
  return 0;
}

int64_t Tensor::at_i64(int64_t i) const {
  CBT_CHECK(device_.is_cpu() && i >= 0 && i < numel_, "at_i64 index ", i);
  switch (dtype_) {
    case DType::Int64:
      return static_cast<const int64_t*>(data_)[i];
    case DType::Int32:
      return static_cast<const int32_t*>(data_)[i];
    case DType::Int8:
      return static_cast<const int8_t*>(data_)[i];
    case DType::UInt8:
      return static_cast<const uint8_t*>(data_)[i];
    case DType::Bool:
      return static_cast<const uint8_t*>(data_)[i] ? 1 : 0;
    case DType::Float32:
      return static_cast<int64_t>(static_cast<const float*>(data_)[i]);
    case DType::Float64:
      return static_cast<int64_t>(static_cast<const double*>(data_)[i]);
    default:
      CBT_CHECK(false, "at_i64 on ", dtype_name(dtype_));
  }
  return 0;
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[i] = at_i64(i);
  return v;
}

Tensor Tensor::from_i64(const std::vector<int64_t>& v, Shape shape) {
  if (shape.empty() && v.size() != 1) shape = {static_cast<int64_t>(v.size())};
  Tensor t(DType::Int64, shape);
  CBT_CHECK(static_cast<size_t>(t.numel()) == v.size(), "from_i64 size");
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

Tensor Tensor::from_f32(const std::vector<float>& v, Shape shape) {
  Tensor t(DType::Float32, std::move(shape));
  CBT_CHECK(static_cast<size_t>(t.numel()) == v.size(), "from_f32 size");
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return t;
}

Tensor Tensor::scalar_f32(float v) { return from_f32({v}, {}); }

Tensor cast_float(const Tensor& t, DType to) {
  CBT_CHECK(t.device().is_cpu() && is_floating(t.dtype()) && is_floating(to), "cast_float");
  if (t.dtype() == to) return t.clone();
  Tensor out(to, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.at_f64(i);
    if (to == DType::Float32)
      out.ptr<float>()[i] = static_cast<float>(v);
    else
      out.ptr<double>()[i] = v;
  }
  return out;
}

}  // namespace cbt
