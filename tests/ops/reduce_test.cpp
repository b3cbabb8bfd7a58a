// Tests of ReduceSum/ReduceMean/ReduceMax/ReduceMin/ReduceProd: axes by opset, keepdims, empty axes,
// gradients, ties, failures; and of ArgMax/ArgMin.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "common/op_harness.h"
#include "graph/composite_ops.h"

namespace cbt::test {
namespace {

Attributes reduce_attrs(int64_t keepdims, std::vector<int64_t> axes = {}, bool axes_attr = false, int64_t noop = 0) {
  Attributes a;
  a.set("keepdims", keepdims);
  if (axes_attr) a.set("axes", axes);
  if (noop) a.set("noop_with_empty_axes", noop);
  return a;
}

// Naive reference: sums x (3-D) over the axes marked in `red`, output in keepdims layout.
Tensor naive_reduce(const Tensor& x, std::vector<bool> red, bool mean) {
  Shape s = x.shape(), o = s;
  for (size_t d = 0; d < 3; ++d)
    if (red[d]) o[d] = 1;
  Tensor y(DType::Float64, o);
  int64_t count = x.numel() / y.numel();
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < s[2]; ++k) {
        int64_t oi = red[0] ? 0 : i, oj = red[1] ? 0 : j, ok = red[2] ? 0 : k;
        y.ptr<double>()[(oi * o[1] + oj) * o[2] + ok] += x.at_f64((i * s[1] + j) * s[2] + k) / (mean ? count : 1);
      }
  return y;
}

TEST(ReduceTest, ForwardMatchesNaive) {
  Tensor x = random_tensor(DType::Float64, {3, 4, 5}, 1);
  const std::vector<std::vector<int64_t>> axes_cases = {{0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const char* op : {"ReduceSum", "ReduceMean"}) {
    bool mean = std::string(op) == "ReduceMean";
    for (const auto& axes : axes_cases) {
      std::vector<bool> red(3, false);
      for (int64_t a : axes) red[(a + 3) % 3] = true;
      Tensor want = naive_reduce(x, red, mean);
      for (int64_t keep : {0, 1}) {
        // Axes as input (ReduceSum 13+, ReduceMean 18+) and as attribute (older opsets).
        EagerOptions new_opset{false, 0, 18}, old_opset{false, 0, 12};
        auto yi = run_node(make_node(op, 2, 1, reduce_attrs(keep)), {x, Tensor::from_i64(axes, {(int64_t)axes.size()})},
                           new_opset)[0];
        auto ya = run_node(make_node(op, 1, 1, reduce_attrs(keep, axes, true)), {x}, old_opset)[0];
        EXPECT_EQ(compare_tensors(yi.reshaped(want.shape()), want, 1e-12, 1e-12), "") << op;
        EXPECT_EQ(compare_tensors(ya.reshaped(want.shape()), want, 1e-12, 1e-12), "") << op;
        EXPECT_EQ(yi.shape(), ya.shape());
        EXPECT_EQ(static_cast<int64_t>(yi.rank()), keep ? 3 : 3 - static_cast<int64_t>(axes.size()));
      }
    }
  }
}

TEST(ReduceTest, EmptyAxesAndLargeInputs) {
  Tensor x = random_tensor(DType::Float64, {2, 3}, 2);
  auto all = run_node(make_node("ReduceSum", 1, 1, reduce_attrs(0)), {x})[0];
  EXPECT_EQ(all.shape(), Shape{});
  double s = 0;
  for (int64_t i = 0; i < x.numel(); ++i) s += x.at_f64(i);
  EXPECT_NEAR(all.at_f64(0), s, 1e-12);
  auto noop = run_node(make_node("ReduceSum", 1, 1, reduce_attrs(1, {}, false, 1)), {x})[0];
  EXPECT_EQ(compare_tensors(noop, x, 0, 1e-15), "");
  auto ints = run_node(make_node("ReduceSum", 2, 1, reduce_attrs(0)),
                       {Tensor::from_i64({1, 2, 3, 4}, {2, 2}), Tensor::from_i64({1}, {1})})[0];
  EXPECT_EQ(ints.to_i64_vector(), (std::vector<int64_t>{3, 7}));
  // Parallel paths: reduce rows and columns of a large float tensor.
  Tensor big = random_tensor(DType::Float32, {300, 500}, 3);
  for (int64_t axis : {0, 1}) {
    auto y = run_node(make_node("ReduceMean", 1, 1, reduce_attrs(1, {axis}, true)), {big}, {false, 0, 17})[0];
    Tensor want(DType::Float64, y.shape());
    for (int64_t i = 0; i < 300; ++i)
      for (int64_t j = 0; j < 500; ++j)
        want.ptr<double>()[axis ? i : j] += big.at_f64(i * 500 + j) / (axis ? 500 : 300);
    EXPECT_EQ(compare_tensors(y, want, 1e-4, 1e-5), "") << axis;
  }
}

TEST(ReduceTest, Gradients) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {1}}, {{2, 3, 4}, {0, 2}}, {{1, 5}, {-1}}, {{3, 3}, {0}}, {{3, 3}, {}}, {{2, 3, 4, 5}, {2, 3}}};
  for (const char* op : {"ReduceSum", "ReduceMean"})
    for (auto& [s, axes] : cases)
      for (int64_t keep : {0, 1}) {
        Tensor x = random_tensor(DType::Float64, s, 4);
        GradCheckOptions o;
        o.opset = 18;
        auto r =
            grad_check(make_node(op, 2, 1, reduce_attrs(keep)), {x, Tensor::from_i64(axes, {(int64_t)axes.size()})}, o);
        EXPECT_TRUE(r.ok) << op << " " << shape_str(s) << " keep " << keep << "\n" << r.report;
        o.opset = 11;
        auto ra = grad_check(make_node(op, 1, 1, reduce_attrs(keep, axes, true)), {x}, o);
        EXPECT_TRUE(ra.ok) << op << " attr " << shape_str(s) << "\n" << ra.report;
      }
}

