// Flat buffer layout and views.
#include "runtime/flat_buffer.h"

namespace cbt {

FlatLayout FlatLayout::of(const std::vector<std::string>& names, const std::map<std::string, ValueType>& types) {
  FlatLayout l;
  for (const auto& n : names) {
    const ValueType& t = types.at(n);
    CBT_CHECK(t.dtype == DType::Float32, "flat buffers hold float32; ", n, " is ", dtype_name(t.dtype));
    l.entries.push_back(Entry{n, t.shape, l.numel});
    l.values += shape_numel(t.shape);
    l.numel += (shape_numel(t.shape) + 63) / 64 * 64;
  }
  return l;
}

FlatBuffer::FlatBuffer(const FlatLayout& layout, Backend& backend) {
  flat_ = backend.empty(DType::Float32, {layout.numel});
  auto* base = static_cast<float*>(flat_.data());
  for (const auto& e : layout.entries)
    views_[e.name] = Tensor::view(DType::Float32, e.shape, base + e.offset, flat_.device(), flat_.storage());
}

}  // namespace cbt
