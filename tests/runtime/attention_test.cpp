// Attention, RMSNormalization and RotaryEmbedding as rewritten when the graph is bound
// (graph/attention.h, graph/rms_normalization.h, graph/rotary_embedding.h): against a direct
// float64 computation of ONNX's definition over their forms, and what they refuse, naming the
// node. Against onnxruntime and in training: Cli.TransformerOpsMatchOnnxruntimeAndTrain,
// Cli.RotaryEmbeddingMatchesOnnxruntimeAndTrains; their gradients: ModelGradCheck.Attention*,
// ModelGradCheck.RotaryEmbedding.
#include "graph/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/bound_run.h"
#include "common/op_harness.h"
#include "graph/errors.h"
#include "graph/rms_normalization.h"
#include "graph/rotary_embedding.h"

namespace cbt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// `n` over inputs in0, in1, ... (an undefined tensor: an absent input), in0 the graph's input
// (its dim 0 the batch), the others constant initializers, bound at `opset` and run on the CPU:
// the values of n's named outputs, in order.
std::vector<Tensor> run_bound(Node n, const std::vector<Tensor>& in, int64_t opset) {
  n.name = "a";
  const test::BoundRun r = test::run_bound_graph(test::one_node_graph(n, in, opset), in[0]);
  for (const Node& node : r.bound.graph.nodes) EXPECT_NE(node.op_type, n.op_type) << "not rewritten";
  std::vector<Tensor> out;
  for (const auto& o : n.outputs)
    if (!o.empty()) out.push_back(r.values.at(o));
  return out;
}

// One Attention's form: its attributes and operands.
struct Form {
  std::string name;
  Shape q, k, v;  // 3-D (with q_heads/kv_heads) or 4-D
  int64_t q_heads = 0, kv_heads = 0;
  Tensor mask;  // undefined: none
  bool causal = false;
  double scale = 0, softcap = 0;             // 0: the default / none
  int64_t left = -1, right = -1, mode = -1;  // mode: the qk_matmul_output wanted, -1 none
  int64_t opset = 23;
};

// Element of `t` (shape `s`) at 4-D coordinates broadcast from the right (dims of 1 repeat).
double broadcast_at(const Tensor& t, const std::vector<int64_t>& at) {
  const Shape& s = t.shape();
  int64_t index = 0;
  for (size_t d = 0; d < s.size(); ++d) {
    const int64_t c = at[at.size() - s.size() + d];
    index = index * s[d] + (s[d] == 1 ? 0 : c);
  }
  return t.dtype() == DType::Bool ? (static_cast<const bool*>(t.data())[index] ? 0.0 : -kInf) : t.at_f64(index);
}

// ONNX's Attention computed directly: Y, and the stage of `f.mode` (scores, capped, biased or
// probabilities), both as float64 tensors of the op's output shapes.
std::pair<Tensor, Tensor> reference(const Form& f, const Tensor& q, const Tensor& k, const Tensor& v) {
  const bool split = f.q.size() == 3;
  const int64_t batch = f.q[0], qh = split ? f.q_heads : f.q[1], kvh = split ? f.kv_heads : f.k[1];
  const int64_t s_len = split ? f.q[1] : f.q[2], l_len = split ? f.k[1] : f.k[2];
  const int64_t d = split ? f.q[2] / qh : f.q[3], dv = split ? f.v[2] / kvh : f.v[3];
  auto at = [&](const Tensor& t, int64_t heads, int64_t len, int64_t size, int64_t b, int64_t h, int64_t i, int64_t c) {
    return split ? t.at_f64((b * len + i) * heads * size + h * size + c)
                 : t.at_f64(((b * heads + h) * len + i) * size + c);
  };
  const double scale = f.scale > 0 ? f.scale : 1.0 / std::sqrt(double(d));
  Tensor y(DType::Float64, split ? Shape{batch, s_len, qh * dv} : Shape{batch, qh, s_len, dv});
  Tensor stage(DType::Float64, {batch, qh, s_len, l_len});
  double* yp = y.ptr<double>();
  double* sp = stage.ptr<double>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < qh; ++h)
      for (int64_t i = 0; i < s_len; ++i) {
        const int64_t kh = h / (qh / kvh);
        std::vector<double> sc(l_len), capped(l_len), biased(l_len), p(l_len, 0.0);
        double best = -kInf;
        for (int64_t j = 0; j < l_len; ++j) {
          double s = 0;
          for (int64_t c = 0; c < d; ++c) s += at(q, qh, s_len, d, b, h, i, c) * at(k, kvh, l_len, d, b, kh, j, c);
          sc[j] = s * scale;
          capped[j] = f.softcap > 0 ? f.softcap * std::tanh(sc[j] / f.softcap) : sc[j];
          double bias = f.mask.defined() ? broadcast_at(f.mask, {b, h, i, j}) : 0.0;
          if ((f.causal && j > i) || (f.left >= 0 && j < i - f.left) || (f.right >= 0 && j > i + f.right)) bias = -kInf;
          biased[j] = capped[j] + bias;
          best = std::max(best, biased[j]);
        }
        if (best > -kInf) {
          double sum = 0;
          for (int64_t j = 0; j < l_len; ++j) sum += p[j] = std::exp(biased[j] - best);
          for (auto& x : p) x /= sum;
        }
        const std::vector<double>* pick[] = {&sc, &capped, &biased, &p};
        for (int64_t j = 0; j < l_len; ++j)
          sp[((b * qh + h) * s_len + i) * l_len + j] = f.mode >= 0 ? (*pick[f.mode])[j] : 0.0;
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < l_len; ++j) acc += p[j] * at(v, kvh, l_len, dv, b, kh, j, e);
          yp[split ? (b * s_len + i) * qh * dv + h * dv + e : ((b * qh + h) * s_len + i) * dv + e] = acc;
        }
      }
  return {y, stage};
}