// Naive reference: the max (or min) of x (3-D) over the axes marked in `red`, keepdims layout.
Tensor naive_extreme(const Tensor& x, std::vector<bool> red, bool max) {
  Shape s = x.shape(), o = s;
  for (size_t d = 0; d < 3; ++d)
    if (red[d]) o[d] = 1;
  Tensor y(DType::Float64, o);
  std::vector<bool> seen(y.numel(), false);
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < s[2]; ++k) {
        int64_t oi = red[0] ? 0 : i, oj = red[1] ? 0 : j, ok = red[2] ? 0 : k;
        const int64_t at = (oi * o[1] + oj) * o[2] + ok;
        const double v = x.at_f64((i * s[1] + j) * s[2] + k);
        double& cur = y.ptr<double>()[at];
        if (!seen[at] || (max ? v > cur : v < cur)) cur = v;
        seen[at] = true;
      }
  return y;
}

TEST(ReduceTest, MaxAndMinMatchNaiveAndTheirGradients) {
  Tensor x = random_tensor(DType::Float64, {3, 4, 5}, 11);
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    const bool max = std::string(op) == "ReduceMax";
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, {2}, {-2}, {0, 2}, {0, 1, 2}}) {
      std::vector<bool> red(3, false);
      for (int64_t a : axes) red[(a + 3) % 3] = true;
      Tensor want = naive_extreme(x, red, max);
      for (int64_t keep : {0, 1}) {
        EagerOptions new_opset{false, 0, 18}, old_opset{false, 0, 17};
        auto yi = run_node(make_node(op, 2, 1, reduce_attrs(keep)), {x, Tensor::from_i64(axes, {(int64_t)axes.size()})},
                           new_opset)[0];
        auto ya = run_node(make_node(op, 1, 1, reduce_attrs(keep, axes, true)), {x}, old_opset)[0];
        EXPECT_EQ(compare_tensors(yi.reshaped(want.shape()), want, 0, 1e-300), "") << op;
        EXPECT_EQ(compare_tensors(ya.reshaped(want.shape()), want, 0, 1e-300), "") << op;
        GradCheckOptions o;
        o.opset = 18;
        auto r =
            grad_check(make_node(op, 2, 1, reduce_attrs(keep)), {x, Tensor::from_i64(axes, {(int64_t)axes.size()})}, o);
        EXPECT_TRUE(r.ok) << op << " keep " << keep << "\n" << r.report;
      }
    }
    // Integers, every axis (no axes).
    auto all = run_node(make_node(op, 1, 1, reduce_attrs(0)), {Tensor::from_i64({4, -7, 9, 2}, {2, 2})})[0];
    EXPECT_EQ(all.to_i64_vector(), (std::vector<int64_t>{max ? 9 : -7}));
  }
}

