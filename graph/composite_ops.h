// Ops that are compositions of others, expanded at load into the ops they are made of, so that
// their gradients and CUDA kernels are those ops' (the written model keeps the original nodes).
#pragma once
#include "graph/ir.h"

namespace cbt {

// ReduceSumSquare -> Mul(X, X), ReduceSum; ReduceL1 -> Abs, ReduceSum; ReduceL2 -> Mul(X, X),
// ReduceSum, Sqrt (whose gradient is 0 where the norm is, kZeroGradAtZero). The axes, keepdims and noop_with_empty_axes
// carry over; the axes go where the model's opset puts ReduceSum's (an attribute before 13, an input from 13, a
// constant initializer made from the attribute between 13 and 17). Uses g.opset.
void expand_composite_ops(Graph& g);

// Attribute of the Sqrt that ReduceL2 becomes (and so of its SqrtGrad): dX is 0 where Y is 0.
inline constexpr const char* kZeroGradAtZero = "cbt_zero_grad_at_zero";

}  // namespace cbt
