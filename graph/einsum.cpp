// Einsum as Transpose, Reshape, MatMul and ReduceSum (einsum.h).
#include "graph/einsum.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "graph/errors.h"

namespace cbt {
namespace {

// Labels are ints: letters as their char codes, the ellipsis' dims as 256 + position counted
// from the right (so that ellipses of different ranks broadcast as numpy's do).
using Labels = std::vector<int>;
constexpr int kEllipsis = 256;

struct Term {
  std::string value;  // the operand's (or a partial result's) value name
  Labels labels;      // one per dim
  Shape shape;
};

class EinsumWriter {
 public:
  EinsumWriter(const Node& n, const std::map<std::string, ValueType>& types, int64_t opset, const FreshName& fresh)
      : n_(n), types_(types), opset_(opset), w_(n.name.empty() ? n.outputs[0] : n.name, fresh) {}

  Expansion run() {
    parse();
    // Operands combined left to right; each step keeps the labels still needed.
    Term acc = terms_[0];
    for (size_t k = 1; k < terms_.size(); ++k) {
      std::set<int> later(out_.begin(), out_.end());
      for (size_t j = k + 1; j < terms_.size(); ++j) later.insert(terms_[j].labels.begin(), terms_[j].labels.end());
      acc = pair(acc, terms_[k], later);
    }
    finish(acc);
    return std::move(w_.ex);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw ModelError("node " + n_.describe() + ": " + msg); }

  static std::string label_str(int l) {
    return l >= kEllipsis ? "... dim " + std::to_string(l - kEllipsis) : std::string(1, static_cast<char>(l));
  }

