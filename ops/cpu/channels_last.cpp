// CPU kernels of the channels-last conversions (graph/ops/channels_last.cpp): the
// specification the CUDA kernels are checked against. bfloat16 travels as its 16 bits.
#include "ops/bfloat16.h"
#include "ops/kernel.h"

namespace cbt {
namespace {

struct Nchw {
  int64_t n, c, hw;
  explicit Nchw(const Shape& s) : n(s[0]), c(s[1]), hw(s[2] * s[3]) {}
};

// float32 (N, C, H, W) -> bfloat16 (N, H, W, C), input i to output i
void to_channels_last(KernelContext& ctx) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Nchw d(ctx.in(i).shape());
    const float* x = ctx.in(i).ptr<float>();
    auto* y = static_cast<uint16_t*>(ctx.out(i).data());
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t c = 0; c < d.c; ++c)
        for (int64_t p = 0; p < d.hw; ++p) y[(n * d.hw + p) * d.c + c] = bf16_from_float(x[(n * d.c + c) * d.hw + p]);
  }
}

// bfloat16 (N, H, W, C) -> float32 (N, C, H, W), input i to output i
void from_channels_last(KernelContext& ctx) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Nchw d(ctx.in(i).shape());
    const auto* x = static_cast<const uint16_t*>(ctx.in(i).data());
    float* y = ctx.out(i).ptr<float>();
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t c = 0; c < d.c; ++c)
        for (int64_t p = 0; p < d.hw; ++p) y[(n * d.c + c) * d.hw + p] = float_from_bf16(x[(n * d.hw + p) * d.c + c]);
  }
}

}  // namespace

CBT_REGISTER_KERNEL(kCbtDomain, "ToChannelsLast", DeviceKind::CPU, to_channels_last);
CBT_REGISTER_KERNEL(kCbtDomain, "FromChannelsLast", DeviceKind::CPU, from_channels_last);

}  // namespace cbt
