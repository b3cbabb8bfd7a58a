// TensorProto <-> Tensor: dtype mapping, size checks, typed fields, raw and external data.
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "onnx_import/proto_model.h"

namespace cbt {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; a big-endian host needs byte swapping");

namespace {

using TP = onnx::TensorProto;

// Copies a repeated typed field into `dst` with range checks (int32_data also carries the
// narrower integer types and float16 bits).
template <class Dst, class Field>
void copy_field(const Field& field, Dst* dst, int64_t n, const std::string& what) {
  for (int64_t i = 0; i < n; ++i) {
    auto v = field.Get(static_cast<int>(i));
    if constexpr (std::is_integral_v<Dst> && !std::is_same_v<Dst, bool>) {
      CBT_MODEL_CHECK(v >= std::numeric_limits<Dst>::min() && v <= std::numeric_limits<Dst>::max(), what, ": value ", v,
                      " at index ", i, " is out of range for its type");
    }
    dst[i] = static_cast<Dst>(v);
  }
}

template <class Field>
void check_count(const Field& field, int64_t n, const char* field_name, const std::string& what) {
  CBT_MODEL_CHECK(static_cast<int64_t>(field.size()) == n, what, ": ", field_name, " has ", field.size(),
                  " values, expected ", n, " from its dims");
}

}  // namespace

DType dtype_from_onnx(int32_t elem_type, const std::string& what) {
  switch (elem_type) {
    case TP::FLOAT:
      return DType::Float32;
    case TP::DOUBLE:
      return DType::Float64;
    case TP::INT64:
      return DType::Int64;
    case TP::INT32:
      return DType::Int32;
    case TP::INT8:
      return DType::Int8;
    case TP::UINT8:
      return DType::UInt8;
    case TP::BOOL:
      return DType::Bool;
    case TP::FLOAT16:
      return DType::Float16;
    default:
      break;
  }
  const char* name =
      TP::DataType_IsValid(elem_type) ? TP::DataType_Name(static_cast<TP::DataType>(elem_type)).c_str() : "unknown";
  throw ModelError(detail::concat(what, ": element type ", elem_type, " (", name,
                                  ") is not supported (float, double, float16, int64, int32, "
                                  "int8, uint8, bool are)"));
}

int32_t dtype_to_onnx(DType t) {
  switch (t) {
    case DType::Float32:
      return TP::FLOAT;
    case DType::Float64:
      return TP::DOUBLE;
    case DType::Int64:
      return TP::INT64;
    case DType::Int32:
      return TP::INT32;
    case DType::Int8:
      return TP::INT8;
    case DType::UInt8:
      return TP::UINT8;
    case DType::Bool:
      return TP::BOOL;
    case DType::Float16:
      return TP::FLOAT16;
    case DType::BFloat16:
      return TP::BFLOAT16;
    case DType::Undefined:
      break;
  }
  throw InternalError("dtype_to_onnx: undefined dtype");
}

uint64_t tensor_proto_bytes(const TP& t, const std::string& what) {
  CBT_MODEL_CHECK(t.has_data_type(), what, ": tensor has no data_type");
  CBT_MODEL_CHECK(t.data_type() != TP::STRING, what, ": string tensors are not supported");
  DType dt = dtype_from_onnx(t.data_type(), what);
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape) CBT_MODEL_CHECK(d >= 0, what, ": negative dimension ", d, " in dims ", shape_str(shape));
  int64_t n = 0;
  try {
    n = shape_numel(shape);
  } catch (const ModelError& e) {
    throw ModelError(what + ": " + e.what());
  }
  uint64_t bytes = 0;
  CBT_MODEL_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(n), dtype_size(dt), &bytes), what, ": dims ",
                  shape_str(shape), " overflow the byte count");
  return bytes;
}

Tensor tensor_from_proto(const TP& t, const std::string& what, const std::filesystem::path& folder) {
  const uint64_t bytes = tensor_proto_bytes(t, what);
  const DType dt = dtype_from_onnx(t.data_type(), what);
  Shape shape(t.dims().begin(), t.dims().end());
  const int64_t n = shape_numel(shape);
  CBT_MODEL_CHECK(!t.has_segment(), what, ": segmented tensors are not supported");

  if (is_external(t)) {
    Tensor out(dt, shape);
    read_external_data(t, folder, out.data(), bytes, what);
    return out;
  }
  if (t.has_raw_data()) {
    // Exactly one data field may be set; with two, which one holds the weights is a guess.
    const int typed = t.float_data_size() + t.double_data_size() + t.int32_data_size() + t.int64_data_size() +
                      t.uint64_data_size() + t.string_data_size();
    CBT_MODEL_CHECK(typed == 0, what, ": has both raw_data and ", typed,
                    " typed values (float_data/int32_data/...); ONNX allows one data field");
    CBT_MODEL_CHECK(t.raw_data().size() == bytes, what, ": raw_data has ", t.raw_data().size(), " bytes, expected ",
                    bytes, " for dims ", shape_str(shape), " of ", dtype_name(dt));
    Tensor out(dt, shape);
    if (bytes) std::memcpy(out.data(), t.raw_data().data(), bytes);
    if (dt == DType::Bool) {
      // Any nonzero byte is true; keep our bools canonical (0 or 1).
      auto* p = static_cast<uint8_t*>(out.data());
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] != 0;
    }
    return out;
  }

  // Typed fields; the wrong field for the type (or several) counts as a mismatch too.
  Tensor out(dt, shape);
  switch (dt) {
    case DType::Float32:
      check_count(t.float_data(), n, "float_data", what);
      copy_field(t.float_data(), out.ptr<float>(), n, what);
      break;
    case DType::Float64:
      check_count(t.double_data(), n, "double_data", what);
      copy_field(t.double_data(), out.ptr<double>(), n, what);
      break;
    case DType::Int64:
      check_count(t.int64_data(), n, "int64_data", what);
      copy_field(t.int64_data(), out.ptr<int64_t>(), n, what);
      break;
    case DType::Int32:
      check_count(t.int32_data(), n, "int32_data", what);
      copy_field(t.int32_data(), out.ptr<int32_t>(), n, what);
      break;
    case DType::Int8:
      check_count(t.int32_data(), n, "int32_data", what);
      copy_field(t.int32_data(), out.ptr<int8_t>(), n, what);
      break;
    case DType::UInt8:
      check_count(t.int32_data(), n, "int32_data", what);
      copy_field(t.int32_data(), out.ptr<uint8_t>(), n, what);
      break;
    case DType::Bool:
      check_count(t.int32_data(), n, "int32_data", what);
      copy_field(t.int32_data(), out.ptr<bool>(), n, what);
      break;
    case DType::Float16: {
      // float16 bits travel in the low 16 bits of int32_data.
      check_count(t.int32_data(), n, "int32_data", what);
      auto* p = static_cast<uint16_t*>(out.data());
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
      break;
    }
    case DType::BFloat16:  // never imported: dtype_from_onnx refuses it
    case DType::Undefined:
      throw InternalError("tensor_from_proto: undefined dtype");
  }
  return out;
}

void set_tensor_proto_data(TP& t, const Tensor& value) {
  CBT_CHECK(value.device().is_cpu(), "save_model needs CPU tensors");
  t.clear_float_data();
  t.clear_double_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_uint64_data();
  t.clear_string_data();
  t.clear_external_data();
  t.clear_data_location();
  t.set_raw_data(value.data(), value.nbytes());
}

}  // namespace cbt