  // Letters and at most one "..." of one term, for an operand of `rank` dims (-1: the output).
  Labels parse_term(const std::string& t, int64_t rank, int64_t ellipsis_rank) const {
    Labels letters_before, letters_after;
    bool ellipsis = false;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "...") == 0) {
        if (ellipsis) fail("equation term '" + t + "' has two ellipses");
        ellipsis = true;
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
        (ellipsis ? letters_after : letters_before).push_back(t[i]);
      } else {
        fail("equation term '" + t + "' has the character '" + std::string(1, t[i]) + "'");
      }
    }
    const int64_t letters = static_cast<int64_t>(letters_before.size() + letters_after.size());
    int64_t ell = 0;
    if (rank >= 0) {
      ell = rank - letters;
      if (ell < 0 || (!ellipsis && ell != 0))
        fail("equation term '" + t + "' does not fit an operand of rank " + std::to_string(rank));
    } else {
      ell = ellipsis ? ellipsis_rank : 0;
    }
    Labels out = letters_before;
    for (int64_t j = ell - 1; j >= 0; --j) out.push_back(kEllipsis + static_cast<int>(j));
    out.insert(out.end(), letters_after.begin(), letters_after.end());
    return out;
  }

  void parse() {
    std::string eq = n_.attrs.get_string("equation", "");
    eq.erase(std::remove_if(eq.begin(), eq.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
             eq.end());
    if (eq.empty()) fail("has no equation");
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> parts{""};
    for (char c : lhs) {
      if (c == ',')
        parts.emplace_back();
      else
        parts.back().push_back(c);
    }
    if (parts.size() != n_.inputs.size())
      fail("equation '" + eq + "' has " + std::to_string(parts.size()) + " operands, the node " +
           std::to_string(n_.inputs.size()) + " inputs");
    int64_t ellipsis_rank = 0;
    std::map<int, int64_t> size, count;
    for (size_t k = 0; k < parts.size(); ++k) {
      const ValueType& t = types_.at(n_.inputs[k]);
      if (t.dtype != DType::Float32 && t.dtype != DType::Float64) fail("operands must be float tensors");
      Term term{n_.inputs[k], parse_term(parts[k], static_cast<int64_t>(t.shape.size()), 0), t.shape};
      for (size_t d = 0; d < term.labels.size(); ++d) {
        const int l = term.labels[d];
        if (l >= kEllipsis) ellipsis_rank = std::max<int64_t>(ellipsis_rank, l - kEllipsis + 1);
        auto [s, fresh] = size.emplace(l, t.shape[d]);
        if (!fresh && s->second != t.shape[d])
          fail("label '" + label_str(l) + "' has sizes " + std::to_string(s->second) + " and " +
               std::to_string(t.shape[d]) + " (broadcasting a size-1 label is not supported)");
        ++count[l];
      }
      terms_.push_back(diagonal(std::move(term), t.dtype));
    }
    if (arrow != std::string::npos) {
      out_ = parse_term(eq.substr(arrow + 2), -1, ellipsis_rank);
      std::set<int> seen;
      for (int l : out_) {
        if (!size.count(l)) fail("output label '" + label_str(l) + "' is in no operand");
        if (!seen.insert(l).second) fail("output label '" + label_str(l) + "' repeats");
      }
    } else {  // implicit: the ellipsis, then the letters seen once, in order
      for (int64_t j = ellipsis_rank - 1; j >= 0; --j) out_.push_back(kEllipsis + static_cast<int>(j));
      for (const auto& [l, c] : count)
        if (l < kEllipsis && c == 1) out_.push_back(l);
    }
    size_ = size;
  }

  // ---- emitting ----
  std::string add(const std::string& op, std::vector<std::string> in, Attributes a, const std::string& out = "") {
    return w_.add(op, std::move(in), std::move(a), op, out);
  }
  std::string ints(const std::vector<int64_t>& v, const std::string& hint) { return w_.ints(v, hint); }

  Shape shape_of(const Labels& ls) const {
    Shape s;
    for (int l : ls) s.push_back(size_.at(l));
    return s;
  }

  // `t` with each label that repeats in it kept once: its diagonal, t times an identity over
  // the two dims (broadcast over the others) summed over the later one.
  Term diagonal(Term t, DType dtype) {
    for (size_t q = 1; q < t.labels.size(); ++q) {
      const auto p = static_cast<size_t>(std::find(t.labels.begin(), t.labels.end(), t.labels[q]) - t.labels.begin());
      if (p == q) continue;
      const int64_t n = t.shape[q];
      Shape mask_shape(t.shape.size(), 1);  // n at p and q, 1 elsewhere: element (i, i) at i (n + 1)
      mask_shape[p] = mask_shape[q] = n;
      Tensor eye(dtype, mask_shape);  // zeros
      for (int64_t i = 0; i < n; ++i) {
        if (dtype == DType::Float64)
          eye.ptr<double>()[i * (n + 1)] = 1.0;
        else
          eye.ptr<float>()[i * (n + 1)] = 1.0f;
      }
      const std::string masked = add("Mul", {t.value, w_.constant(std::move(eye), "diagonal")}, {});
      t.value = w_.reduce_sum(masked, {static_cast<int64_t>(q)}, opset_);
      t.labels.erase(t.labels.begin() + static_cast<std::ptrdiff_t>(q));
      t.shape.erase(t.shape.begin() + static_cast<std::ptrdiff_t>(q));
      --q;  // the label after it moved to q
    }
    return t;
  }

  // `t` with the labels not in `keep` summed out.
  Term sum_out(const Term& t, const std::set<int>& keep, const std::string& out = "") {
    std::vector<int64_t> axes;
    Labels rest;
    for (size_t d = 0; d < t.labels.size(); ++d) {
      if (keep.count(t.labels[d]))
        rest.push_back(t.labels[d]);
      else
        axes.push_back(static_cast<int64_t>(d));
    }
    if (axes.empty()) return t;
    return Term{w_.reduce_sum(t.value, axes, opset_, out), rest, shape_of(rest)};
  }

  // `t` with its dims in the order of `order` (a permutation of its labels).
  Term permute(const Term& t, const Labels& order, const std::string& out = "") {
    if (order == t.labels && out.empty()) return t;
    std::vector<int64_t> perm;
    for (int l : order) perm.push_back(std::find(t.labels.begin(), t.labels.end(), l) - t.labels.begin());
    Attributes a;
    a.set("perm", perm);
    return Term{add(order == t.labels ? "Identity" : "Transpose", {t.value}, order == t.labels ? Attributes{} : a, out),
                order, shape_of(order)};
  }

  std::string reshape(const std::string& v, const Shape& s) { return add("Reshape", {v, ints(s, "shape")}, {}); }

  int64_t product(const Labels& ls) const {
    int64_t p = 1;
    for (int l : ls) p *= size_.at(l);
    return p;
  }

  // a ⊗ b keeping the labels in `later`: one batched MatMul of (batch, a's, contracted) by
  // (batch, contracted, b's).
  Term pair(const Term& a_in, const Term& b_in, const std::set<int>& later) {
    std::set<int> la(a_in.labels.begin(), a_in.labels.end()), lb(b_in.labels.begin(), b_in.labels.end());
    std::set<int> keep_a = later, keep_b = later;
    keep_a.insert(lb.begin(), lb.end());
    keep_b.insert(la.begin(), la.end());
    const Term a = sum_out(a_in, keep_a), b = sum_out(b_in, keep_b);
    Labels batch, contracted, a_only, b_only;
    for (int l : a.labels) {
      if (!std::count(b.labels.begin(), b.labels.end(), l))
        a_only.push_back(l);
      else if (later.count(l))
        batch.push_back(l);
      else
        contracted.push_back(l);
    }
    for (int l : b.labels)
      if (!std::count(a.labels.begin(), a.labels.end(), l)) b_only.push_back(l);
    Labels a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), a_only.begin(), a_only.end());
    a_order.insert(a_order.end(), contracted.begin(), contracted.end());
    b_order.insert(b_order.end(), contracted.begin(), contracted.end());
    b_order.insert(b_order.end(), b_only.begin(), b_only.end());
    const int64_t pb = product(batch), pa = product(a_only), pc = product(contracted), pk = product(b_only);
    const std::string a3 = reshape(permute(a, a_order).value, {pb, pa, pc});
    const std::string b3 = reshape(permute(b, b_order).value, {pb, pc, pk});
    Labels labels = batch;
    labels.insert(labels.end(), a_only.begin(), a_only.end());
    labels.insert(labels.end(), b_only.begin(), b_only.end());
    return Term{reshape(add("MatMul", {a3, b3}, {}), shape_of(labels)), labels, shape_of(labels)};
  }

  // The result summed to the output's labels and put in their order, written to the output.
  void finish(const Term& t) {
    const std::set<int> keep(out_.begin(), out_.end());
    const std::string& out = n_.outputs[0];
    Term r = t;
    const bool sums = std::any_of(t.labels.begin(), t.labels.end(), [&](int l) { return !keep.count(l); });
    if (sums) {
      Labels rest;
      for (int l : t.labels)
        if (keep.count(l)) rest.push_back(l);
      r = sum_out(t, keep, rest == out_ ? out : "");
      if (rest == out_) return;
    }
    permute(r, out_, out);
  }

  const Node& n_;
  const std::map<std::string, ValueType>& types_;
  int64_t opset_;
  ExpansionWriter w_;
  std::vector<Term> terms_;
  Labels out_;
  std::map<int, int64_t> size_;
};

}  // namespace

bool is_einsum(const Node& n) { return n.domain.empty() && n.op_type == "Einsum"; }

Expansion expand_einsum(const Node& n, const std::map<std::string, ValueType>& types, int64_t opset,
                        const FreshName& fresh) {
  if (n.inputs.empty() || n.outputs.empty() || n.outputs[0].empty())
    throw ModelError("node " + n.describe() + ": Einsum needs inputs and an output");
  return EinsumWriter(n, types, opset, fresh).run();
}

std::pair<std::string, std::string> einsum_op_summary() {
  return {"Einsum",
          "Einstein summation of one or more float operands (ellipsis, implicit output, diagonals): "
          "Transpose, Reshape, MatMul, Mul, ReduceSum at binding"};
}

}  // namespace cbt
