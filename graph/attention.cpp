// Attention as Mul, Transpose, Reshape, MatMul, Tanh, Where, Add, Softmax (attention.h).
#include "graph/attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "graph/errors.h"

namespace cbt {
namespace {

// The shapes of one Attention node's operands, in heads.
struct Heads {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head = 0, v_head = 0;
  bool split = false;  // 3-D operands: (batch, length, heads * head size)
};

class AttentionWriter {
 public:
  AttentionWriter(const Node& n, const std::map<std::string, ValueType>& types, const FreshName& fresh)
      : n_(n), types_(types), w_(n.name.empty() ? n.outputs[0] : n.name, fresh) {}

  Expansion run() {
    check();
    const ValueType& q = types_.at(n_.inputs[0]);
    dtype_ = q.dtype;
    const int64_t group = h_.q_heads / h_.kv_heads;
    const double scale = n_.attrs.has("scale") ? n_.attrs.get_float("scale", 1.0f) : 1.0 / std::sqrt(double(h_.head));
    const std::string root = scalar(std::sqrt(scale), "sqrt_scale");
    const std::string qs = add("Mul", {heads(n_.inputs[0], h_.q_heads, h_.q_len), root});
    const std::string ks = add("Mul", {heads(n_.inputs[1], h_.kv_heads, h_.kv_len), root});
    const std::string v = heads(n_.inputs[2], h_.kv_heads, h_.kv_len);
    Attributes swap;
    swap.set("perm", std::vector<int64_t>{0, 1, 3, 2});
    const std::string kt = add("Transpose", {ks}, swap);
    // Each key/value head serves `group` consecutive query heads: those heads' queries as one
    // longer sequence against it.
    std::string scores = add("MatMul", {grouped(qs, group, h_.head), kt});
    if (group > 1) scores = reshape(scores, {0, h_.q_heads, h_.q_len, h_.kv_len});
    output(0, scores);
    const float cap = n_.attrs.get_float("softcap", 0.0f);
    if (cap > 0)
      scores = add("Mul", {add("Tanh", {add("Div", {scores, scalar(cap, "softcap")})}), scalar(cap, "softcap")});
    output(1, scores);

    bool may_empty = false;
    std::string bias = window_bias(may_empty);
    if (n_.has_input(3)) {
      const ValueType& mask = types_.at(n_.inputs[3]);
      std::string m = n_.inputs[3];
      if (mask.dtype == DType::Bool) m = add("Where", {m, scalar(0.0f, "zero"), scalar(-kInf, "minus_inf")});
      bias = bias.empty() ? m : add("Add", {m, bias});
      may_empty = true;
    }
    std::string probs;
    if (bias.empty()) {
      output(2, scores);
      probs = softmax(scores);
    } else if (!may_empty) {
      const std::string biased = add("Add", {scores, bias});
      output(2, biased);
      probs = softmax(biased);
    } else {
      // A row whose every bias is -inf would be NaN: it takes a bias of 0 instead (finite,
      // so no NaN reaches the gradient either) and its probabilities are then zeroed.
      Attributes keep;
      keep.set("keepdims", int64_t{1});
      const std::string best = add("ReduceMax", {bias, w_.ints({-1}, "last_axis")}, keep);
      const std::string some = add("Greater", {best, scalar(-kInf, "minus_inf")});
      if (wants(2)) output(2, add("Add", {scores, bias}));
      probs = add("Where", {some, softmax(add("Add", {scores, add("Where", {some, bias, scalar(0.0f, "zero")})})),
                            scalar(0.0f, "zero")});
    }
    output(3, probs);
    if (group > 1) probs = reshape(probs, {0, h_.kv_heads, group * h_.q_len, h_.kv_len});
    const std::string& out = n_.outputs[0];
    std::string y = add("MatMul", {probs, v}, {}, h_.split || group > 1 ? "" : out);
    if (group > 1) y = reshape(y, {0, h_.q_heads, h_.q_len, h_.v_head}, h_.split ? "" : out);
    if (h_.split) {
      Attributes back;
      back.set("perm", std::vector<int64_t>{0, 2, 1, 3});
      reshape(add("Transpose", {y}, back), {0, 0, h_.q_heads * h_.v_head}, out);
    }
    return std::move(w_.ex);
  }

 private:
  static constexpr float kInf = std::numeric_limits<float>::infinity();

