// Finite-difference gradient checks and random tensors for op tests.
#include "common/op_harness.h"

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <sstream>

#include "graph/errors.h"

namespace cbt::test {

Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double scale) {
  Tensor t(dtype, shape);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = dist(rng);
    if (dtype == DType::Float32)
      t.ptr<float>()[i] = static_cast<float>(v);
    else if (dtype == DType::Float64)
      t.ptr<double>()[i] = v;
    else
      CBT_CHECK(false, "random_tensor: float dtypes only");
  }
  return t;
}

Tensor random_int_tensor(const Shape& shape, int64_t lo, int64_t hi, uint64_t seed) {
  Tensor t(DType::Int64, shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi - 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<int64_t>()[i] = dist(rng);
  return t;
}

Node make_node(const std::string& op_type, size_t num_inputs, size_t num_outputs, Attributes attrs,
               const std::string& domain) {
  Node n;
  n.op_type = op_type;
  n.domain = domain;
  n.name = "test_" + op_type;
  for (size_t i = 0; i < num_inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
  for (size_t i = 0; i < num_outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
  n.attrs = std::move(attrs);
  return n;
}

std::string infer_error(const Node& node, const std::vector<Tensor>& inputs, int64_t opset) {
  try {
    infer_node(node, inputs, opset);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  std::ostringstream os;
  if (actual.shape() != expected.shape()) {
    os << "shape " << shape_str(actual.shape()) << " != expected " << shape_str(expected.shape());
    return os.str();
  }
  double worst = 0;
  int64_t worst_i = -1;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.at_f64(i), e = expected.at_f64(i);
    double err = std::fabs(a - e) / (atol + rtol * std::fabs(e));
    if (!(err <= worst)) {  // also catches NaN
      worst = std::isnan(err) ? INFINITY : err;
      worst_i = i;
    }
  }
  if (worst <= 1.0) return "";
  os << "element " << worst_i << ": got " << actual.at_f64(worst_i) << ", expected " << expected.at_f64(worst_i)
     << " (rtol " << rtol << ", atol " << atol << ")";
  return os.str();
}

namespace {

std::vector<Tensor> to_f64(const std::vector<Tensor>& in) {
  std::vector<Tensor> out;
  for (const Tensor& t : in)
    out.push_back(t.defined() && is_floating(t.dtype()) ? cast_float(t, DType::Float64)
                                                        : (t.defined() ? t.clone() : t));
  return out;
}

}  // namespace

GradCheckResult grad_check(const Node& node_in, const std::vector<Tensor>& inputs_in, const GradCheckOptions& opt) {
  GradCheckResult res;
  const OpSchema* schema = find_schema(node_in.domain, node_in.op_type);
  CBT_CHECK(schema, "no schema for ", node_in.op_type);
  CBT_CHECK(schema->grad, node_in.op_type, " has no gradient rule");
  EagerOptions eo{opt.training, opt.seed, opt.opset};
  EagerEmitter em(eo);

  Node node = node_in;
  // An undefined input is an omitted optional one: the gradient rule sees no name.
  for (size_t i = 0; i < inputs_in.size() && i < node.inputs.size(); ++i)
    if (!inputs_in[i].defined()) node.inputs[i].clear();
  if (opt.training && schema->training_rewrite) schema->training_rewrite(node, em);
  std::vector<Tensor> inputs = to_f64(inputs_in);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined()) em.values[node.inputs[i]] = inputs[i];

  auto forward = [&](const std::vector<Tensor>& in) { return run_node(node, in, eo); };
  std::vector<Tensor> outs = forward(inputs);
  std::vector<Tensor> proj;  // R_k
  GradContext gc{node, {}, {}, em};
  for (size_t k = 0; k < outs.size(); ++k) {
    em.values[node.outputs[k]] = outs[k];
    if (outs[k].defined() && outs[k].dtype() == DType::Float64 && k == 0) {
      // Only the first output carries the loss: the others are masks or saved statistics.
      proj.push_back(random_tensor(DType::Float64, outs[k].shape(), opt.seed + 100 + k));
      std::string r = "R" + std::to_string(k);
      em.values[r] = proj.back();
      gc.dY.push_back(r);
    } else {
      proj.push_back(Tensor());
      gc.dY.push_back("");
    }
  }
  auto loss = [&](const std::vector<Tensor>& o) {
    double l = 0;
    for (size_t k = 0; k < o.size(); ++k)
      if (proj[k].defined())
        for (int64_t i = 0; i < o[k].numel(); ++i) l += o[k].at_f64(i) * proj[k].at_f64(i);
    return l;
  };

  std::vector<int> checked = opt.check_inputs;
  if (checked.empty())
    for (int i : schema->diff_inputs)
      if (i < static_cast<int>(inputs.size()) && inputs[i].defined() && inputs[i].dtype() == DType::Float64)
        checked.push_back(i);
  gc.wants.assign(inputs.size(), false);
  for (int i : checked) gc.wants[i] = true;
  std::vector<std::string> dX = schema->grad(gc);

  std::ostringstream rep;
  for (int i : checked) {
    if (i >= static_cast<int>(dX.size()) || dX[i].empty()) {
      res.ok = false;
      rep << "input " << i << ": gradient rule returned no gradient\n";
      continue;
    }
    const Tensor& analytic = em.values.at(dX[i]);
    if (analytic.shape() != inputs[i].shape()) {
      res.ok = false;
      rep << "input " << i << ": gradient shape " << shape_str(analytic.shape()) << " != input shape "
          << shape_str(inputs[i].shape()) << "\n";
      continue;
    }
    int64_t n = inputs[i].numel();
    int64_t step = n > 300 ? n / 300 + 1 : 1;  // sample large inputs
    for (int64_t e = 0; e < n; e += step) {
      std::vector<Tensor> plus = to_f64(inputs), minus = to_f64(inputs);
      plus[i].ptr<double>()[e] += opt.eps;
      minus[i].ptr<double>()[e] -= opt.eps;
      double numeric = (loss(forward(plus)) - loss(forward(minus))) / (2 * opt.eps);
      double a = analytic.at_f64(e);
      double err = std::fabs(a - numeric);
      res.max_abs_error = std::max(res.max_abs_error, err);
      double tol = opt.atol + opt.rtol * std::max({std::fabs(a), std::fabs(numeric), 1.0});
      if (!(err <= tol)) {
        res.ok = false;
        rep << "input " << i << " element " << e << ": analytic " << a << ", numeric " << numeric << "\n";
      }
    }
  }
  res.report = rep.str();
  return res;
}

std::vector<Tensor> rule_gradients(const Node& node, const std::vector<Tensor>& inputs, const Tensor& dy,
                                   int64_t opset) {
  const OpSchema* schema = find_schema(node.domain, node.op_type);
  CBT_CHECK(schema && schema->grad, node.op_type, " has no gradient rule");
  const EagerOptions eo{true, 7, opset};
  EagerEmitter em(eo);
  for (size_t i = 0; i < inputs.size(); ++i) em.values[node.inputs[i]] = inputs[i];
  std::vector<Tensor> outs = run_node(node, inputs, eo);  // for rules that read the outputs
  for (size_t k = 0; k < outs.size() && k < node.outputs.size(); ++k) em.values[node.outputs[k]] = outs[k];
  em.values["dY"] = dy;
  GradContext gc{node, {"dY"}, std::vector<bool>(inputs.size(), false), em};
  for (int i : schema->diff_inputs)
    if (i < static_cast<int>(inputs.size()) && inputs[i].defined() && is_floating(inputs[i].dtype()))
      gc.wants[i] = true;
  std::vector<Tensor> grads;
  for (const std::string& name : schema->grad(gc)) grads.push_back(name.empty() ? Tensor() : em.values.at(name));
  return grads;
}

}  // namespace cbt::test