Node attention_node(const Form& f) {
  Attributes a;
  if (f.q.size() == 3) {
    a.set("q_num_heads", f.q_heads);
    a.set("kv_num_heads", f.kv_heads);
  }
  if (f.causal) a.set("is_causal", int64_t{1});
  if (f.scale > 0) a.set("scale", static_cast<float>(f.scale));
  if (f.softcap > 0) a.set("softcap", static_cast<float>(f.softcap));
  if (f.left >= 0) a.set("left_window_size", f.left);
  if (f.right >= 0) a.set("right_window_size", f.right);
  if (f.mode >= 0) a.set("qk_matmul_output_mode", f.mode);
  Node n = test::make_node("Attention", 4, 4, a);
  n.outputs = {"y", "", "", f.mode >= 0 ? "qk" : ""};
  return n;
}

Tensor bool_tensor(const Shape& s, const std::vector<bool>& v) {
  Tensor t(DType::Bool, s);
  for (size_t i = 0; i < v.size(); ++i) static_cast<bool*>(t.data())[i] = v[i];
  return t;
}

TEST(AttentionTest, EveryFormAgainstItsDefinition) {
  // A bool mask (batch 2, 1, 3 queries, 4 keys): the second sample's middle row wholly false.
  const Tensor bmask = bool_tensor({2, 1, 3, 4}, {1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1,  //
                                                  1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1});
  // A float mask over (3 queries, 5 keys) whose first row is wholly -inf.
  Tensor fmask = test::random_tensor(DType::Float64, {3, 5}, 301);
  for (int j = 0; j < 5; ++j) fmask.ptr<double>()[j] = -kInf;
  fmask.ptr<double>()[7] = -kInf;
  const Tensor finite_mask = test::random_tensor(DType::Float64, {1, 2, 1, 4}, 302);
  std::vector<Form> forms;
  forms.push_back({"4-D, multi-head", {2, 2, 3, 4}, {2, 2, 3, 4}, {2, 2, 3, 5}});
  forms.push_back({"3-D, grouped heads, causal, capped, scaled", {2, 4, 12}, {2, 4, 6}, {2, 4, 4}, 4, 2});
  forms.back().causal = true, forms.back().softcap = 1.5, forms.back().scale = 0.375, forms.back().mode = 1;
  forms.push_back({"4-D, one key head, bool mask with an empty row, causal", {2, 3, 3, 2}, {2, 1, 4, 2}, {2, 1, 4, 3}});
  forms.back().mask = bmask, forms.back().causal = true, forms.back().mode = 3;
  forms.push_back({"4-D cross attention, float mask with an empty row", {2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 2}});
  forms.back().mask = fmask, forms.back().mode = 0;
  forms.push_back({"4-D, finite float mask", {2, 2, 3, 4}, {2, 2, 4, 4}, {2, 2, 4, 2}});
  forms.back().mask = finite_mask, forms.back().mode = 2;
  forms.push_back({"3-D, window left 1 right 0", {2, 4, 6}, {2, 4, 6}, {2, 4, 6}, 2, 2});
  forms.back().left = 1, forms.back().right = 0, forms.back().opset = 25;
  forms.push_back({"3-D, window left 0 right 1", {2, 4, 6}, {2, 4, 6}, {2, 4, 6}, 3, 3});
  forms.back().left = 0, forms.back().right = 1, forms.back().opset = 25;
  forms.push_back({"4-D, causal window over fewer keys: empty rows", {2, 1, 5, 3}, {2, 1, 3, 3}, {2, 1, 3, 3}});
  forms.back().causal = true, forms.back().left = 0, forms.back().opset = 25, forms.back().mode = 3;
  uint64_t seed = 310;
  for (const Form& f : forms) {
    SCOPED_TRACE(f.name);
    const Tensor q = test::random_tensor(DType::Float64, f.q, ++seed),
                 k = test::random_tensor(DType::Float64, f.k, ++seed),
                 v = test::random_tensor(DType::Float64, f.v, ++seed);
    const auto out = run_bound(attention_node(f), {q, k, v, f.mask}, f.opset);
    const auto [y, stage] = reference(f, q, k, v);
    EXPECT_EQ(test::compare_tensors(out[0], y, 1e-10, 1e-12), "");
    for (int64_t i = 0; i < out[0].numel(); ++i) ASSERT_TRUE(std::isfinite(out[0].at_f64(i))) << i;
    if (f.mode >= 0) {
      ASSERT_EQ(out.size(), 2u);
      Tensor got = out[1], want = stage;
      for (int64_t i = 0; i < want.numel(); ++i)  // -inf scores compare as equal
        if (std::isinf(want.at_f64(i)) && got.at_f64(i) == want.at_f64(i))
          got.ptr<double>()[i] = want.ptr<double>()[i] = 0;
      EXPECT_EQ(test::compare_tensors(got, want, 1e-10, 1e-12), "");
    }
  }
}

