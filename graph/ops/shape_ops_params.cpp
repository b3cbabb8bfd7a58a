// Parameter normalisation shared by the shape-op schemas and their kernels.
#include "graph/ops/shape_ops_params.h"

#include <algorithm>
#include <set>

#include "graph/shape_utils.h"

namespace cbt {

std::vector<int64_t> split_sizes(int64_t dim, size_t num_outputs,
                                 const std::optional<std::vector<int64_t>>& explicit_sizes) {
  CBT_MODEL_CHECK(num_outputs > 0, "Split needs at least one output");
  if (explicit_sizes) {
    const auto& s = *explicit_sizes;
    CBT_MODEL_CHECK(s.size() == num_outputs, "split has ", s.size(), " sizes for ", num_outputs, " outputs");
    int64_t sum = 0;
    for (int64_t v : s) {
      CBT_MODEL_CHECK(v >= 0, "split sizes must be non-negative, got ", v);
      sum += v;
    }
    CBT_MODEL_CHECK(sum == dim, "split sizes sum to ", sum, " but the axis has ", dim);
    return s;
  }
  int64_t n = static_cast<int64_t>(num_outputs);
  int64_t chunk = (dim + n - 1) / n;
  int64_t last = dim - chunk * (n - 1);
  CBT_MODEL_CHECK(last >= 0, "cannot split an axis of ", dim, " into ", n, " pieces");
  std::vector<int64_t> s(num_outputs, chunk);
  s.back() = last;
  return s;
}

SliceRange slice_range(const Shape& in, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                       const std::vector<int64_t>& axes_in, const std::vector<int64_t>& steps) {
  const int64_t rank = static_cast<int64_t>(in.size());
  CBT_MODEL_CHECK(starts.size() == ends.size(), "Slice starts (", starts.size(), ") and ends (", ends.size(),
                  ") differ in length");
  CBT_MODEL_CHECK(axes_in.empty() || axes_in.size() == starts.size(), "Slice axes length differs from starts");
  CBT_MODEL_CHECK(steps.empty() || steps.size() == starts.size(), "Slice steps length differs from starts");
  SliceRange r{in, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1)};
  std::set<int64_t> seen;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = normalize_axis(axes_in.empty() ? static_cast<int64_t>(i) : axes_in[i], rank);
    CBT_MODEL_CHECK(seen.insert(axis).second, "Slice axis ", axis, " repeated");
    int64_t dim = in[axis];
    int64_t step = steps.empty() ? 1 : steps[i];
    CBT_MODEL_CHECK(step != 0, "Slice step must not be 0");
    // Clamp before adding dim so that INT64_MIN/INT64_MAX never overflow.
    int64_t s = std::clamp<int64_t>(starts[i], -dim - 1, dim + 1);
    int64_t e = std::clamp<int64_t>(ends[i], -dim - 1, dim + 1);
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    r.out[axis] = count;
    r.start[axis] = count > 0 ? s : 0;
    r.step[axis] = step;
  }
  return r;
}

PadMode parse_pad_mode(const std::string& mode) {
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "wrap") return PadMode::Wrap;
  throw ModelError("unknown Pad mode '" + mode + "' (constant, reflect, edge, wrap)");
}

RollDims roll_dims(const Shape& in, const std::vector<int64_t>& axes, const std::vector<int64_t>& shifts) {
  CBT_MODEL_CHECK(axes.size() == shifts.size(), "Roll has ", axes.size(), " axes and ", shifts.size(), " shifts");
  std::vector<int64_t> shift(in.size(), 0);
  std::vector<bool> rolled(in.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = normalize_axis(axes[k], static_cast<int64_t>(in.size()));
    CBT_MODEL_CHECK(!rolled[a], "Roll names axis ", a, " twice");
    rolled[a] = true;
    if (in[a] > 0) shift[a] = ((shifts[k] % in[a]) + in[a]) % in[a];
  }
  RollDims r;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) continue;
    if (!r.dims.empty() && shift[d] == 0 && r.shifts.back() == 0) {
      r.dims.back() *= in[d];
      continue;
    }
    r.dims.push_back(in[d]);
    r.shifts.push_back(shift[d]);
  }
  return r;
}

std::vector<int64_t> full_pads(int64_t rank, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes) {
  if (axes.empty()) {
    CBT_MODEL_CHECK(static_cast<int64_t>(pads.size()) == 2 * rank, "Pad has ", pads.size(), " pads for rank ", rank,
                    " (expected ", 2 * rank, ")");
    return pads;
  }
  CBT_MODEL_CHECK(pads.size() == 2 * axes.size(), "Pad has ", pads.size(), " pads for ", axes.size(), " axes");
  std::vector<int64_t> full(2 * rank, 0);
  std::set<int64_t> seen;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normalize_axis(axes[i], rank);
    CBT_MODEL_CHECK(seen.insert(a).second, "Pad axis ", a, " repeated");
    full[a] = pads[i];
    full[a + rank] = pads[i + axes.size()];
  }
  return full;
}

Shape padded_shape(const Shape& in, const std::vector<int64_t>& pads) {
  size_t r = in.size();
  Shape out(r);
  for (size_t d = 0; d < r; ++d) {
    out[d] = in[d] + pads[d] + pads[d + r];
    CBT_MODEL_CHECK(out[d] >= 0, "Pad crops axis ", d, " of size ", in[d], " below zero");
  }
  return out;
}

