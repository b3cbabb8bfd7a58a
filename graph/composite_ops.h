// Ops that are compositions of others, expanded at load into the ops they are made of, so that
// their gradients and CUDA kernels are those ops' (the written model keeps the original nodes).
#pragma once
#include "graph/ir.h"

namespace cbt {

// ReduceSumSquare -> Mul(X, X), ReduceSum; ReduceL1 -> Abs, ReduceSum; ReduceL2 -> Mul(X, X),
// ReduceSum, Sqrt (whose gradient is 0 where the norm is, kZeroGradAtZero); ReduceLogSum -> ReduceSum,
// Log; ReduceLogSumExp -> ReduceMax m, Sub, Exp, ReduceSum, Log, Add m (no exp overflows); Max and
// Min of one input -> Identity, of three or more -> a chain of two-input ones. The reductions'
// axes, keepdims and noop_with_empty_axes carry over; the axes go where the model's opset puts
// each op's (ReduceSum takes an input from opset 13, ReduceMax from 18; between, a constant
// initializer is made from the attribute). Swish -> Mul(X, Sigmoid(alpha X)) (alpha a float32
// constant: Swish of float64 needs alpha 1). LRN -> X / Pow(bias + alpha * the mean of X^2 over
// `size` channels, beta): the mean an AveragePool of a (size, 1) window, pads counted, over X^2
// viewed as (N, 1, C, the other dims), reshaped back to X's shape (float32 constants: LRN of
// float64 models is refused at binding). Shrink -> Where(X < -lambd, X + bias, Where(X > lambd,
// X - bias, 0)) (float32 constants too). Uses g.opset.
void expand_composite_ops(Graph& g);

// Attribute of the Sqrt that ReduceL2 becomes (and so of its SqrtGrad): dX is 0 where Y is 0.
inline constexpr const char* kZeroGradAtZero = "cbt_zero_grad_at_zero";

}  // namespace cbt