TEST(AttentionTest, FloatThirtyTwoAgreesWithFloatSixtyFour) {
  Form f{"3-D, grouped heads, causal", {3, 5, 8}, {3, 5, 4}, {3, 5, 6}, 2, 1};
  f.causal = true;
  const Tensor q = test::random_tensor(DType::Float32, f.q, 401), k = test::random_tensor(DType::Float32, f.k, 402),
               v = test::random_tensor(DType::Float32, f.v, 403);
  const Tensor y = run_bound(attention_node(f), {q, k, v, Tensor()}, 23)[0];
  ASSERT_EQ(y.dtype(), DType::Float32);
  const auto ref =
      reference(f, cast_float(q, DType::Float64), cast_float(k, DType::Float64), cast_float(v, DType::Float64));
  EXPECT_EQ(test::compare_tensors(y, ref.first, 1e-5, 1e-6), "");
}

TEST(AttentionTest, RefusesWhatItCannotRewriteNamingTheNode) {
  const Tensor q4 = test::random_tensor(DType::Float32, {2, 2, 3, 4}, 501), k4 = q4, v4 = q4,
               q3 = test::random_tensor(DType::Float32, {2, 3, 8}, 502);
  const Form plain{"", {2, 2, 3, 4}, {2, 2, 3, 4}, {2, 2, 3, 4}};
  Node cache = attention_node(plain);
  cache.outputs = {"y", "present_key", "present_value"};
  Node three = attention_node(plain);  // 3-D without its head counts
  Form odd{"", {2, 3, 8}, {2, 3, 8}, {2, 3, 8}, 3, 3};
  Form groups{"", {2, 3, 12}, {2, 3, 9}, {2, 3, 9}, 4, 3};
  const Tensor q12 = test::random_tensor(DType::Float32, {2, 3, 12}, 506),
               k9 = test::random_tensor(DType::Float32, {2, 3, 9}, 507);
  const struct {
    std::string what;
    Node node;
    std::vector<Tensor> in;
    int64_t opset;
    const char* message;
  } cases[] = {
      {"past_key", attention_node(plain), {q4, k4, v4, Tensor(), k4, v4}, 23, "key/value cache"},
      {"present outputs", cache, {q4, k4, v4}, 23, "key/value cache"},
      {"3-D without heads", three, {q3, q3, q3}, 23, "need q_num_heads and kv_num_heads"},
      {"hidden not in heads", attention_node(odd), {q3, q3, q3}, 23, "must be multiples of their heads"},
      {"heads not grouped", attention_node(groups), {q12, k9, k9}, 23, "must be a multiple of the key/value heads"},
      {"ranks", attention_node(plain), {q4, q3, v4}, 23, "all 3-D or all 4-D"},
      {"mask length",
       attention_node(plain),
       {q4, k4, v4, test::random_tensor(DType::Float32, {3, 5}, 503)},
       23,
       "must end in the key sequence length 3"},
      {"mask type",
       attention_node(plain),
       {q4, k4, v4, test::random_int_tensor({3, 3}, 0, 2, 504)},
       23,
       "attn_mask must be bool or of Q's type"},
      {"integers",
       attention_node(plain),
       {test::random_int_tensor({2, 2, 3, 4}, 0, 5, 505), k4, v4},
       23,
       "must be float32 or float64"},
      {"opset", attention_node(plain), {q4, k4, v4}, 21, "opset 23 and later"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    try {
      run_bound(c.node, c.in, c.opset);
      ADD_FAILURE() << "accepted";
    } catch (const ModelError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("Attention 'a'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    }
  }
}

// RMSNormalization over axis.. of X against a direct computation.
TEST(RmsNormalizationTest, OverEachAxisAgainstItsDefinition) {
  const Shape shape{2, 3, 4};
  const Tensor x = test::random_tensor(DType::Float64, shape, 601);
  for (int64_t axis : {-1, 1, -2, 0}) {
    SCOPED_TRACE(axis);
    const int64_t first = axis < 0 ? axis + 3 : axis;
    const Shape scale_shape(shape.begin() + first, shape.end());
    const Tensor scale = test::random_tensor(DType::Float64, scale_shape, 602);
    Attributes a;
    a.set("axis", axis);
    a.set("epsilon", 0.01f);
    Node n = test::make_node("RMSNormalization", 2, 1, a);
    n.outputs = {"y"};
    const Tensor y = run_bound(n, {x, scale}, 23)[0];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(first); d < shape.size(); ++d) inner *= shape[d];
    Tensor want(DType::Float64, shape);
    for (int64_t o = 0; o < x.numel() / inner; ++o) {
      double sq = 0;
      for (int64_t i = 0; i < inner; ++i) sq += x.at_f64(o * inner + i) * x.at_f64(o * inner + i);
      const double rms = std::sqrt(sq / double(inner) + double(0.01f));
      for (int64_t i = 0; i < inner; ++i)
        want.ptr<double>()[o * inner + i] = x.at_f64(o * inner + i) / rms * scale.at_f64(i);
    }
    EXPECT_EQ(test::compare_tensors(y, want, 1e-12, 1e-12), "");
  }
  Attributes far;
  far.set("axis", int64_t{3});
  Node n = test::make_node("RMSNormalization", 2, 1, far);
  n.outputs = {"y"};
  try {
    run_bound(n, {x, test::random_tensor(DType::Float64, {4}, 603)}, 23);
    ADD_FAILURE() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("RMSNormalization 'a': axis 3 is out of range"), std::string::npos)
        << e.what();
  }
}

// RotaryEmbedding against ONNX's definition: a 3-D X of 2 heads turned whole in halves with
// per-token caches (batch, sequence, head / 2), and a 4-D X turned in part (2 of 6), interleaved,
// with caches gathered by position_ids.
TEST(RotaryEmbeddingTest, BothLayoutsAgainstTheDefinition) {
  const int64_t batch = 2, seq = 3;
  for (bool four : {false, true}) {
    SCOPED_TRACE(four ? "4-D, interleaved, partial" : "3-D, halves, whole");
    const int64_t heads = 2, head = four ? 6 : 4, rot = four ? 2 : 4;
    const Tensor x = test::random_tensor(DType::Float64,
                                         four ? Shape{batch, heads, seq, head} : Shape{batch, seq, heads * head}, 701);
    Tensor positions = Tensor::from_i64({3, 0, 2, 1, 1, 4}, {batch, seq});
    const Shape cache = four ? Shape{5, rot / 2} : Shape{batch, seq, rot / 2};
    const Tensor cos = test::random_tensor(DType::Float64, cache, 702),
                 sin = test::random_tensor(DType::Float64, cache, 703);
    Attributes a;
    if (four) {
      a.set("interleaved", int64_t{1});
      a.set("rotary_embedding_dim", rot);
    } else {
      a.set("num_heads", heads);
    }
    Node n = test::make_node("RotaryEmbedding", four ? 4 : 3, 1, a);
    n.outputs = {"y"};
    std::vector<Tensor> in{x, cos, sin};
    if (four) in.push_back(positions);
    const Tensor y = run_bound(n, in, 23)[0];
    ASSERT_EQ(y.shape(), x.shape());
    auto at = [&](int64_t b, int64_t s, int64_t h, int64_t d) {  // index of (b, s, h, d) in X's layout
      return four ? ((b * heads + h) * seq + s) * head + d : (b * seq + s) * heads * head + h * head + d;
    };
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t d = 0; d < head; ++d) {
            double want = x.at_f64(at(b, s, h, d));
            if (d < rot) {
              const int64_t k = four ? d / 2 : d % (rot / 2), row = four ? positions.at_i64(b * seq + s) : b * seq + s;
              const double c = cos.at_f64(row * (rot / 2) + k), sn = sin.at_f64(row * (rot / 2) + k);
              const double x1 = x.at_f64(at(b, s, h, four ? 2 * k : k));
              const double x2 = x.at_f64(at(b, s, h, four ? 2 * k + 1 : k + rot / 2));
              const bool first = four ? d % 2 == 0 : d < rot / 2;
              want = first ? c * x1 - sn * x2 : sn * x1 + c * x2;
            }
            EXPECT_NEAR(y.at_f64(at(b, s, h, d)), want, 1e-12) << b << " " << s << " " << h << " " << d;
          }
  }
}

