// Schemas of the conversions at the edges of --precision bf16's channels-last region
// (graph/channels_last.h): ToChannelsLast and FromChannelsLast. They are placed after the
// backward nodes are emitted and have no gradient rules.
#include "graph/op_schema.h"

namespace cbt {
namespace {

// The logical shape stays (N, C, H, W) on both sides; what changes is the type and the order
// in memory: float32 in (N, C, H, W) order against bfloat16 in (N, H, W, C) order. Input i
// becomes output i: one node converts the filters of a whole network.
std::vector<ValueType> infer_conversion(const InferContext& ctx, DType from, DType to) {
  if (ctx.num_inputs() == 0 || ctx.node.outputs.size() != ctx.num_inputs())
    ctx.fail("takes as many outputs as inputs, at least one");
  std::vector<ValueType> out;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueType& x = ctx.input(i);
    if (x.dtype != from)
      ctx.fail(std::string("inputs must be ") + dtype_name(from) + ", one is " + dtype_name(x.dtype));
    if (x.shape.size() != 4) ctx.fail("inputs must have 4 dims, one has shape " + shape_str(x.shape));
    out.push_back({to, x.shape});
  }
  return out;
}

std::vector<ValueType> infer_to_channels_last(const InferContext& ctx) {
  return infer_conversion(ctx, DType::Float32, DType::BFloat16);
}

std::vector<ValueType> infer_from_channels_last(const InferContext& ctx) {
  return infer_conversion(ctx, DType::BFloat16, DType::Float32);
}

}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain,
    "ToChannelsLast",
    infer_to_channels_last,
    {},
    {},
    {},
    "float32 (N, C, H, W) to bfloat16 stored (N, H, W, C), rounded to nearest even; input i to output i"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "FromChannelsLast",
                             infer_from_channels_last,
                             {},
                             {},
                             {},
                             "bfloat16 stored (N, H, W, C) back to float32 (N, C, H, W); input i to output i"});

}  // namespace cbt