// ReduceProd against a direct product over every axis set, attribute and input forms, its
// gradient by finite differences (exact through zeros: a product is linear in each factor) with
// groups holding no zero, one and two, and integers.
TEST(ReduceTest, ProdMatchesTheDirectProductAndItsGradient) {
  Tensor x = random_tensor(DType::Float64, {3, 4, 5}, 21);
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, {2}, {-2}, {0, 2}, {0, 1, 2}}) {
    std::vector<bool> red(3, false);
    for (int64_t a : axes) red[(a + 3) % 3] = true;
    Shape kept{red[0] ? 1 : 3, red[1] ? 1 : 4, red[2] ? 1 : 5};
    Tensor want(DType::Float64, kept);
    std::fill(want.ptr<double>(), want.ptr<double>() + want.numel(), 1.0);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 5; ++k)
          want.ptr<double>()[((red[0] ? 0 : i) * kept[1] + (red[1] ? 0 : j)) * kept[2] + (red[2] ? 0 : k)] *=
              x.at_f64((i * 4 + j) * 5 + k);
    for (int64_t keep : {0, 1}) {
      auto yi = run_node(make_node("ReduceProd", 2, 1, reduce_attrs(keep)),
                         {x, Tensor::from_i64(axes, {(int64_t)axes.size()})}, {false, 0, 18})[0];
      auto ya = run_node(make_node("ReduceProd", 1, 1, reduce_attrs(keep, axes, true)), {x}, {false, 0, 17})[0];
      EXPECT_EQ(compare_tensors(yi.reshaped(want.shape()), want, 1e-14, 1e-300), "");
      EXPECT_EQ(compare_tensors(ya.reshaped(want.shape()), want, 1e-14, 1e-300), "");
      GradCheckOptions o;
      o.opset = 18;
      auto r = grad_check(make_node("ReduceProd", 2, 1, reduce_attrs(keep)),
                          {x, Tensor::from_i64(axes, {(int64_t)axes.size()})}, o);
      EXPECT_TRUE(r.ok) << "keep " << keep << "\n" << r.report;
    }
  }
  // Rows of no zero, one zero and two zeros.
  Tensor z = Tensor(DType::Float64, {3, 4});
  const double v[] = {1.5, -2, 0.5, 3, /**/ 1.5, 0, 0.5, 3, /**/ 0, -2, 0, 3};
  std::copy(v, v + 12, z.ptr<double>());
  auto y = run_node(make_node("ReduceProd", 1, 1, reduce_attrs(0, {1}, true)), {z}, {false, 0, 17})[0];
  EXPECT_EQ(y.at_f64(0), -4.5);
  EXPECT_EQ(y.at_f64(1), 0.0);
  GradCheckOptions o;
  o.opset = 17;
  auto r = grad_check(make_node("ReduceProd", 1, 1, reduce_attrs(0, {1}, true)), {z}, o);
  EXPECT_TRUE(r.ok) << r.report;
  auto ints = run_node(make_node("ReduceProd", 1, 1, reduce_attrs(0)), {Tensor::from_i64({4, -7, 9, 2}, {2, 2})})[0];
  EXPECT_EQ(ints.to_i64_vector(), (std::vector<int64_t>{-504}));
}

