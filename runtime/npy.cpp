// NumPy .npy format: magic, version, little-endian header length, a Python-dict header.
#include "runtime/npy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "graph/atomic_file.h"

namespace cbt {

namespace {

DType dtype_from_descr(const std::string& d, const std::string& path) {
  if (d == "<f4") return DType::Float32;
  if (d == "<f8") return DType::Float64;
  if (d == "<i8") return DType::Int64;
  if (d == "<i4") return DType::Int32;
  if (d == "|u1") return DType::UInt8;
  if (d == "|i1") return DType::Int8;
  if (d == "|b1") return DType::Bool;
  throw UserError(path + ": unsupported .npy dtype '" + d + "' (use float32, float64, int64, int32, uint8 or bool)");
}

const char* descr_of(DType t) {
  switch (t) {
    case DType::Float32:
      return "<f4";
    case DType::Float64:
      return "<f8";
    case DType::Int64:
      return "<i8";
    case DType::Int32:
      return "<i4";
    case DType::UInt8:
      return "|u1";
    case DType::Int8:
      return "|i1";
    case DType::Bool:
      return "|b1";
    default:
      throw UserError(std::string("cannot write ") + dtype_name(t) + " to .npy");
  }
}

// The text of `key`'s value in a .npy header (a Python dict literal): a quoted string without
// its quotes, a tuple with its parentheses, or a bare word (True, False); nullopt when the key is
// missing or its value is not closed.
std::optional<std::string> header_value(const std::string& header, const std::string& key) {
  const std::string quoted = "'" + key + "':";
  const size_t at = header.find(quoted);
  if (at == std::string::npos) return std::nullopt;
  const size_t i = header.find_first_not_of(" \t\r\n", at + quoted.size());
  if (i == std::string::npos) return std::nullopt;
  if (header[i] == '\'') {
    const size_t end = header.find('\'', i + 1);
    if (end == std::string::npos) return std::nullopt;
    return header.substr(i + 1, end - i - 1);
  }
  if (header[i] == '(') {
    const size_t end = header.find(')', i + 1);
    if (end == std::string::npos) return std::nullopt;
    return header.substr(i, end - i + 1);
  }
  const size_t end = header.find_first_of(",} \t\r\n", i);
  return header.substr(i, end == std::string::npos ? std::string::npos : end - i);
}

}  // namespace

Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UserError("cannot open " + path);
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw UserError(path + " is not a .npy file (bad magic)");
  uint32_t hlen = 0;
  unsigned char b[4] = {0, 0, 0, 0};
  int major = static_cast<unsigned char>(magic[6]);
  if (major == 1) {
    if (!f.read(reinterpret_cast<char*>(b), 2)) throw UserError(path + ": truncated header");
    hlen = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    if (!f.read(reinterpret_cast<char*>(b), 4)) throw UserError(path + ": truncated header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t{b[3]} << 24);
  } else {
    throw UserError(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (hlen > (1u << 20)) throw UserError(path + ": header too large");
  std::string header(hlen, '\0');
  if (!f.read(header.data(), hlen)) throw UserError(path + ": truncated header");
  const std::optional<std::string> descr = header_value(header, "descr");
  if (!descr || descr->empty()) throw UserError(path + ": header has no descr");
  DType dt = dtype_from_descr(*descr, path);
  if (header_value(header, "fortran_order") == "True")
    throw UserError(path + ": Fortran-ordered arrays are not supported (save with C order)");
  const std::optional<std::string> dims = header_value(header, "shape");
  if (!dims || dims->empty() || dims->front() != '(') throw UserError(path + ": header has no shape");
  Shape shape;
  std::stringstream ss(dims->substr(1, dims->size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(item));
    } catch (...) {
      throw UserError(path + ": bad shape in header");
    }
  }
  int64_t numel;
  try {
    numel = shape_numel(shape);
  } catch (const ModelError& e) {
    throw UserError(path + ": " + e.what());
  }
  auto data_start = f.tellg();
  f.seekg(0, std::ios::end);
  auto remaining = static_cast<uint64_t>(f.tellg() - data_start);
  if (remaining != static_cast<uint64_t>(numel) * dtype_size(dt))
    throw UserError(path + ": data size " + std::to_string(remaining) + " bytes does not match shape " +
                    shape_str(shape));
  f.seekg(data_start);
  Tensor t(dt, shape);
  if (t.nbytes() && !f.read(static_cast<char*>(t.data()), static_cast<std::streamsize>(t.nbytes())))
    throw UserError(path + ": truncated data");
  return t;
}

void save_npy(const std::string& path, const Tensor& t) {
  std::ostringstream h;
  h << "{'descr': '" << descr_of(t.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.rank(); ++i) h << t.shape()[i] << (t.rank() == 1 || i + 1 < t.rank() ? "," : "");
  h << "), }";
  std::string header = h.str();
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes = "\x93NUMPY";
  bytes.push_back(1);
  bytes.push_back(0);
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  bytes.append(static_cast<const char*>(t.data()), t.nbytes());
  write_file_atomically(path, bytes);
}

}  // namespace cbt
