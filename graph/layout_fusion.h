// Rewrites of the training step around Reshapes, which are views: a Linear layer over tokens as
// one Gemm between two Reshapes, and an Add of a constant between a Reshape and its inverse as one
// Add of the constant laid out anew, both where every learner is on a GPU
// (TrainingGraphOptions::gpu_fusions) and before fuse_attention, which the second lets take Swin's
// attention (its bias and window masks are added through such a Reshape pair); and torch.roll's
// Slices and Concat as one Roll, on every device.
#pragma once
#include <map>
#include <set>
#include <string>

#include "graph/ir.h"

namespace cbt {

// A Linear layer as exporters write it for inputs of more than two dims, MatMul(X (..., K),
// W (K, N)) then an Add of a bias (N) (either order), becomes Reshape(X, (-1, K)), Gemm(that, W,
// bias) and Reshape back to the Add's output, wherever the product feeds nothing but the Add and
// is not in `exposed` and all three are float32 (a 2-D X needs no Reshapes). The Reshapes are
// views; the GPU's Gemm adds the bias in cuBLASLt's epilogue and sums its gradient in one
// kernel, where the pair took a broadcast Add and a two-pass sum. The same up to rounding.
// Returns the pairs fused.
int fuse_linear(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

// Reshape(A, s1), an Add of a float32 constant M (an initializer the model cannot train) that
// broadcasts to s1 without widening it, and a Reshape back to A's shape, becomes Add(A, M') where
// M' is M broadcast to s1 and read in A's shape, kept at size 1 along every dim of A it does
// not vary along; where M is all zeros (and the Reshape back's output is not in `exposed`) the
// three nodes go and the Reshape back's readers take A. Only where the first Reshape's output
// and the sum are read by nothing else and are not in `exposed`. The same values bit for bit (but
// for the sign of a zero that an Add of zeros makes positive). Returns the triples folded.
int fold_reshaped_constant_adds(Graph& g, std::map<std::string, ValueType>& types,
                                const std::set<std::string>& exposed);

// torch.roll as exporters write it, Concat along an axis of Slice(X, [k, n)) then Slice(X, [0, k))
// over that axis alone, becomes one Roll (cbtrain's domain, Y[i] = X[(i + k) mod n]; its gradient
// a Roll back), and a Roll of a Roll over other axes one Roll over both (torch.roll over two
// dims), wherever the values between are read by nothing else and are not in `exposed`. A
// copy or two in place of two Slices, a Concat and, backward, their gradients and sum: Swin's
// shifted windows. The same values bit for bit. Runs on every device. Returns the Concats
// replaced.
int fuse_roll(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed);

}  // namespace cbt