// Ties share dY evenly (as torch.amax), and NaN wins the forward (as numpy).
TEST(ReduceTest, MaxTiesShareTheGradientAndNanWins) {
  Tensor x = Tensor::from_f32({1, 3, 3, 2, /**/ 5, 5, 5, 0}, {2, 4});
  Tensor dy = Tensor::from_f32({0.6f, 0.9f}, {2, 1});
  Attributes a = reduce_attrs(1, {1}, true);
  Tensor y = run_node(make_node("ReduceMax", 1, 1, a), {x}, {false, 0, 17})[0];
  EXPECT_EQ(y.ptr<float>()[0], 3.0f);
  EXPECT_EQ(y.ptr<float>()[1], 5.0f);
  a.set("shape", Shape{2, 4});
  EagerOptions o{false, 0, 17};
  Tensor dx = run_node(make_node("ReduceMaxGrad", 4, 1, a, kCbtDomain), {dy, Tensor(), x, y}, o)[0];
  const float want[] = {0, 0.3f, 0.3f, 0, 0.3f, 0.3f, 0.3f, 0};
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(dx.ptr<float>()[i], want[i]) << i;
  Tensor nan = Tensor::from_f32({1, std::nanf(""), 3, 2}, {1, 4});
  EXPECT_TRUE(std::isnan(run_node(make_node("ReduceMax", 1, 1, reduce_attrs(0)), {nan})[0].ptr<float>()[0]));
  EXPECT_TRUE(std::isnan(run_node(make_node("ReduceMin", 1, 1, reduce_attrs(0)), {nan})[0].ptr<float>()[0]));
}

TEST(ReduceTest, ShapeInferenceFailures) {
  Tensor x = random_tensor(DType::Float32, {2, 3}, 1);
  // ReduceSum takes axes as input since 13; ReduceMean since 18.
  EXPECT_THROW(infer_node(make_node("ReduceSum", 1, 1, reduce_attrs(1, {0}, true)), {x}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("ReduceMean", 2, 1), {x, Tensor::from_i64({0}, {1})}, 17), ModelError);
  EXPECT_NO_THROW(infer_node(make_node("ReduceMean", 1, 1, reduce_attrs(1, {0}, true)), {x}, 17));
  EXPECT_THROW(infer_node(make_node("ReduceSum", 2, 1), {x, Tensor::from_i64({2}, {1})}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("ReduceSum", 2, 1), {x, Tensor::from_i64({0, -2}, {2})}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("ReduceMean", 1, 1), {Tensor::from_i64({1}, {1})}, 13), ModelError);
  // Axes computed at run time cannot be inferred.
  Node n = make_node("ReduceSum", 2, 1);
  InferContext ctx{n, {{DType::Float32, {2, 3}}, {DType::Int64, {1}}}, {nullptr, nullptr}, 13};
  EXPECT_THROW(find_schema("", "ReduceSum")->infer(ctx), ModelError);
}

Attributes arg_attrs(int64_t axis, int64_t keepdims, int64_t last) {
  Attributes a;
  a.set("axis", axis);
  a.set("keepdims", keepdims);
  a.set("select_last_index", last);
  return a;
}

TEST(ReduceTest, ArgMaxAndArgMinMatchANaiveSearch) {
  // Integers in [0, 4) so that ties occur on every row; every axis, both tie rules.
  Tensor x = random_int_tensor({3, 5, 4}, 0, 4, 40);
  for (int64_t axis = -3; axis < 3; ++axis)
    for (int64_t last = 0; last < 2; ++last)
      for (bool max : {true, false}) {
        Tensor y = run_node(make_node(max ? "ArgMax" : "ArgMin", 1, 1, arg_attrs(axis, 0, last)), {x})[0];
        const int64_t a = axis < 0 ? axis + 3 : axis;
        Shape out = x.shape();
        out.erase(out.begin() + a);
        ASSERT_EQ(y.dtype(), DType::Int64);
        ASSERT_EQ(y.shape(), out);
        // Output k's line along the axis starts at `base` and steps by `after` (the product of
        // the dims after the axis).
        const int64_t len = x.dim(a), after = a == 2 ? 1 : (a == 1 ? 4 : 20);
        for (int64_t k = 0; k < y.numel(); ++k) {
          const int64_t base = k / after * len * after + k % after;
          int64_t want = 0;
          for (int64_t j = 1; j < len; ++j) {
            const int64_t v = x.ptr<int64_t>()[base + j * after], b = x.ptr<int64_t>()[base + want * after];
            if (max ? (v > b || (last && v == b)) : (v < b || (last && v == b))) want = j;
          }
          EXPECT_EQ(y.ptr<int64_t>()[k], want) << (max ? "ArgMax" : "ArgMin") << " axis " << axis << " last " << last;
        }
      }
}