TEST(RotaryEmbeddingTest, RefusesWhatItCannotRewriteNamingTheNode) {
  const Tensor x3 = test::random_tensor(DType::Float32, {2, 3, 8}, 711),
               c2 = test::random_tensor(DType::Float32, {5, 2}, 712);
  const Tensor pos = Tensor::from_i64({0, 1, 2, 3, 4, 0}, {2, 3});
  Attributes none, two, odd;
  two.set("num_heads", int64_t{2});
  odd.set("num_heads", int64_t{2});
  odd.set("rotary_embedding_dim", int64_t{3});
  const struct {
    const char* what;
    Attributes a;
    std::vector<Tensor> in;
    const char* message;
  } cases[] = {
      {"heads", none, {x3, c2, c2, pos}, "a 3-D X needs num_heads"},
      {"odd", odd, {x3, c2, c2, pos}, "must be even and at most 4"},
      {"cache width", two, {x3, test::random_tensor(DType::Float32, {5, 3}, 713), c2, pos}, "must end in"},
      {"cache rank", two, {x3, c2, c2}, "without position_ids the caches must be 3-D"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Node n = test::make_node("RotaryEmbedding", c.in.size(), 1, c.a);
    n.outputs = {"y"};
    try {
      run_bound(n, c.in, 23);
      ADD_FAILURE() << "accepted";
    } catch (const ModelError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("RotaryEmbedding 'a'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    }
  }
}

// The caches are tables: initializers that feed them become constants at load, never trained.
TEST(RotaryEmbeddingTest, CachesAreConstants) {
  Graph g;
  g.initializers.emplace("cos", test::random_tensor(DType::Float32, {5, 2}, 721));
  g.initializers.emplace("sin", test::random_tensor(DType::Float32, {5, 2}, 722));
  g.initializers.emplace("w", test::random_tensor(DType::Float32, {8, 8}, 723));
  Node n = test::make_node("RotaryEmbedding", 3, 1);
  n.inputs = {"x", "cos", "sin"};
  g.nodes.push_back(n);
  mark_rotary_caches_constant(g);
  EXPECT_TRUE(g.constant_initializers.count("cos"));
  EXPECT_TRUE(g.constant_initializers.count("sin"));
  EXPECT_FALSE(g.constant_initializers.count("w"));
}

}  // namespace
}  // namespace cbt
