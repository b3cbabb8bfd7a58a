// Straightforward references of the scatters' reductions for ScatterElements' and ScatterND's
// tests, given where each update element goes (its flat position in data, or -1): the output,
// and the gradients of PyTorch's scatter_reduce with include_self (max and min share dY among
// the ties; mul multiplies the other factors out directly, zeros included).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "common/op_harness.h"
#include "graph/tensor.h"

namespace cbt::test {

// data (f64) with the updates combined in the order of their flat index.
inline Tensor scatter_reference(const Tensor& data, const std::vector<int64_t>& target, const Tensor& updates,
                                const std::string& reduction) {
  Tensor y = data.clone();
  double* out = y.ptr<double>();
  for (int64_t j = 0; j < updates.numel(); ++j) {
    if (target[j] < 0) continue;
    double &o = out[target[j]], u = updates.at_f64(j);
    if (reduction == "none") o = u;
    if (reduction == "add") o += u;
    if (reduction == "mul") o *= u;
    if (reduction == "max") o = std::max(o, u);
    if (reduction == "min") o = std::min(o, u);
  }
  return y;
}

struct ScatterGrads {
  Tensor d_data, d_updates;
};

// dData and dUpdates of reduction mul, max or min for dY (all f64).
inline ScatterGrads scatter_reference_grads(const Tensor& data, const std::vector<int64_t>& target,
                                            const Tensor& updates, const Tensor& dy, const std::string& reduction) {
  ScatterGrads g{Tensor(DType::Float64, data.shape()), Tensor(DType::Float64, updates.shape())};
  std::vector<std::vector<int64_t>> from(static_cast<size_t>(data.numel()));  // the updates of each position
  for (int64_t j = 0; j < updates.numel(); ++j) {
    g.d_updates.ptr<double>()[j] = 0;
    if (target[j] >= 0) from[static_cast<size_t>(target[j])].push_back(j);
  }
  for (int64_t p = 0; p < data.numel(); ++p) {
    const auto& js = from[static_cast<size_t>(p)];
    const double x = data.at_f64(p), d = dy.at_f64(p);
    double& d_x = g.d_data.ptr<double>()[p];
    if (reduction == "mul") {
      d_x = d;
      for (int64_t j : js) d_x *= updates.at_f64(j);
      for (int64_t j : js) {
        double others = 1;
        for (int64_t i : js)
          if (i != j) others *= updates.at_f64(i);
        g.d_updates.ptr<double>()[j] = d * x * others;
      }
      continue;
    }
    double y = x;
    for (int64_t j : js) y = reduction == "max" ? std::max(y, updates.at_f64(j)) : std::min(y, updates.at_f64(j));
    double ties = x == y ? 1 : 0;
    for (int64_t j : js) ties += updates.at_f64(j) == y ? 1 : 0;
    d_x = x == y ? d / ties : 0;
    for (int64_t j : js) g.d_updates.ptr<double>()[j] = updates.at_f64(j) == y ? d / ties : 0;
  }
  return g;
}

// Any numeric tensor as f64.
inline Tensor as_f64(const Tensor& t) {
  Tensor out(DType::Float64, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) out.ptr<double>()[i] = t.at_f64(i);
  return out;
}

// How inputs exercise the backward: positions whose result two or more of data and the updates
// equal (max, min); positions with one zero update, and with two or more (mul).
struct ScatterCoverage {
  int ties = 0, one_zero = 0, zeros = 0;
};

inline ScatterCoverage scatter_coverage(const Tensor& data, const std::vector<int64_t>& target, const Tensor& updates,
                                        const std::string& reduction) {
  const Tensor y = scatter_reference(data, target, updates, reduction);
  std::vector<int> equal(static_cast<size_t>(data.numel()), 0), zero(static_cast<size_t>(data.numel()), 0);
  for (int64_t p = 0; p < data.numel(); ++p) equal[static_cast<size_t>(p)] = data.at_f64(p) == y.at_f64(p);
  for (int64_t j = 0; j < updates.numel(); ++j) {
    if (target[j] < 0) continue;
    const auto p = static_cast<size_t>(target[j]);
    equal[p] += updates.at_f64(j) == y.at_f64(target[j]);
    zero[p] += updates.at_f64(j) == 0;
  }
  ScatterCoverage c;
  for (size_t p = 0; p < equal.size(); ++p) {
    c.ties += equal[p] >= 2;
    c.one_zero += zero[p] == 1;
    c.zeros += zero[p] >= 2;
  }
  return c;
}

// Values from a few levels (ties certain), as f64: integers in [lo, hi) times `scale`.
inline Tensor tie_prone(const Shape& s, int64_t lo, int64_t hi, double scale, uint64_t seed) {
  const Tensor levels = random_int_tensor(s, lo, hi, seed);
  Tensor t(DType::Float64, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<double>()[i] = static_cast<double>(levels.at_i64(i)) * scale;
  return t;
}

}  // namespace cbt::test
