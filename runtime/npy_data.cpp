// Data sets as pairs of NumPy arrays (inputs, labels) per split.
#include <cmath>
#include <filesystem>

#include "graph/errors.h"
#include "runtime/data_formats.h"
#include "runtime/npy.h"

namespace cbt {

namespace {

namespace fs = std::filesystem;

// (N, H, W, C) -> (N, C, H, W) for elements of type T.
template <class T>
Tensor to_nchw(const Tensor& t) {
  const int64_t n = t.dim(0), h = t.dim(1), w = t.dim(2), c = t.dim(3);
  Tensor out(t.dtype(), {n, c, h, w});
  const T* src = t.ptr<T>();
  T* dst = out.ptr<T>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k) dst[((i * c + k) * h + y) * w + x] = src[((i * h + y) * w + x) * c + k];
  return out;
}

std::pair<fs::path, fs::path> find_pair(const fs::path& dir, const std::string& split) {
  const std::pair<std::string, std::string> names[] = {{split + "_images.npy", split + "_labels.npy"},
                                                       {split + "_x.npy", split + "_y.npy"},
                                                       {"x_" + split + ".npy", "y_" + split + ".npy"}};
  for (const auto& [x, y] : names)
    if (fs::exists(dir / x) || fs::exists(dir / y)) {
      if (!fs::is_regular_file(dir / x)) throw UserError("data folder " + dir.string() + " has " + y + " but no " + x);
      if (!fs::is_regular_file(dir / y)) throw UserError("data folder " + dir.string() + " has " + x + " but no " + y);
      return {dir / x, dir / y};
    }
  throw UserError("data folder " + dir.string() + " has no " + split + " pair of .npy files (" + split +
                  "_images.npy and " + split + "_labels.npy, or " + split + "_x.npy and " + split + "_y.npy, or x_" +
                  split + ".npy and y_" + split + ".npy)");
}

RawSplit read_pair(const fs::path& xp, const fs::path& yp) {
  const std::string xs = xp.string(), ys = yp.string();
  Tensor x = load_npy(xs), y = load_npy(ys);
  if (x.dtype() == DType::Float64) {
    Tensor f(DType::Float32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) f.ptr<float>()[i] = static_cast<float>(x.ptr<double>()[i]);
    x = f;
  }
  if (x.dtype() != DType::UInt8 && x.dtype() != DType::Float32)
    throw UserError(xs + ": inputs must be uint8 (pixels) or float32/float64, not " + dtype_name(x.dtype()));
  if (x.rank() < 2 || x.rank() > 4 || x.dim(0) == 0)
    throw UserError(xs + ": inputs must be (N, D), (N, H, W), (N, C, H, W) or (N, H, W, C) with N > 0, not " +
                    shape_str(x.shape()));
  // NaN or infinity in the inputs (or a float64 beyond float32's range) would show only as a
  // diverged loss, blamed on the learning rate.
  if (x.dtype() == DType::Float32) {
    const float* v = x.ptr<float>();
    const int64_t per = x.numel() / x.dim(0);
    for (int64_t i = 0; i < x.numel(); ++i)
      if (!std::isfinite(v[i]))
        throw UserError(xs + ": sample " + std::to_string(i / per) + " holds " +
                        (std::isnan(v[i]) ? "NaN" : "an infinity (or a value beyond float32's range)") +
                        "; the inputs must be finite numbers");
  }
  RawSplit s;
  if (x.rank() == 4) {
    // Channels last (Keras's habit) when the last axis looks like channels and the second does not.
    auto looks_like_channels = [](int64_t v) { return v == 1 || v == 3; };
    if (looks_like_channels(x.dim(3)) && !looks_like_channels(x.dim(1)))
      x = x.dtype() == DType::UInt8 ? to_nchw<uint8_t>(x) : to_nchw<float>(x);
    s.image = ImageLayout{x.dim(1), x.dim(2), x.dim(3), Layout::NCHW};
  } else if (x.rank() == 3) {
    s.image = ImageLayout{1, x.dim(1), x.dim(2), Layout::NCHW};
    x = x.reshaped({x.dim(0), 1, x.dim(1), x.dim(2)});
  }
  s.values = x;

  if (y.rank() == 2 && y.dim(1) == 1) y = y.reshaped({y.dim(0)});
  if (y.rank() != 1)
    throw UserError(ys + ": labels must be one class index per sample (N,), not " + shape_str(y.shape()));
  if (y.dtype() != DType::Int64 && y.dtype() != DType::Int32 && y.dtype() != DType::UInt8 && y.dtype() != DType::Int8)
    throw UserError(ys + ": labels must be integers (int64, int32, uint8 or int8), not " + dtype_name(y.dtype()));
  if (y.dim(0) != x.dim(0))
    throw UserError("data files disagree: " + xs + " has " + std::to_string(x.dim(0)) + " samples but " + ys + " has " +
                    std::to_string(y.dim(0)) + " labels");
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double v = y.at_f64(i);
    if (v < 0 || v > 1e6)
      throw UserError(ys + ": label " + std::to_string(static_cast<int64_t>(v)) + " at index " + std::to_string(i) +
                      " is not a class index (0 to 1000000)");
    s.labels.push_back(static_cast<int64_t>(v));
  }
  return s;
}

}  // namespace

RawData read_npy_folder(const std::string& dir) {
  if (!fs::is_directory(dir)) throw UserError("data folder not found: " + dir);
  RawData r;
  auto [trx, try_] = find_pair(dir, "train");
  auto [tex, tey] = find_pair(dir, "test");
  r.train = read_pair(trx, try_);
  r.test = read_pair(tex, tey);
  if (r.train.values.dtype() != r.test.values.dtype() ||
      Shape(r.train.values.shape().begin() + 1, r.train.values.shape().end()) !=
          Shape(r.test.values.shape().begin() + 1, r.test.values.shape().end()))
    throw UserError("data files disagree: " + trx.string() + " holds " + dtype_name(r.train.values.dtype()) + " " +
                    shape_str(r.train.values.shape()) + " but " + tex.string() + " holds " +
                    dtype_name(r.test.values.dtype()) + " " + shape_str(r.test.values.shape()));
  return r;
}

}  // namespace cbt