std::vector<std::vector<int64_t>> pad_index_maps(const Shape& in, const std::vector<int64_t>& pads, PadMode mode) {
  size_t r = in.size();
  Shape out = padded_shape(in, pads);
  std::vector<std::vector<int64_t>> maps(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t n = in[d], before = pads[d], after = pads[d + r];
    bool grows = before > 0 || after > 0;
    if (grows && mode != PadMode::Constant)
      CBT_MODEL_CHECK(n > 0, "Pad cannot ", mode == PadMode::Edge ? "edge" : "reflect/wrap", "-pad an empty axis ", d);
    if (mode == PadMode::Reflect)
      CBT_MODEL_CHECK(before < n && after < n, "reflect Pad of ", std::max(before, after),
                      " needs an axis larger than that, axis ", d, " has ", n);
    maps[d].resize(out[d]);
    for (int64_t o = 0; o < out[d]; ++o) {
      int64_t i = o - before;
      if (i < 0 || i >= n) {
        switch (mode) {
          case PadMode::Constant:
            i = -1;
            break;
          case PadMode::Edge:
            i = i < 0 ? 0 : n - 1;
            break;
          case PadMode::Reflect:
            i = i < 0 ? -i : 2 * (n - 1) - i;
            break;
          case PadMode::Wrap:
            i = ((i % n) + n) % n;
            break;
        }
      }
      maps[d][o] = i;
    }
  }
  return maps;
}

Shape reshape_target(const Shape& in, const std::vector<int64_t>& shape, bool allow_zero) {
  Shape out(shape.size());
  int infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == -1) {
      CBT_MODEL_CHECK(infer_at < 0, "Reshape shape ", shape_str(shape), " has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    CBT_MODEL_CHECK(v >= 0, "Reshape shape ", shape_str(shape), " has invalid dim ", v);
    if (v == 0 && !allow_zero) {
      CBT_MODEL_CHECK(i < in.size(), "Reshape shape ", shape_str(shape), " copies dim ", i,
                      " (0) beyond the input rank ", in.size());
      v = in[i];
    } else if (v == 0) {
      has_zero = true;
    }
    out[i] = v;
    CBT_MODEL_CHECK(!__builtin_mul_overflow(known, v, &known), "Reshape shape ", shape_str(shape), " overflows");
  }
  int64_t numel = shape_numel(in);
  if (infer_at >= 0) {
    CBT_MODEL_CHECK(!has_zero, "Reshape with allowzero=1 cannot combine 0 and -1");
    CBT_MODEL_CHECK(known != 0 && numel % known == 0, "cannot reshape ", shape_str(in), " to ", shape_str(shape));
    out[infer_at] = numel / known;
  }
  CBT_MODEL_CHECK(shape_numel(out) == numel, "cannot reshape ", shape_str(in), " (", numel, " elements) to ",
                  shape_str(shape));
  return out;
}

std::optional<std::vector<int64_t>> ints_input_or_attr(const Node& n, const InputValues& inputs, size_t i,
                                                       const char* attr) {
  if (i < inputs.size() && inputs[i]) {
    const Tensor& t = *inputs[i];
    CBT_MODEL_CHECK(t.dtype() == DType::Int64 || t.dtype() == DType::Int32, "input ", i,
                    " must be int64 or int32, got ", dtype_name(t.dtype()));
    CBT_MODEL_CHECK(t.rank() <= 1, "input ", i, " must be 1-D, got shape ", shape_str(t.shape()));
    return t.to_i64_vector();
  }
  if (attr && n.attrs.has(attr)) return n.attrs.get_ints(attr);
  return std::nullopt;
}

SliceRange node_slice_range(const Node& n, const Shape& in, const InputValues& inputs) {
  auto starts = ints_input_or_attr(n, inputs, 1, "starts");
  auto ends = ints_input_or_attr(n, inputs, 2, "ends");
  CBT_MODEL_CHECK(starts && ends, "Slice needs starts and ends");
  auto axes = ints_input_or_attr(n, inputs, 3, "axes");
  auto steps = ints_input_or_attr(n, inputs, 4, "steps");
  return slice_range(in, *starts, *ends, axes.value_or(std::vector<int64_t>{}), steps.value_or(std::vector<int64_t>{}));
}

std::vector<int64_t> node_pads(const Node& n, const Shape& in, const InputValues& inputs) {
  auto pads = ints_input_or_attr(n, inputs, 1, "pads");
  CBT_MODEL_CHECK(pads, "Pad needs pads");
  auto axes = ints_input_or_attr(n, inputs, 3, nullptr);  // axes only exist as input
  return full_pads(static_cast<int64_t>(in.size()), *pads, axes.value_or(std::vector<int64_t>{}));
}

std::vector<int64_t> node_split_sizes(const Node& n, const Shape& in, const InputValues& inputs) {
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 0), static_cast<int64_t>(in.size()));
  auto sizes = ints_input_or_attr(n, inputs, 1, "split");
  return split_sizes(in[axis], n.outputs.size(), sizes);
}

std::optional<std::vector<int64_t>> node_axes(const Node& n, const InputValues& inputs) {
  return ints_input_or_attr(n, inputs, 1, "axes");
}

InputValues const_inputs(const InferContext& ctx, std::initializer_list<size_t> which) {
  InputValues v(ctx.num_inputs(), nullptr);
  for (size_t i : which)
    if (ctx.has(i)) v[i] = &ctx.const_value(i);
  return v;
}

InferFn naming_node(InferFn f) {
  return [f = std::move(f)](const InferContext& ctx) -> std::vector<ValueType> {
    try {
      return f(ctx);
    } catch (const ModelError& e) {
      std::string msg = e.what();
      if (msg.rfind("node ", 0) == 0) throw;  // already from ctx.fail
      ctx.fail(msg);
    }
  };
}

}  // namespace cbt
