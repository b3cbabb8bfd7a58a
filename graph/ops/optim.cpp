// Schemas of the optimizer and model-averaging update ops (cbtrain domain). They update
// flat buffers in place and produce no outputs.
#include "graph/op_schema.h"

namespace cbt {

namespace {
// All inputs but the last are float buffers of one size; the last holds hyper-parameters.
std::vector<ValueType> infer_inplace_update(const InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  for (size_t i = 1; i + 1 < ctx.num_inputs(); ++i)
    if (ctx.input(i).shape != x.shape || ctx.input(i).dtype != x.dtype)
      ctx.fail("buffer " + std::to_string(i) + " does not match the parameters");
  return {};
}
}  // namespace

CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "SGDMomentum",
                             infer_inplace_update,
                             {},
                             {},
                             {},
                             "v = mu*v - lr*(s*g + wd*x); x += v over flat buffers"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "SMALearnerUpdate",
                             infer_inplace_update,
                             {},
                             {},
                             {},
                             "c = a*(x - z); v = mu*v - lr*(g + wd*x); x += v - c (writes c)"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "SMACentralUpdate",
                             infer_inplace_update,
                             {},
                             {},
                             {},
                             "z' = z + sum_c + mu_z*(z - z_prev); z_prev = z"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "SumBuffers",
                             [](const InferContext& ctx) -> std::vector<ValueType> {
                               for (size_t i = 1; i < ctx.num_inputs(); ++i)
                                 if (ctx.input(i) != ctx.input(0)) ctx.fail("buffers to sum differ in type");
                               return {ctx.input(0)};
                             },
                             {},
                             {},
                             {},
                             "out = (sum of the inputs) * scale"});
CBT_REGISTER_SCHEMA(OpSchema{kCbtDomain,
                             "ClipGradNorm",
                             [](const InferContext& ctx) -> std::vector<ValueType> {
                               if (ctx.input(0).dtype != DType::Float32)
                                 ctx.fail("the gradient buffer must be float32");
                               if (!(ctx.node.attrs.get_float("max_norm", 0.0f) > 0))
                                 ctx.fail("max_norm must be positive");
                               return {};
                             },
                             {},
                             {},
                             {},
                             "g *= min(1, max_norm / (||scale*g|| + 1e-6)) over a flat buffer"});
CBT_REGISTER_SCHEMA(OpSchema{
    kCbtDomain, "AdamW", infer_inplace_update, {}, {}, {}, "AdamW with decoupled weight decay over flat buffers"});

}  // namespace cbt
