// Unrolls LSTM, GRU and RNN into the ops they are made of (recurrent.h), after the ONNX
// definitions: gates iofc (LSTM), zrh (GRU), one (RNN); W (dirs, gates*H, I), R (dirs, gates*H, H),
// B (dirs, 2*gates*H) = [Wb, Rb]; Y (T, dirs, B, H) or, with layout 1, (B, T, dirs, H).
#include "graph/recurrent.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

#include "graph/errors.h"

namespace cbt {
namespace {

using Kind = RecurrentKind;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A recurrent activation by ONNX's name: cbtrain's op (Affine and ScaledTanh are made of Mul,
// Add and Tanh when unrolled), whether it takes alpha and beta, and their defaults (those of
// the ONNX ops; 0 for Affine and ScaledTanh, as onnxruntime).
struct ActivationKind {
  const char* name;
  const char* op;
  bool alpha, beta;
  float alpha_default, beta_default;
};

const ActivationKind* activation_kind(const std::string& name) {
  static const ActivationKind known[] = {{"sigmoid", "Sigmoid", false, false, 0, 0},
                                         {"tanh", "Tanh", false, false, 0, 0},
                                         {"relu", "Relu", false, false, 0, 0},
                                         {"softsign", "Softsign", false, false, 0, 0},
                                         {"softplus", "Softplus", false, false, 0, 0},
                                         {"leakyrelu", "LeakyRelu", true, false, 0.01f, 0},
                                         {"thresholdedrelu", "ThresholdedRelu", true, false, 1.0f, 0},
                                         {"elu", "Elu", true, false, 1.0f, 0},
                                         {"hardsigmoid", "HardSigmoid", true, true, 0.2f, 0.5f},
                                         {"scaledtanh", "ScaledTanh", true, true, 0, 0},
                                         {"affine", "Affine", true, true, 0, 0}};
  for (const auto& k : known)
    if (lower(name) == k.name) return &k;
  return nullptr;
}

}  // namespace

RecurrentForm read_recurrent_form(const Node& n, const RecurrentInputType& input_type,
                                  const RecurrentInputValue& input_value) {
  auto fail = [&n](const std::string& msg) { throw ModelError("node " + n.describe() + ": " + msg); };
  auto type = [&](size_t i) -> const ValueType& {
    const ValueType* t = n.has_input(i) ? input_type(i) : nullptr;
    if (!t) fail("input " + std::to_string(i) + " is missing");
    return *t;
  };
  auto check_shape = [&](size_t i, const char* what, const Shape& want) {
    const Shape& s = type(i).shape;
    if (s != want) fail(std::string(what) + " has shape " + shape_str(s) + ", expected " + shape_str(want));
  };
  RecurrentForm f;
  f.kind = n.op_type == "LSTM" ? RecurrentKind::Lstm : n.op_type == "GRU" ? RecurrentKind::Gru : RecurrentKind::Rnn;
  f.gates = f.kind == RecurrentKind::Lstm ? 4 : f.kind == RecurrentKind::Gru ? 3 : 1;
  const ValueType& x = type(0);
  if (x.shape.size() != 3) fail("X must have rank 3, has shape " + shape_str(x.shape));
  if (!is_floating(x.dtype)) fail("X must be a float tensor");
  f.dtype = x.dtype;
  f.layout = n.attrs.get_int("layout", 0);
  if (f.layout != 0 && f.layout != 1) fail("layout must be 0 or 1, is " + std::to_string(f.layout));
  f.steps = x.shape[f.layout == 1 ? 1 : 0];
  f.batch = x.shape[f.layout == 1 ? 0 : 1];
  f.input = x.shape[2];
  const std::string dir = n.attrs.get_string("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    fail("direction must be forward, reverse or bidirectional, is '" + dir + "'");
  f.dirs = dir == "bidirectional" ? 2 : 1;
  f.reverse_only = dir == "reverse";
  const Shape& r = type(2).shape;
  if (r.size() != 3) fail("R must have rank 3, has shape " + shape_str(r));
  f.hidden = n.attrs.get_int("hidden_size", r[2]);
  if (f.hidden <= 0) fail("hidden_size must be positive");
  const int64_t gh = f.gates * f.hidden;
  check_shape(1, "W", {f.dirs, gh, f.input});
  check_shape(2, "R", {f.dirs, gh, f.hidden});
  f.has_bias = n.has_input(3);
  if (f.has_bias) check_shape(3, "B", {f.dirs, 2 * gh});
  if (n.has_input(4)) {
    const ValueType& lt = type(4);
    if ((lt.dtype != DType::Int32 && lt.dtype != DType::Int64) || lt.shape != Shape{f.batch})
      fail("sequence_lens must be int32 or int64 of shape (" + std::to_string(f.batch) + "), has " +
           dtype_name(lt.dtype) + " " + shape_str(lt.shape));
    const Tensor* lens = input_value(4);
    bool full = lens != nullptr;  // a constant of every step: no masks needed
    for (int64_t b = 0; lens && b < f.batch; ++b) {
      const int64_t len = lens->at_i64(b);
      if (len < 0 || len > f.steps)
        fail("sequence_lens holds " + std::to_string(len) + ", outside [0, " + std::to_string(f.steps) + "]");
      full = full && len == f.steps;
    }
    f.has_lengths = !full;
  }
  const Shape state = f.layout == 1 ? Shape{f.batch, f.dirs, f.hidden} : Shape{f.dirs, f.batch, f.hidden};
  f.has_h0 = n.has_input(5);
  if (f.has_h0) check_shape(5, "initial_h", state);
  f.has_c0 = n.has_input(6);
  if (f.has_c0) {
    if (f.kind != RecurrentKind::Lstm) fail("has a seventh input; only LSTM has initial_c");
    check_shape(6, "initial_c", state);
  }
  f.has_peepholes = n.has_input(7);
  if (f.has_peepholes) {
    if (f.kind != RecurrentKind::Lstm) fail("has an eighth input; only LSTM has the peepholes P");
    check_shape(7, "P", {f.dirs, 3 * f.hidden});
  }
  f.input_forget = n.attrs.get_int("input_forget", 0) != 0;
  if (f.input_forget && f.kind != RecurrentKind::Lstm) fail("input_forget is LSTM's");
  f.clip = n.attrs.get_float("clip", 0.0f);
  if (n.attrs.has("clip") && !(f.clip > 0)) fail("clip must be positive");
  f.linear_before_reset = f.kind == RecurrentKind::Gru && n.attrs.get_int("linear_before_reset", 0) != 0;
  if (n.outputs.size() > 2 && !n.outputs[2].empty() && f.kind != RecurrentKind::Lstm)
    fail("has a third output; only LSTM has Y_c");

  const size_t per_dir = f.kind == RecurrentKind::Lstm ? 3 : f.kind == RecurrentKind::Gru ? 2 : 1;
  std::vector<std::string> names = n.attrs.get_strings("activations", {});
  if (names.empty()) {
    names = f.kind == RecurrentKind::Lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
            : f.kind == RecurrentKind::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                           : std::vector<std::string>{"Tanh"};
  }
  if (names.size() == per_dir && f.dirs == 2) {
    const std::vector<std::string> forward = names;  // the same functions for both directions
    names.insert(names.end(), forward.begin(), forward.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(f.dirs))
    fail("activations lists " + std::to_string(names.size()) + " functions, expected " +
         std::to_string(per_dir * f.dirs) + " (" + std::to_string(per_dir) + " per direction)");
  // activation_alpha and activation_beta go, in order, to the functions that take them.
  const std::vector<float> alphas = n.attrs.get_floats("activation_alpha"),
                           betas = n.attrs.get_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const auto& name : names) {
    const ActivationKind* k = activation_kind(name);
    if (!k)
      fail("activation '" + name +
           "' is not supported (Sigmoid, Tanh, Relu, Softsign, Softplus, LeakyRelu, ThresholdedRelu, Elu, "
           "HardSigmoid, ScaledTanh, Affine are)");
    f.activations.push_back(k->op);
    f.activation_alpha.push_back(!k->alpha ? 0 : next_alpha < alphas.size() ? alphas[next_alpha++] : k->alpha_default);
    f.activation_beta.push_back(!k->beta ? 0 : next_beta < betas.size() ? betas[next_beta++] : k->beta_default);
  }
  if (next_alpha < alphas.size() || next_beta < betas.size())
    fail("activation_alpha or activation_beta holds more values than its activations take");
  return f;
}

bool RecurrentForm::fused() const {
  auto all = [this](std::initializer_list<const char*> per_dir) {
    size_t i = 0;
    for (const auto& a : activations)
      if (a != *(per_dir.begin() + (i++ % per_dir.size()))) return false;
    return true;
  };
  const bool default_activations = kind == RecurrentKind::Lstm  ? all({"Sigmoid", "Tanh", "Tanh"})
                                   : kind == RecurrentKind::Gru ? all({"Sigmoid", "Tanh"})
                                                                : all({"Tanh"}) || all({"Relu"});
  return dtype == DType::Float32 && layout == 0 && !reverse_only && default_activations && !input_forget &&
         (kind != RecurrentKind::Gru || linear_before_reset) && !has_peepholes && clip == 0 && !has_lengths;
}

namespace {

class Unroller {
 public:
  Unroller(const Node& n, const std::map<std::string, ValueType>& types, const std::map<std::string, Tensor>& consts,
           int64_t opset, const FreshName& fresh)
      : n_(n), types_(types), consts_(consts), opset_(opset), w_("", fresh) {}

  Unrolled run() {
    read_signature();
    std::vector<std::vector<std::string>> hs(f_.dirs);
    std::vector<std::string> h_last(f_.dirs), c_last(f_.dirs);
    for (int64_t d = 0; d < f_.dirs; ++d) direction(d, hs[d], h_last[d], c_last[d]);
    const bool batch_first = f_.layout == 1;
    if (n_.outputs.size() > 0 && !n_.outputs[0].empty()) {
      // Y: each step's H as (1, 1, B, H) or (B, 1, 1, H), joined along time, then directions.
      const Shape piece = batch_first ? Shape{f_.batch, 1, 1, f_.hidden} : Shape{1, 1, f_.batch, f_.hidden};
      std::vector<std::string> per_dir;
      for (int64_t d = 0; d < f_.dirs; ++d)
        per_dir.push_back(stack(hs[d], piece, batch_first ? 1 : 0, f_.dirs == 1 ? n_.outputs[0] : ""));
      if (f_.dirs > 1) add("Concat", per_dir, axis_attr(batch_first ? 2 : 1), "Y", n_.outputs[0]);
    }
    const Shape state = batch_first ? Shape{f_.batch, 1, f_.hidden} : Shape{1, f_.batch, f_.hidden};
    if (n_.outputs.size() > 1 && !n_.outputs[1].empty()) stack(h_last, state, batch_first ? 1 : 0, n_.outputs[1]);
    if (n_.outputs.size() > 2 && !n_.outputs[2].empty()) stack(c_last, state, batch_first ? 1 : 0, n_.outputs[2]);
    return std::move(w_.ex);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw ModelError("node " + n_.describe() + ": " + msg); }

  const ValueType& type(size_t i) const {
    if (!n_.has_input(i)) fail("input " + std::to_string(i) + " is missing");
    return types_.at(n_.inputs[i]);
  }

  void read_signature() {
    f_ = read_recurrent_form(
        n_, [this](size_t i) { return &types_.at(n_.inputs[i]); },
        [this](size_t i) {
          auto it = consts_.find(n_.inputs[i]);
          return it == consts_.end() ? nullptr : &it->second;
        });
    w_.base = n_.name.empty() ? n_.outputs.empty() ? n_.op_type : n_.outputs[0] : n_.name;
  }

  // ---- emitting ----
  std::vector<std::string> add_n(const std::string& op, std::vector<std::string> inputs, size_t outputs, Attributes a,
                                 const std::string& hint) {
    return w_.add_n(op, std::move(inputs), outputs, std::move(a), hint);
  }
  std::string add(const std::string& op, std::vector<std::string> inputs, Attributes a, const std::string& hint,
                  const std::string& out_name = "") {
    return w_.add(op, std::move(inputs), std::move(a), hint, out_name);
  }
  std::string add(const std::string& op, std::vector<std::string> inputs, const std::string& hint) {
    return add(op, std::move(inputs), Attributes{}, hint);
  }
  std::string constant(Tensor t, const std::string& hint) { return w_.constant(std::move(t), hint); }
  // A scalar constant of the node's dtype (one per value).
  std::string scalar(double v, const std::string& hint) {
    auto it = scalars_.find(v);
    if (it != scalars_.end()) return it->second;
    Tensor t(f_.dtype, Shape{});
    if (f_.dtype == DType::Float64)
      *t.ptr<double>() = v;
    else
      *t.ptr<float>() = static_cast<float>(v);
    return scalars_.emplace(v, constant(std::move(t), hint)).first->second;
  }

  static Attributes axis_attr(int64_t axis) {
    Attributes a;
    a.set("axis", axis);
    return a;
  }

  // Split along `axis` into pieces of `sizes`, in this opset's form.
  std::vector<std::string> split(const std::string& x, int64_t axis, const std::vector<int64_t>& sizes,
                                 const std::string& hint) {
    Attributes a = axis_attr(axis);
    std::vector<std::string> in{x};
    if (opset_ >= 13)
      in.push_back(constant(Tensor::from_i64(sizes, {static_cast<int64_t>(sizes.size())}), hint + "_sizes"));
    else
      a.set("split", sizes);
    return add_n("Split", std::move(in), sizes.size(), std::move(a), hint);
  }

  std::string reshape(const std::string& x, const Shape& shape, const std::string& hint, const std::string& out = "") {
    const std::string s = constant(Tensor::from_i64(shape, {static_cast<int64_t>(shape.size())}), hint + "_shape");
    return add("Reshape", {x, s}, Attributes{}, hint, out);
  }

  // x split along `axis` into `n` pieces of size 1, each reshaped to `piece`.
  std::vector<std::string> unstack(const std::string& x, int64_t axis, int64_t n, const Shape& piece,
                                   const std::string& hint) {
    if (n == 1) return {reshape(x, piece, hint)};
    std::vector<std::string> out;
    for (const auto& p : split(x, axis, std::vector<int64_t>(n, 1), hint)) out.push_back(reshape(p, piece, hint));
    return out;
  }

  // The values reshaped to `piece` and joined along `axis`, written to `out` ("" for a fresh name).
  std::string stack(const std::vector<std::string>& values, const Shape& piece, int64_t axis, const std::string& out) {
    if (values.size() == 1) return reshape(values[0], piece, "out", out);
    std::vector<std::string> parts;
    for (const auto& v : values) parts.push_back(reshape(v, piece, "out"));
    return add("Concat", parts, axis_attr(axis), "out", out);
  }

  std::string clip(const std::string& x) {
    if (f_.clip <= 0) return x;
    if (opset_ >= 11) return add("Clip", {x, lo_clip_, hi_clip_}, "clip");
    Attributes a;
    a.set("min", -f_.clip);
    a.set("max", f_.clip);
    return add("Clip", {x}, std::move(a), "clip");
  }
  // Function `which` of x: its op with alpha and beta where it takes them; ScaledTanh
  // (alpha tanh(beta x)) and Affine (alpha x + beta) of Mul, Tanh and Add.
  std::string apply(size_t which, const std::string& x, const std::string& hint) {
    const std::string& op = f_.activations[which];
    const float alpha = f_.activation_alpha[which], beta = f_.activation_beta[which];
    if (op == "ScaledTanh")
      return add("Mul",
                 {scalar(alpha, hint + "_a"), add("Tanh", {add("Mul", {scalar(beta, hint + "_b"), x}, hint)}, hint)},
                 hint);
    if (op == "Affine")
      return add("Add", {add("Mul", {scalar(alpha, hint + "_a"), x}, hint), scalar(beta, hint + "_b")}, hint);
    Attributes a;
    if (op == "LeakyRelu" || op == "ThresholdedRelu" || op == "Elu" || op == "HardSigmoid") a.set("alpha", alpha);
    if (op == "HardSigmoid") a.set("beta", beta);
    return add(op, {x}, std::move(a), hint);
  }
  // An activation of its (clipped) input.
  std::string act(size_t which, const std::string& x, const std::string& hint) { return apply(which, clip(x), hint); }

  // Step t's mask (N, 1) of the node's dtype: 1 for the samples whose sequence_lens exceed t
  // (made once, for the first direction that asks).
  const std::string& mask(int64_t t) {
    auto it = masks_.find(t);
    if (it != masks_.end()) return it->second;
    const std::string& lens = n_.inputs[4];
    Tensor step(types_.at(lens).dtype, Shape{});
    if (step.dtype() == DType::Int32)
      *step.ptr<int32_t>() = static_cast<int32_t>(t);
    else
      *step.ptr<int64_t>() = t;
    const std::string st = "len_t" + std::to_string(t);
    Attributes to;
    to.set("to", int64_t{f_.dtype == DType::Float64 ? 11 : 1});  // TensorProto.DOUBLE or FLOAT
    const std::string in = add("Cast", {add("Less", {constant(std::move(step), st), lens}, st + "_in")}, to, st);
    return masks_.emplace(t, reshape(in, {f_.batch, 1}, st + "_mask")).first->second;
  }

  // With sequence_lens: the state keeps its value where step t is past a sample's sequence
  // (prev + m (next - prev); from no state, m next).
  std::string held(int64_t t, const std::string& prev, const std::string& next, const std::string& hint) {
    const std::string& m = mask(t);
    if (prev.empty()) return add("Mul", {m, next}, hint);
    return add("Add", {prev, add("Mul", {m, add("Sub", {next, prev}, hint + "_d")}, hint + "_md")}, hint);
  }

  // Input `input` split along its directions' `axis` into one value of shape `piece` per
  // direction (made once, for the first direction that asks).
  const std::vector<std::string>& per_direction(size_t input, int64_t axis, const Shape& piece,
                                                const std::string& hint) {
    auto it = per_direction_.find(input);
    if (it == per_direction_.end())
      it = per_direction_.emplace(input, unstack(n_.inputs[input], axis, f_.dirs, piece, hint)).first;
    return it->second;
  }

  // One direction: its weights, the input's projection for every step at once, then the steps.
  void direction(int64_t d, std::vector<std::string>& hs, std::string& h_last, std::string& c_last) {
    const bool reverse = f_.reverse_only || d == 1;
    const int64_t H = f_.hidden, gh = f_.gates * H;
    const size_t a0 = static_cast<size_t>(d) * (f_.kind == Kind::Lstm ? 3 : f_.kind == Kind::Gru ? 2 : 1);
    const std::string tag = "d" + std::to_string(d);
    if (f_.clip > 0 && opset_ >= 11 && lo_clip_.empty()) {
      lo_clip_ = scalar(-f_.clip, "clip_min");
      hi_clip_ = scalar(f_.clip, "clip_max");
    }
    auto pick = [&](size_t input, const Shape& piece, const std::string& hint) {
      return per_direction(input, 0, piece, hint)[static_cast<size_t>(d)];
    };
    Attributes perm;
    perm.set("perm", std::vector<int64_t>{1, 0});
    const int64_t in = type(0).shape[2];
    const std::string wt = add("Transpose", {pick(1, {gh, in}, tag + "_W")}, perm, tag + "_Wt");
    std::string rt = add("Transpose", {pick(2, {gh, H}, tag + "_R")}, perm, tag + "_Rt");
    std::string xw = add("MatMul", {n_.inputs[0], wt}, tag + "_XW");
    std::string rb_h;  // GRU with linear_before_reset: Rbh, inside r * (...)
    if (n_.has_input(3)) {
      auto wr = split(pick(3, {2 * gh}, tag + "_B"), 0, {gh, gh}, tag + "_B");
      std::string rb = wr[1];
      if (f_.linear_before_reset) {
        auto zr_h = split(wr[1], 0, {2 * H, H}, tag + "_Rb");
        rb_h = zr_h[1];
        rb = add("Concat", {zr_h[0], constant(Tensor(f_.dtype, Shape{H}), tag + "_zeros")}, axis_attr(0), tag + "_Rb");
      }
      xw = add("Add", {xw, add("Add", {wr[0], rb}, tag + "_bias")}, tag + "_XWb");
    }
    const int64_t time_axis = f_.layout == 1 ? 1 : 0;
    const std::vector<std::string> xs = unstack(xw, time_axis, f_.steps, {f_.batch, gh}, tag + "_x");
    std::string rt_h;  // GRU without linear_before_reset: Rh^T apart from Rz, Rr
    if (f_.kind == Kind::Gru && !f_.linear_before_reset) {
      auto parts = split(rt, 1, {2 * H, H}, tag + "_Rt");
      rt = parts[0], rt_h = parts[1];
    }
    std::vector<std::string> p;  // LSTM peepholes i, o, f
    if (n_.has_input(7)) p = split(pick(7, {3 * H}, tag + "_P"), 0, {H, H, H}, tag + "_P");
    const Shape state{f_.batch, H};
    auto initial = [&](size_t input, const std::string& hint) -> std::string {
      if (!n_.has_input(input)) return "";
      return per_direction(input, f_.layout == 1 ? 1 : 0, state, hint)[static_cast<size_t>(d)];
    };
    std::string h = initial(5, tag + "_h0"), c = initial(6, tag + "_c0");
    hs.assign(static_cast<size_t>(f_.steps), "");
    for (int64_t s = 0; s < f_.steps; ++s) {
      const int64_t t = reverse ? f_.steps - 1 - s : s;
      const std::string st = tag + "_t" + std::to_string(t);
      const std::string& x = xs[static_cast<size_t>(t)];
      const std::string h_prev = h, c_prev = c;
      if (f_.kind == Kind::Lstm) {
        const std::string pre = h.empty() ? x : add("Add", {x, add("MatMul", {h, rt}, st + "_hR")}, st + "_pre");
        auto g = split(pre, 1, {H, H, H, H}, st + "_gates");  // i, o, f, c
        if (!p.empty() && !c.empty()) {
          g[0] = add("Add", {g[0], add("Mul", {c, p[0]}, st + "_pi")}, st + "_i_pre");
          g[2] = add("Add", {g[2], add("Mul", {c, p[2]}, st + "_pf")}, st + "_f_pre");
        }
        const std::string i = act(a0, g[0], st + "_i"), cc = act(a0 + 1, g[3], st + "_c");
        const std::string ic = add("Mul", {i, cc}, st + "_ic");
        if (c.empty()) {
          c = ic;
        } else {
          // input_forget couples the gates: f = 1 - i.
          const std::string f =
              f_.input_forget ? add("Sub", {scalar(1.0, st + "_one"), i}, st + "_f") : act(a0, g[2], st + "_f");
          c = add("Add", {add("Mul", {f, c}, st + "_fc"), ic}, st + "_C");
        }
        std::string o_pre = g[1];
        if (!p.empty()) o_pre = add("Add", {o_pre, add("Mul", {c, p[1]}, st + "_po")}, st + "_o_pre");
        const std::string o = act(a0, o_pre, st + "_o");
        // The cell state is not clipped: only the gates' inputs are.
        h = add("Mul", {o, apply(a0 + 2, c, st + "_hC")}, st + "_H");
      } else if (f_.kind == Kind::Gru) {
        auto x_zr_h = split(x, 1, {2 * H, H}, st + "_x");
        std::string zr = x_zr_h[0], hr_h;
        if (!h.empty()) {
          std::string hr = add("MatMul", {h, rt}, st + "_hR");
          if (f_.linear_before_reset) {
            auto parts = split(hr, 1, {2 * H, H}, st + "_hR");
            hr = parts[0], hr_h = parts[1];
          }
          zr = add("Add", {zr, hr}, st + "_zr_pre");
        }
        auto z_r = split(zr, 1, {H, H}, st + "_zr");
        const std::string z = act(a0, z_r[0], st + "_z"), r = act(a0, z_r[1], st + "_r");
        std::string h_pre = x_zr_h[1];
        if (f_.linear_before_reset) {
          std::string inner = hr_h;
          if (!rb_h.empty()) inner = inner.empty() ? rb_h : add("Add", {inner, rb_h}, st + "_hRb");
          if (!inner.empty()) h_pre = add("Add", {h_pre, add("Mul", {r, inner}, st + "_rh")}, st + "_h_pre");
        } else if (!h.empty()) {
          const std::string rh = add("MatMul", {add("Mul", {r, h}, st + "_rH"), rt_h}, st + "_rHR");
          h_pre = add("Add", {h_pre, rh}, st + "_h_pre");
        }
        const std::string hh = act(a0 + 1, h_pre, st + "_h");
        // H = (1 - z) hh + z H_prev = hh + z (H_prev - hh); with no H_prev, hh - z hh.
        h = h.empty() ? add("Sub", {hh, add("Mul", {z, hh}, st + "_zh")}, st + "_H")
                      : add("Add", {hh, add("Mul", {z, add("Sub", {h, hh}, st + "_dh")}, st + "_zdh")}, st + "_H");
      } else {
        const std::string pre = h.empty() ? x : add("Add", {x, add("MatMul", {h, rt}, st + "_hR")}, st + "_pre");
        h = act(a0, pre, st + "_H");
      }
      if (f_.has_lengths) {  // Y is 0 past a sample's sequence; the state is held
        hs[static_cast<size_t>(t)] = add("Mul", {mask(t), h}, st + "_Y");
        h = held(t, h_prev, h, st + "_Hheld");
        if (f_.kind == Kind::Lstm) c = held(t, c_prev, c, st + "_Cheld");
      } else {
        hs[static_cast<size_t>(t)] = h;
      }
    }
    h_last = h;
    c_last = c;
  }

  const Node& n_;
  const std::map<std::string, ValueType>& types_;
  const std::map<std::string, Tensor>& consts_;
  int64_t opset_;
  ExpansionWriter w_;

  RecurrentForm f_;  // what the node computes (read_recurrent_form)
  std::map<double, std::string> scalars_;
  std::string lo_clip_, hi_clip_;
  std::map<int64_t, std::string> masks_;  // step -> (N, 1): 1 where the step is in the sample's sequence
  std::map<size_t, std::vector<std::string>> per_direction_;
};

}  // namespace

bool is_recurrent(const Node& n) {
  return n.domain.empty() && (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN");
}

std::vector<std::pair<std::string, std::string>> recurrent_op_summaries() {
  const char* common =
      "forward, reverse, bidirectional; layout 0 or 1; initial states; sequence_lens; clip; every activation; "
      "on the GPU cuDNN's recurrent networks where they compute the form, otherwise unrolled over the sequence";
  return {{"GRU", std::string("gated recurrent unit (linear_before_reset 0 or 1; ") + common + ")"},
          {"LSTM", std::string("long short-term memory (peepholes; input_forget; ") + common + ")"},
          {"RNN", std::string("Elman recurrent network (") + common + ")"}};
}

Unrolled unroll_recurrent(const Node& n, const std::map<std::string, ValueType>& types,
                          const std::map<std::string, Tensor>& consts, int64_t opset, const FreshName& fresh) {
  return Unroller(n, types, consts, opset, fresh).run();
}

}  // namespace cbt
