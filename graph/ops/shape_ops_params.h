// Parameter normalisation shared by the shape-op schemas and their kernels (one truth for
// Split sizes, Slice ranges, Pad amounts and index maps, Reshape targets).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "graph/op_schema.h"
#include "graph/tensor.h"

namespace cbt {

// Sizes of the pieces of a split along an axis of length `dim`: the explicit sizes when
// given, else ceil(dim / n) per piece with a smaller last one (opset 18; an even split for
// older opsets is the special case where it divides). Throws ModelError when they do not fit.
std::vector<int64_t> split_sizes(int64_t dim, size_t num_outputs,
                                 const std::optional<std::vector<int64_t>>& explicit_sizes);

// A Slice normalised to every axis of the input: element k of the output along axis d is
// input element start[d] + k * step[d].
struct SliceRange {
  Shape out;
  std::vector<int64_t> start, step;
};
// starts/ends/axes/steps as ONNX gives them (axes and steps may be empty); ends beyond the
// dim (INT64_MAX) are clamped, negative values count from the end.
SliceRange slice_range(const Shape& in, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                       const std::vector<int64_t>& axes, const std::vector<int64_t>& steps);

// Roll (cbtrain's op: Y[i] = X[(i + shift) mod n] along each rolled axis; what fuse_roll makes
// of torch.roll's Slice, Slice, Concat) as its kernels walk it: the output's dims, row-major and
// contiguous like the input's, each with its shift in [0, dim); dims of size 1 dropped and
// neighbours that are not rolled merged. Throws ModelError for an axis out of range or twice.
struct RollDims {
  Shape dims;
  std::vector<int64_t> shifts;
};
RollDims roll_dims(const Shape& in, const std::vector<int64_t>& axes, const std::vector<int64_t>& shifts);

enum class PadMode { Constant, Reflect, Edge, Wrap };
PadMode parse_pad_mode(const std::string& mode);
// Full-rank pads [b_0, ..., b_{r-1}, e_0, ..., e_{r-1}] from pads given for `axes` (all axes
// when empty). Negative pads crop.
std::vector<int64_t> full_pads(int64_t rank, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes);
Shape padded_shape(const Shape& in, const std::vector<int64_t>& pads);
// For every output position along each axis, the input position it reads (-1: the constant).
// Throws ModelError where the mode cannot produce the padding (reflect wider than the dim).
std::vector<std::vector<int64_t>> pad_index_maps(const Shape& in, const std::vector<int64_t>& pads, PadMode mode);

// Reshape's target: 0 copies the input dim unless allow_zero, one -1 is inferred.
Shape reshape_target(const Shape& in, const std::vector<int64_t>& shape, bool allow_zero);

// Node-level readers used alike by inference (constant inputs) and kernels (host inputs):
// `inputs[i]` is input i's value or null when omitted. Older opsets carry the same
// parameters as attributes, which are read when the input is absent (attr may be null).
using InputValues = std::vector<const Tensor*>;
std::optional<std::vector<int64_t>> ints_input_or_attr(const Node& n, const InputValues& inputs, size_t i,
                                                       const char* attr);
SliceRange node_slice_range(const Node& n, const Shape& in, const InputValues& inputs);
// Full-rank pads of a Pad node (pads input since opset 11, axes input since 18).
std::vector<int64_t> node_pads(const Node& n, const Shape& in, const InputValues& inputs);
std::vector<int64_t> node_split_sizes(const Node& n, const Shape& in, const InputValues& inputs);
// Squeeze/Unsqueeze axes (input since opset 13, attribute before).
std::optional<std::vector<int64_t>> node_axes(const Node& n, const InputValues& inputs);

// Values of the listed shape-carrying inputs for inference; fails naming the node when one
// is present but not constant.
InputValues const_inputs(const InferContext& ctx, std::initializer_list<size_t> which);

// Wraps an infer function so that ModelErrors from the shared helpers name the node.
InferFn naming_node(InferFn f);

}  // namespace cbt