TEST(ReduceTest, ArgMaxKeepsDimsAndNanWins) {
  Tensor x = Tensor::from_f32({1, 7, 7, 2, /**/ 4, std::nanf(""), 9, std::nanf("")}, {2, 4});
  Tensor y = run_node(make_node("ArgMax", 1, 1, arg_attrs(1, 1, 0)), {x})[0];
  ASSERT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(y.ptr<int64_t>()[0], 1);
  EXPECT_EQ(y.ptr<int64_t>()[1], 1);
  y = run_node(make_node("ArgMax", 1, 1, arg_attrs(1, 1, 1)), {x})[0];
  EXPECT_EQ(y.ptr<int64_t>()[0], 2);
  EXPECT_EQ(y.ptr<int64_t>()[1], 3);
  y = run_node(make_node("ArgMin", 1, 1, arg_attrs(1, 1, 0)), {x})[0];
  EXPECT_EQ(y.ptr<int64_t>()[0], 0);
  EXPECT_EQ(y.ptr<int64_t>()[1], 1);
  EXPECT_THROW(infer_node(make_node("ArgMax", 1, 1, arg_attrs(2, 1, 0)), {x}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("ArgMax", 1, 1), {Tensor(DType::Bool, {3})}, 17), ModelError);
}

// ReduceSumSquare, ReduceL1 and ReduceL2 expand at load into Mul/Abs, ReduceSum (axes where
// the opset puts them) and Sqrt; run node by node, the expansion gives the definitions.
TEST(ReduceTest, CompositeReductionsExpandForEveryOpset) {
  Tensor x = random_tensor(DType::Float64, {3, 4, 5}, 81);
  for (int64_t opset : {11, 15, 18})
    for (const char* op : {"ReduceSumSquare", "ReduceL1", "ReduceL2"}) {
      SCOPED_TRACE(std::string(op) + " opset " + std::to_string(opset));
      Graph g;
      g.opset = opset;
      g.inputs.push_back({"x", DType::Float64, {}});
      Node n;
      n.op_type = op;
      n.name = "r";
      n.inputs = {"x"};
      n.outputs = {"y"};
      n.attrs.set("keepdims", int64_t{0});
      if (opset >= 18) {
        g.initializers.emplace("axes", Tensor::from_i64({1, -1}, {2}));
        n.inputs.push_back("axes");
      } else {
        n.attrs.set("axes", std::vector<int64_t>{1, -1});
      }
      g.nodes.push_back(n);
      expand_composite_ops(g);
      ASSERT_EQ(g.nodes.size(), std::string(op) == "ReduceL2" ? 3u : 2u);
      const Node& sum = g.nodes[1];
      ASSERT_EQ(sum.op_type, "ReduceSum");
      EXPECT_EQ(sum.attrs.has("axes"), opset < 13);
      EXPECT_EQ(sum.inputs.size(), opset < 13 ? 1u : 2u);
      std::map<std::string, Tensor> v{{"x", x}};
      for (const auto& [name, t] : g.initializers) v[name] = t;
      for (const Node& e : g.nodes) {
        std::vector<Tensor> in;
        for (const auto& name : e.inputs) in.push_back(v.at(name));
        v[e.outputs[0]] = run_node(e, in, {false, 0, opset})[0];
      }
      const Tensor& y = v.at("y");
      ASSERT_EQ(y.shape(), (Shape{3}));
      for (int64_t i = 0; i < 3; ++i) {
        double sq = 0, l1 = 0;
        for (int64_t j = 0; j < 20; ++j) sq += std::pow(x.at_f64(i * 20 + j), 2), l1 += std::fabs(x.at_f64(i * 20 + j));
        const double want = std::string(op) == "ReduceL1" ? l1 : std::string(op) == "ReduceL2" ? std::sqrt(sq) : sq;
        EXPECT_NEAR(y.at_f64(i), want, 1e-12);
      }
    }
}