  [[noreturn]] void fail(const std::string& msg) const { throw ModelError("node " + n_.describe() + ": " + msg); }

  static std::string dims(const Shape& s) {
    std::string r = "(";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + ")";
  }

  void check() {
    if (n_.inputs.size() < 3 || !n_.has_input(0) || !n_.has_input(1) || !n_.has_input(2) || n_.outputs.empty() ||
        n_.outputs[0].empty())
      fail("Attention takes Q, K and V and gives Y");
    if (n_.has_input(4) || n_.has_input(5) || n_.has_input(6) || wants_output(1) || wants_output(2))
      fail(
          "a key/value cache (past_key, past_value, present_key, present_value, nonpad_kv_seqlen) serves "
          "inference token by token; cbtrain trains without one: export the model without a cache");
    const ValueType& q = types_.at(n_.inputs[0]);
    const ValueType& k = types_.at(n_.inputs[1]);
    const ValueType& v = types_.at(n_.inputs[2]);
    if (q.dtype != DType::Float32 && q.dtype != DType::Float64)
      fail(std::string("Q, K and V must be float32 or float64, Q is ") + dtype_name(q.dtype));
    if (k.dtype != q.dtype || v.dtype != q.dtype) fail("Q, K and V must have one type");
    const size_t rank = q.shape.size();
    if ((rank != 3 && rank != 4) || k.shape.size() != rank || v.shape.size() != rank)
      fail("Q, K and V must be all 3-D or all 4-D; their shapes are " + dims(q.shape) + ", " + dims(k.shape) + ", " +
           dims(v.shape));
    h_.batch = q.shape[0];
    h_.split = rank == 3;
    if (h_.split) {
      h_.q_heads = n_.attrs.get_int("q_num_heads", 0);
      h_.kv_heads = n_.attrs.get_int("kv_num_heads", 0);
      if (h_.q_heads <= 0 || h_.kv_heads <= 0) fail("3-D Q, K and V need q_num_heads and kv_num_heads");
      if (q.shape[2] % h_.q_heads || k.shape[2] % h_.kv_heads || v.shape[2] % h_.kv_heads)
        fail("the hidden sizes of Q, K and V " + dims({q.shape[2], k.shape[2], v.shape[2]}) +
             " must be multiples of their heads (" + std::to_string(h_.q_heads) + ", " + std::to_string(h_.kv_heads) +
             ")");
      h_.q_len = q.shape[1];
      h_.kv_len = k.shape[1];
      h_.head = q.shape[2] / h_.q_heads;
      if (k.shape[2] / h_.kv_heads != h_.head) fail("the heads of Q and K must have one size");
      h_.v_head = v.shape[2] / h_.kv_heads;
      if (v.shape[1] != h_.kv_len) fail("K and V must have one sequence length");
    } else {
      h_.q_heads = q.shape[1];
      h_.kv_heads = k.shape[1];
      h_.q_len = q.shape[2];
      h_.kv_len = k.shape[2];
      h_.head = q.shape[3];
      h_.v_head = v.shape[3];
      if (k.shape[3] != h_.head) fail("the heads of Q and K must have one size");
      if (v.shape[1] != h_.kv_heads || v.shape[2] != h_.kv_len)
        fail("V " + dims(v.shape) + " must have K's heads and sequence length " + dims(k.shape));
    }
    if (k.shape[0] != h_.batch || v.shape[0] != h_.batch) fail("Q, K and V must have one batch size");
    if (h_.kv_heads <= 0 || h_.q_heads % h_.kv_heads)
      fail("the query heads (" + std::to_string(h_.q_heads) + ") must be a multiple of the key/value heads (" +
           std::to_string(h_.kv_heads) + ")");
    if (n_.has_input(3)) {
      const ValueType& m = types_.at(n_.inputs[3]);
      if (m.dtype != DType::Bool && m.dtype != q.dtype)
        fail(std::string("attn_mask must be bool or of Q's type, is ") + dtype_name(m.dtype));
      if (m.shape.empty() || m.shape.back() != h_.kv_len)
        fail("attn_mask " + dims(m.shape) + " must end in the key sequence length " + std::to_string(h_.kv_len) +
             " (a shorter mask is not padded)");
    }
    const int64_t mode = n_.attrs.get_int("qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3) fail("qk_matmul_output_mode must be 0..3, is " + std::to_string(mode));
  }

  bool wants_output(size_t i) const { return n_.outputs.size() > i && !n_.outputs[i].empty(); }
  // Whether the optional 4th output (qk_matmul_output) is wanted at this stage (its mode).
  bool wants(int64_t stage) const { return wants_output(3) && n_.attrs.get_int("qk_matmul_output_mode", 0) == stage; }
  void output(int64_t stage, const std::string& value) {
    if (wants(stage)) add("Identity", {value}, {}, n_.outputs[3]);
  }

  std::string add(const std::string& op, std::vector<std::string> in, Attributes a = {}, const std::string& out = "") {
    return w_.add(op, std::move(in), std::move(a), op, out);
  }
  std::string reshape(const std::string& x, const std::vector<int64_t>& shape, const std::string& out = "") {
    return add("Reshape", {x, w_.ints(shape, "shape")}, {}, out);
  }
  // A constant of Q's type (float64 keeps every digit of `v`), one per value.
  std::string scalar(double v, const std::string& hint) {
    auto it = scalars_.find(v);
    if (it != scalars_.end()) return it->second;
    Tensor t(dtype_, {});
    if (dtype_ == DType::Float64)
      t.ptr<double>()[0] = v;
    else
      t.ptr<float>()[0] = static_cast<float>(v);
    return scalars_[v] = w_.constant(t, hint);
  }
  std::string softmax(const std::string& x) {
    Attributes a;
    a.set("axis", int64_t{-1});
    return add("Softmax", {x}, a);
  }

  // An operand as (batch, heads, length, head size).
  std::string heads(const std::string& x, int64_t count, int64_t length) {
    if (!h_.split) return x;
    Attributes a;
    a.set("perm", std::vector<int64_t>{0, 2, 1, 3});
    return add("Transpose", {reshape(x, {0, length, count, -1})}, a);
  }
  // Q's heads of one key/value head as one sequence: (batch, kv heads, group * length, head size).
  std::string grouped(const std::string& q, int64_t group, int64_t head) {
    return group == 1 ? q : reshape(q, {0, h_.kv_heads, group * h_.q_len, head});
  }

  // The constant bias of is_causal and the sliding window, (q length, kv length), 0 where a
  // query may attend a key and -inf where not; empty when neither is set. `may_empty` is set
  // when some query may attend no key.
  std::string window_bias(bool& may_empty) {
    const bool causal = n_.attrs.get_int("is_causal", 0) != 0;
    const int64_t left = n_.attrs.get_int("left_window_size", -1);
    const int64_t right = n_.attrs.get_int("right_window_size", -1);
    if (!causal && left < 0 && right < 0) return "";
    std::vector<float> b(static_cast<size_t>(h_.q_len * h_.kv_len), 0.0f);
    for (int64_t i = 0; i < h_.q_len; ++i) {
      bool any = false;
      for (int64_t j = 0; j < h_.kv_len; ++j) {
        const bool ok = (!causal || j <= i) && (left < 0 || j >= i - left) && (right < 0 || j <= i + right);
        if (!ok) b[static_cast<size_t>(i * h_.kv_len + j)] = -kInf;
        any = any || ok;
      }
      may_empty = may_empty || !any;
    }
    Tensor t = Tensor::from_f32(b, {h_.q_len, h_.kv_len});
    return w_.constant(dtype_ == DType::Float64 ? cast_float(t, DType::Float64) : t, "causal_bias");
  }

  const Node& n_;
  const std::map<std::string, ValueType>& types_;
  ExpansionWriter w_;
  Heads h_;
  DType dtype_ = DType::Float32;
  std::map<double, std::string> scalars_;
};

}  // namespace

bool is_attention(const Node& n) { return n.domain.empty() && n.op_type == "Attention"; }

Expansion expand_attention(const Node& n, const std::map<std::string, ValueType>& types, int64_t opset,
                           const FreshName& fresh) {
  if (opset < 23)
    throw ModelError("node " + n.describe() + ": Attention is an op of opset 23 and later; the model's is " +
                     std::to_string(opset));
  return AttentionWriter(n, types, fresh).run();
}

std::pair<std::string, std::string> attention_op_summary() {
  return {"Attention",
          "scaled dot-product attention (3-D or 4-D, grouped-query heads, scale, softcap, bool or float attn_mask, "
          "is_causal, sliding window, qk_matmul_output; no key/value cache): MatMul, Softmax and the like at binding"};
}

}  // namespace cbt
