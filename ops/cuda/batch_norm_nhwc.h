// BatchNorm's channels-last bfloat16 CUDA kernels (--precision bf16), reached from
// BatchNormTraining's and BatchNormGrad's kernels when their attribute channels_last is 1.
#pragma once
#include "ops/kernel.h"

namespace cbt::cuda {

// x: bfloat16 (N, C, H, W) stored (N, H, W, C); scale, bias, running mean/var: float32 (C),
// the running statistics updated in place -> y: bfloat16 like x, saved_mean, saved_invstd:
// float32 (C). The float32 kernel's semantics (relu, momentum, unbiased running variance).
void batch_norm_training_nhwc(KernelContext& ctx);

// dy, x (and y with relu=1): bfloat16 stored (N, H, W, C); scale, mean, invstd or running var
// (frozen_stats): float32 (C) -> dX: bfloat16 like x, dScale, dBias: float32 (C).
void batch_norm_backward_nhwc(KernelContext& ctx);

}  // namespace cbt::cuda