// ReduceLogSumExp stays finite where exp overflows, with the axes in each opset's form; Max and
// Min of one and of four inputs.
TEST(ReduceTest, LogSumExpAndManyInputMaxMinExpand) {
  Tensor x = random_tensor(DType::Float64, {3, 4, 5}, 82, 300.0);  // exp(|x| ~ 300..900) overflows f64 too
  auto run_graph = [](Graph& g, std::map<std::string, Tensor> v) {
    expand_composite_ops(g);
    for (const auto& [name, t] : g.initializers) v[name] = t;
    for (const Node& e : g.nodes) {
      std::vector<Tensor> in;
      for (const auto& name : e.inputs) in.push_back(v.at(name));
      v[e.outputs[0]] = run_node(e, in, {false, 0, g.opset})[0];
    }
    return v.at("y");
  };
  for (int64_t opset : {11, 15, 18})
    for (int64_t keep : {0, 1}) {
      SCOPED_TRACE("opset " + std::to_string(opset) + " keepdims " + std::to_string(keep));
      Graph g;
      g.opset = opset;
      Node n;
      n.op_type = "ReduceLogSumExp";
      n.inputs = {"x"};
      n.outputs = {"y"};
      n.attrs.set("keepdims", keep);
      if (opset >= 18) {
        g.initializers.emplace("axes", Tensor::from_i64({1}, {1}));
        n.inputs.push_back("axes");
      } else {
        n.attrs.set("axes", std::vector<int64_t>{1});
      }
      g.nodes.push_back(n);
      const Tensor y = run_graph(g, {{"x", x}});
      ASSERT_EQ(y.shape(), keep ? (Shape{3, 1, 5}) : (Shape{3, 5}));
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t k = 0; k < 5; ++k) {
          double m = -1e300, s = 0;
          for (int64_t j = 0; j < 4; ++j) m = std::max(m, x.at_f64((i * 4 + j) * 5 + k));
          for (int64_t j = 0; j < 4; ++j) s += std::exp(x.at_f64((i * 4 + j) * 5 + k) - m);
          EXPECT_NEAR(y.at_f64(i * 5 + k), m + std::log(s), 1e-9);
        }
    }
  const Tensor a = random_tensor(DType::Float64, {2, 3}, 83), b = random_tensor(DType::Float64, {3}, 84),
               c = random_tensor(DType::Float64, {2, 1}, 85), d = random_tensor(DType::Float64, {2, 3}, 86);
  for (const char* op : {"Max", "Min"}) {
    SCOPED_TRACE(op);
    Graph g;
    g.opset = 17;
    Node n;
    n.op_type = op;
    n.inputs = {"a", "b", "c", "d"};
    n.outputs = {"y"};
    g.nodes.push_back(n);
    const Tensor y = run_graph(g, {{"a", a}, {"b", b}, {"c", c}, {"d", d}});
    ASSERT_EQ(y.shape(), (Shape{2, 3}));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        const double v[] = {a.at_f64(i * 3 + j), b.at_f64(j), c.at_f64(i), d.at_f64(i * 3 + j)};
        const double want =
            std::string(op) == "Max" ? std::max({v[0], v[1], v[2], v[3]}) : std::min({v[0], v[1], v[2], v[3]});
        EXPECT_EQ(y.at_f64(i * 3 + j), want);
      }
    Graph one;
    one.opset = 17;
    n.inputs = {"a"};
    one.nodes.push_back(n);
    EXPECT_TRUE(same_bytes(run_graph(one, {{"a", a}}), a));
  }
}

}  // namespace
}  // namespace cbt::test
