// CUDA-vs-CPU cases of the dense family: Conv, ConvTranspose, Gemm, MatMul, MaxPool,
// AveragePool, GlobalAveragePool, BatchNormalization (inference and training), and
// LayerNormalization, and through their gradient rules ConvGrad, ConvTransposeGrad, GemmGrad,
// MatMulGrad, the pool Grads, BatchNormTraining/BatchNormGrad and LayerNormGrad.
// Tolerances (float32): products and convolutions rtol 1e-4, atol 1e-4 (cuBLAS/cuDNN sum in
// another order than OpenBLAS, over K up to 576); statistics reduced in double rtol 1e-4,
// atol 1e-5; pooling is bit-identical to the CPU (same summation order) but is given 1e-6.
#include <cmath>
#include <tuple>

#include "common/op_harness.h"
#include "cuda/cuda_cases.h"

namespace cbt::test {
namespace {

using Ints = std::vector<int64_t>;

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.set(k, v);
  return a;
}

Tensor f32(const Shape& s, uint64_t seed, double scale = 1.0) { return random_tensor(DType::Float32, s, seed, scale); }

// Positive values (variances) in [0.5, 2.5).
Tensor positive(const Shape& s, uint64_t seed) {
  Tensor t = f32(s, seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = 0.5f + std::fabs(t.ptr<float>()[i]);
  return t;
}

// Small integers as floats: many ties inside pooling windows.
Tensor tied(const Shape& s, uint64_t seed) {
  Tensor r = random_int_tensor(s, 0, 3, seed);
  Tensor t(DType::Float32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = static_cast<float>(r.ptr<int64_t>()[i]);
  return t;
}

CudaCase make_case(std::string name, Node node, std::vector<Tensor> inputs, double rtol, double atol,
                   int64_t opset = 17) {
  CudaCase c;
  c.name = std::move(name);
  c.node = std::move(node);
  c.inputs = std::move(inputs);
  c.rtol = rtol;
  c.atol = atol;
  c.opset = opset;
  return c;
}

constexpr double kProdRtol = 1e-4, kProdAtol = 1e-4;

CudaCase conv(std::string name, const Shape& x, const Shape& w, Attributes a, bool bias, uint64_t seed) {
  std::vector<Tensor> in{f32(x, seed), f32(w, seed + 1, 0.3)};
  if (bias) in.push_back(f32({w[0]}, seed + 2));
  Node node = make_node("Conv", in.size(), 1, std::move(a));
  return make_case("Conv/" + name, std::move(node), std::move(in), kProdRtol, kProdAtol);
}

// ConvTranspose weight (C, M/G, k...): M = w[1] * group.
CudaCase conv_t(std::string name, const Shape& x, const Shape& w, Attributes a, int64_t group, bool bias,
                uint64_t seed) {
  std::vector<Tensor> in{f32(x, seed), f32(w, seed + 1, 0.3)};
  if (bias) in.push_back(f32({w[1] * group}, seed + 2));
  Node node = make_node("ConvTranspose", in.size(), 1, std::move(a));
  return make_case("ConvTranspose/" + name, std::move(node), std::move(in), kProdRtol, kProdAtol);
}

std::vector<CudaCase> conv_cases() {
  std::vector<CudaCase> v;
  v.push_back(conv("3x3_pad1_bias", {2, 3, 7, 6}, {4, 3, 3, 3}, attrs({{"pads", Ints{1, 1, 1, 1}}}), true, 10));
  v.push_back(conv("stride2_batch1", {1, 3, 9, 8}, {5, 3, 3, 3},
                   attrs({{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}), true, 20));
  v.push_back(conv("dilation2_nobias", {2, 2, 9, 9}, {3, 2, 3, 3},
                   attrs({{"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}), false, 30));
  v.push_back(
      conv("group2", {2, 4, 6, 5}, {6, 2, 3, 3}, attrs({{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}), true, 40));
  v.push_back(conv("depthwise_stride2", {2, 8, 7, 7}, {8, 1, 3, 3},
                   attrs({{"group", int64_t{8}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}), false, 50));
  // SAME_UPPER with stride 2 on an even size pads only at the end: explicit padding path.
  v.push_back(conv("same_upper_stride2", {2, 3, 8, 7}, {4, 3, 3, 3},
                   attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}), true, 60));
  v.push_back(conv("asymmetric_pads", {2, 3, 6, 6}, {2, 3, 2, 2}, attrs({{"pads", Ints{0, 1, 1, 2}}}), true, 70));
  v.push_back(conv("1d_stride2_dilation2", {2, 3, 11}, {4, 3, 3},
                   attrs({{"strides", Ints{2}}, {"dilations", Ints{2}}, {"pads", Ints{1, 1}}}), true, 80));
  v.push_back(
      conv("1d_same_lower", {1, 2, 10}, {3, 2, 4}, attrs({{"auto_pad", std::string("SAME_LOWER")}}), false, 90));
  v.push_back(conv("1x1_K64", {4, 64, 5, 5}, {32, 64, 1, 1}, {}, true, 100));
  // The filter gradients of these two sum 25088 and 512 products of unit-variance values
  // (scale ~158 and ~23): an element that cancels to near zero keeps the absolute rounding
  // of the whole sum, so their atol is a fixed fraction (3e-5) of that scale.
  v.push_back(conv("lenet_5x5_batch32", {32, 1, 28, 28}, {6, 1, 5, 5}, attrs({{"pads", Ints{2, 2, 2, 2}}}), true, 110));
  v.back().atol = 5e-3;
  v.push_back(conv("resnet_3x3_K576", {8, 64, 8, 8}, {64, 64, 3, 3}, attrs({{"pads", Ints{1, 1, 1, 1}}}), false, 120));
  v.back().atol = 1e-3;

  // A Conv fused with the Relu after it (graph/fusion.h): bias and Relu in one pass forward;
  // backward the masked dY (output 3) comes from the bias reduction, or without a bias from
  // its own pass.
  v.push_back(conv("relu_lenet_5x5_batch32", {32, 1, 28, 28}, {6, 1, 5, 5},
                   attrs({{"pads", Ints{2, 2, 2, 2}}, {"relu", int64_t{1}}}), true, 130));
  v.back().atol = 5e-3;
  // LeNet-5's second convolution, where cbtrain's direct kernels may run forward and backward
  // data (direct_conv.h).
  v.push_back(conv("relu_lenet2_5x5_6to16", {4, 6, 14, 14}, {16, 6, 5, 5}, attrs({{"relu", int64_t{1}}}), true, 135));
  v.back().atol = 1e-3;
  v.push_back(conv("relu_nobias_stride2", {2, 3, 9, 8}, {5, 3, 3, 3},
                   attrs({{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"relu", int64_t{1}}}), false, 140));
  // Depthwise convolutions, which cbtrain's depthwise kernels may run (depthwise_conv.h): 3x3
  // with bias on odd sizes, 5x5 fused with its Relu, ConvNeXt's 7x7, and a stride-2 one with
  // pads only after (explicit padding); depthwise_stride2 above is one too.
  v.push_back(conv("depthwise_3x3_bias", {2, 8, 9, 7}, {8, 1, 3, 3},
                   attrs({{"group", int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}}), true, 150));
  v.push_back(conv("depthwise_5x5_relu", {2, 6, 10, 10}, {6, 1, 5, 5},
                   attrs({{"group", int64_t{6}}, {"pads", Ints{2, 2, 2, 2}}, {"relu", int64_t{1}}}), true, 155));
  v.push_back(conv("depthwise_7x7_bias", {2, 4, 14, 14}, {4, 1, 7, 7},
                   attrs({{"group", int64_t{4}}, {"pads", Ints{3, 3, 3, 3}}}), true, 160));
  v.push_back(conv("depthwise_stride2_pads_after", {2, 4, 8, 8}, {4, 1, 3, 3},
                   attrs({{"group", int64_t{4}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}}), false, 165));

  v.push_back(conv_t("stride2_outpad_bias", {2, 4, 5, 5}, {4, 3, 3, 3},
                     attrs({{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}}), 1,
                     true, 200));
  v.push_back(conv_t("group2_dilation2_batch1", {1, 4, 4, 5}, {4, 2, 3, 3},
                     attrs({{"group", int64_t{2}}, {"dilations", Ints{2, 2}}}), 2, false, 210));
  v.push_back(
      conv_t("same_upper_output_shape", {2, 3, 4, 4}, {3, 2, 3, 3},
             attrs({{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}, {"output_shape", Ints{8, 8}}}), 1,
             true, 220));
  // Depthwise: its forward is a depthwise backward data.
  v.push_back(conv_t("depthwise_stride1", {2, 4, 6, 5}, {4, 1, 3, 3},
                     attrs({{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}), 4, true, 227));
  // Stride 1: its forward is a backward-data convolution a direct kernel may run.
  v.push_back(
      conv_t("stride1_pad1_bias", {2, 4, 6, 5}, {4, 3, 3, 3}, attrs({{"pads", Ints{1, 1, 1, 1}}}), 1, true, 225));
  // Leading pad 1 with stride 3: cuDNN's symmetric pads give another grid, so explicit.
  v.push_back(conv_t("1d_stride3_asymmetric", {2, 3, 7}, {3, 2, 4}, attrs({{"strides", Ints{3}}, {"pads", Ints{1, 2}}}),
                     1, true, 230));
  return v;
}

CudaCase gemm(std::string name, const Shape& a, const Shape& b, const Shape* c, Attributes at, uint64_t seed,
              double rtol = kProdRtol, double atol = kProdAtol) {
  std::vector<Tensor> in{f32(a, seed), f32(b, seed + 1)};
  if (c) in.push_back(f32(*c, seed + 2));
  Node node = make_node("Gemm", in.size(), 1, std::move(at));
  return make_case("Gemm/" + name, std::move(node), std::move(in), rtol, atol);
}

CudaCase matmul(std::string name, const Shape& a, const Shape& b, uint64_t seed) {
  return make_case("MatMul/" + name, make_node("MatMul", 2, 1), {f32(a, seed), f32(b, seed + 1)}, kProdRtol, kProdAtol);
}

std::vector<CudaCase> product_cases() {
  std::vector<CudaCase> v;
  Shape c3{3}, c53{5, 3}, c41{4, 1}, c1{1}, c16{16}, c0{};
  v.push_back(gemm("bias_vector", {5, 7}, {7, 3}, &c3, {}, 300));
  v.push_back(gemm("transA_transB_C_matrix", {7, 5}, {3, 7}, &c53,
                   attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.7f}, {"beta", 1.3f}}), 310));
  v.push_back(gemm("C_column_transA", {6, 4}, {6, 5}, &c41, attrs({{"transA", int64_t{1}}}), 320));
  v.push_back(
      gemm("C_one_alpha", {4, 6}, {5, 6}, &c1, attrs({{"transB", int64_t{1}}, {"alpha", 2.5f}, {"beta", 0.5f}}), 330));
  v.push_back(gemm("C_scalar", {3, 4}, {4, 2}, &c0, {}, 340));
  v.push_back(gemm("no_C_batch1", {1, 9}, {5, 9}, nullptr, attrs({{"transB", int64_t{1}}}), 350));
  v.push_back(gemm("K512_bias", {8, 512}, {512, 16}, &c16, {}, 360));
  // A Linear layer over many rows (tokens): B's gradient sums over 901 (900) rows in chunks
  // (ops/cuda/matmul.cu, split_k_product), with transB as PyTorch exports Linear, and alpha.
  Shape c40{40};
  v.push_back(gemm("transB_weight_grad_split_k", {901, 24}, {40, 24}, &c40, attrs({{"transB", int64_t{1}}}), 362));
  v.push_back(gemm("alpha_weight_grad_split_k", {900, 20}, {20, 30}, nullptr, attrs({{"alpha", 0.5f}}), 364));
  // Fused with the Relu after it (graph/fusion.h): a bias vector and the Relu in cuBLASLt's
  // epilogue (LeNet-5's first layer; with transA), the Relu alone (no C), and a C matrix with
  // beta (the cuBLAS path and a Relu pass). Backward: the masked dY (output 3) from the dC
  // reduction, or from its own pass without C.
  Shape c120{120}, c1x6{1, 6};
  v.push_back(gemm("relu_bias_lenet_fc1", {32, 400}, {120, 400}, &c120,
                   attrs({{"transB", int64_t{1}}, {"relu", int64_t{1}}}), 370));
  v.push_back(gemm("relu_bias_row_transA_alpha", {9, 4}, {9, 6}, &c1x6,
                   attrs({{"transA", int64_t{1}}, {"alpha", 0.5f}, {"relu", int64_t{1}}}), 375));
  v.push_back(gemm("relu_no_C", {6, 5}, {5, 7}, nullptr, attrs({{"relu", int64_t{1}}}), 380));
  v.push_back(gemm("relu_C_matrix_beta", {5, 7}, {7, 3}, &c53, attrs({{"beta", 0.5f}, {"relu", int64_t{1}}}), 385));
  // A bias over thousands of rows (the Linear layers over tokens of fuse_linear): its gradient in
  // sum_to's two passes, and with the Relu in one block an element, writing the masked dY.
  Shape c6{6};
  v.push_back(gemm("bias_over_2500_rows", {2500, 8}, {8, 6}, &c6, {}, 390));
  v.push_back(gemm("relu_bias_over_2100_rows", {2100, 8}, {8, 6}, &c6, attrs({{"relu", int64_t{1}}}), 395));

  v.push_back(matmul("2d", {5, 7}, {7, 3}, 400));
  v.push_back(matmul("batched_same", {3, 4, 5}, {3, 5, 6}, 410));
  v.push_back(matmul("broadcast_B_folded", {2, 3, 4, 5}, {5, 6}, 420));
  v.push_back(matmul("single_A_batched_B", {4, 5}, {3, 5, 6}, 430));
  v.push_back(matmul("broadcast_both", {2, 1, 4, 5}, {1, 3, 5, 6}, 440));
  v.push_back(matmul("broadcast_inner_dim", {3, 1, 4, 5}, {3, 2, 5, 6}, 450));
  v.push_back(matmul("vec_mat_batched", {5}, {3, 5, 6}, 460));
  v.push_back(matmul("mat_vec_batched", {3, 4, 5}, {5}, 470));
  v.push_back(matmul("vec_vec", {7}, {7}, 480));
  v.push_back(matmul("K300", {6, 300}, {300, 10}, 490));
  // A weight's gradient over many rows (Linear over images or sequences): B's gradient is a
  // product over 2,800 (2,103) rows, split into chunks summed in order (ops/cuda/matmul.cu),
  // the second with a shorter last chunk.
  v.push_back(matmul("weight_grad_split_k", {4, 700, 24}, {24, 96}, 492));
  v.push_back(matmul("weight_grad_split_k_rest", {3, 701, 20}, {20, 40}, 494));
  // The fused attention core (graph/fusion.h): ViT's 4 heads of 32 images (S = T = 50, 12
  // wide), and rows longer than a warp with S != T and D != E; through its gradient rule
  // SoftmaxAttentionGrad (X, Y and V's gradients).
  v.push_back(make_case("SoftmaxAttention/vit_heads", make_node("SoftmaxAttention", 3, 1, {}, kCbtDomain),
                        {f32({128, 50, 12}, 496), f32({128, 12, 50}, 497), f32({128, 50, 12}, 498)}, kProdRtol,
                        kProdAtol));
  // With a bias added to the scores (input 4): per head and key, broadcast over the batch and
  // the queries; per query and key, broadcast over both batch dims. B's gradient is the
  // backward's fourth output, the scores' gradient, summed to B's shape.
  v.push_back(
      make_case("SoftmaxAttention/bias_per_head_and_key", make_node("SoftmaxAttention", 4, 1, {}, kCbtDomain),
                {f32({2, 3, 37, 20}, 502), f32({2, 3, 20, 45}, 503), f32({2, 3, 45, 9}, 504), f32({3, 1, 45}, 505)},
                kProdRtol, kProdAtol));
  v.push_back(
      make_case("SoftmaxAttention/bias_per_query_and_key", make_node("SoftmaxAttention", 4, 1, {}, kCbtDomain),
                {f32({2, 3, 37, 20}, 506), f32({2, 3, 20, 45}, 507), f32({2, 3, 45, 9}, 508), f32({37, 45}, 509)},
                kProdRtol, kProdAtol));
  // Rows of scores that fit a warp (T <= 32) in batches of 512 matrices or more run a warp a
  // matrix: Swin's windows (16 x 16, a bias per matrix, head and key pair), a bias per query and
  // key over 28 keys, S != T with D != E, four rows of 8 keys a pass, and matrices so large that
  // a block takes one. Fewer such matrices run a block each (the decoder's).
  v.push_back(make_case(
      "SoftmaxAttention/warp_swin_windows", make_node("SoftmaxAttention", 4, 1, {}, kCbtDomain),
      {f32({144, 4, 16, 8}, 510), f32({144, 4, 8, 16}, 511), f32({144, 4, 16, 8}, 512), f32({144, 4, 16, 16}, 513)},
      kProdRtol, kProdAtol));
  v.push_back(make_case(
      "SoftmaxAttention/warp_bias_per_query_and_key", make_node("SoftmaxAttention", 4, 1, {}, kCbtDomain),
      {f32({128, 4, 28, 16}, 514), f32({128, 4, 16, 28}, 515), f32({128, 4, 28, 16}, 516), f32({28, 28}, 517)},
      kProdRtol, kProdAtol));
  v.push_back(make_case("SoftmaxAttention/warp_ragged", make_node("SoftmaxAttention", 3, 1, {}, kCbtDomain),
                        {f32({520, 37, 9}, 518), f32({520, 9, 20}, 519), f32({520, 20, 11}, 520)}, kProdRtol,
                        kProdAtol));
  v.push_back(make_case("SoftmaxAttention/warp_four_rows_a_pass", make_node("SoftmaxAttention", 4, 1, {}, kCbtDomain),
                        {f32({600, 13, 5}, 524), f32({600, 5, 8}, 525), f32({600, 8, 7}, 526), f32({600, 1, 8}, 527)},
                        kProdRtol, kProdAtol));
  v.push_back(make_case("SoftmaxAttention/warp_one_a_block", make_node("SoftmaxAttention", 3, 1, {}, kCbtDomain),
                        {f32({512, 32, 64}, 521), f32({512, 64, 32}, 522), f32({512, 32, 64}, 523)}, kProdRtol,
                        kProdAtol));
  v.push_back(
      make_case("SoftmaxAttention/block_few_small_matrices", make_node("SoftmaxAttention", 4, 1, {}, kCbtDomain),
                {f32({3, 2, 28, 16}, 528), f32({3, 2, 16, 28}, 529), f32({3, 2, 28, 16}, 530), f32({28, 28}, 531)},
                kProdRtol, kProdAtol));
  v.push_back(make_case("SoftmaxAttention/ragged_rank4", make_node("SoftmaxAttention", 3, 1, {}, kCbtDomain),
                        {f32({2, 3, 37, 20}, 499), f32({2, 3, 20, 45}, 500), f32({2, 3, 45, 9}, 501)}, kProdRtol,
                        kProdAtol));
  return v;
}

CudaCase pool(std::string op, std::string name, Tensor x, Attributes a, size_t outputs = 1, int64_t opset = 17) {
  return make_case(op + "/" + name, make_node(op, 1, outputs, std::move(a)), {std::move(x)}, 1e-6, 1e-6, opset);
}

std::vector<CudaCase> pool_cases() {
  std::vector<CudaCase> v;
  v.push_back(pool("MaxPool", "2x2_s2", f32({2, 3, 8, 8}, 500),
                   attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})));
  v.push_back(pool("MaxPool", "3x3_s2_pad1_ceil", f32({2, 3, 9, 10}, 510),
                   attrs({{"kernel_shape", Ints{3, 3}},
                          {"strides", Ints{2, 2}},
                          {"pads", Ints{1, 1, 1, 1}},
                          {"ceil_mode", int64_t{1}}})));
  v.push_back(pool("MaxPool", "dilation2_indices_batch1", f32({1, 2, 9, 9}, 520),
                   attrs({{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}}), 2));
  v.push_back(
      pool("MaxPool", "1d_k3_s2", f32({2, 3, 11}, 530), attrs({{"kernel_shape", Ints{3}}, {"strides", Ints{2}}})));
  // Overlapping windows over many equal values: the first maximum wins on both devices.
  v.push_back(pool("MaxPool", "ties_overlapping", tied({2, 2, 6, 7}, 540),
                   attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}}), 2));
  // Windows that tile the plane (kernel = stride): the one-window-per-thread kernels.
  v.push_back(pool("MaxPool", "tiled_3x3_s3_ties_indices", tied({2, 3, 9, 12}, 560),
                   attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{3, 3}}}), 2));
  v.push_back(pool("MaxPool", "2x2_s2_odd_plane", f32({2, 3, 7, 9}, 570),
                   attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})));
  v.push_back(
      pool("MaxPool", "same_upper_s2", f32({1, 2, 7, 8}, 550),
           attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}})));

  // Planes in several bands of rows (the backward's shared-memory kernel, ops/cuda/pool.cu):
  // GoogLeNet's 3 x 3 stride-1 pooling with a last band shorter than the others, stride 2 with
  // ceil_mode, dilation, rows wider than a band (one row each), and a 1-D row too long for a
  // band's windows in shared memory (the general kernel).
  v.push_back(pool("MaxPool", "bands_3x3_s1_pad1", f32({2, 3, 40, 37}, 580),
                   attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}, {"pads", Ints{1, 1, 1, 1}}})));
  v.push_back(pool("MaxPool", "bands_3x3_s2_pad1_ceil", f32({2, 2, 45, 30}, 582),
                   attrs({{"kernel_shape", Ints{3, 3}},
                          {"strides", Ints{2, 2}},
                          {"pads", Ints{1, 1, 1, 1}},
                          {"ceil_mode", int64_t{1}}})));
  v.push_back(pool("MaxPool", "bands_dilation2_ties", tied({1, 2, 50, 24}, 584),
                   attrs({{"kernel_shape", Ints{3, 2}}, {"dilations", Ints{2, 2}}, {"pads", Ints{2, 1, 1, 0}}})));
  v.push_back(pool("MaxPool", "bands_wide_rows", f32({1, 2, 5, 700}, 586),
                   attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 2}}, {"pads", Ints{1, 1, 1, 1}}})));
  v.push_back(pool("MaxPool", "1d_row_beyond_a_band", f32({1, 1, 20000}, 588),
                   attrs({{"kernel_shape", Ints{3}}, {"strides", Ints{1}}, {"pads", Ints{1, 1}}})));

  v.push_back(pool("AveragePool", "2x2_s2", f32({2, 3, 8, 8}, 600),
                   attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})));
  v.push_back(pool("AveragePool", "3x3_s2_include_pad_ceil", f32({2, 2, 9, 8}, 610),
                   attrs({{"kernel_shape", Ints{3, 3}},
                          {"strides", Ints{2, 2}},
                          {"pads", Ints{1, 1, 1, 1}},
                          {"count_include_pad", int64_t{1}},
                          {"ceil_mode", int64_t{1}}})));
  v.push_back(pool("AveragePool", "3x3_asymmetric_exclude_pad", f32({2, 2, 7, 6}, 620),
                   attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 1}}, {"pads", Ints{0, 1, 1, 0}}})));
  v.push_back(pool("AveragePool", "1d_k3_pad1", f32({2, 3, 10}, 630),
                   attrs({{"kernel_shape", Ints{3}}, {"pads", Ints{1, 1}}})));
  v.push_back(pool("AveragePool", "dilation2_batch1", f32({1, 2, 7, 7}, 640),
                   attrs({{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}}), 1, 19));

  auto gap = [&](std::string name, const Shape& s, uint64_t seed) {
    v.push_back(
        make_case("GlobalAveragePool/" + name, make_node("GlobalAveragePool", 1, 1), {f32(s, seed)}, 1e-6, 1e-6));
  };
  gap("2d_odd", {2, 3, 5, 7}, 700);
  gap("resnet_head", {32, 64, 8, 8}, 710);
  gap("1d_batch1", {1, 3, 9}, 720);
  for (auto [name, s, seed] : {std::tuple<std::string, Shape, uint64_t>{"2d_odd", {2, 3, 5, 7}, 730},
                               {"resnet_head", {32, 64, 8, 8}, 740},
                               {"1d_batch1", {1, 3, 9}, 750}})
    v.push_back(make_case("GlobalMaxPool/" + name, make_node("GlobalMaxPool", 1, 1), {f32(s, seed)}, 1e-6, 1e-6));
  return v;
}

CudaCase batch_norm(std::string name, const Shape& x, bool training, uint64_t seed, size_t outputs = 1) {
  int64_t c = x[1];
  // A shifted input: the batch mean is far from zero, as after a ReLU.
  Tensor xt = f32(x, seed);
  for (int64_t i = 0; i < xt.numel(); ++i) xt.ptr<float>()[i] += 3.0f;
  std::vector<Tensor> in{xt, f32({c}, seed + 1), f32({c}, seed + 2), f32({c}, seed + 3), positive({c}, seed + 4)};
  CudaCase k = make_case("BatchNormalization/" + name,
                         make_node("BatchNormalization", 5, outputs, attrs({{"epsilon", 1e-3f}, {"momentum", 0.8f}})),
                         std::move(in), 1e-4, 1e-5);
  k.training = training;
  return k;
}

// BatchNormTraining fused with a Relu (graph/fusion.h): forward max(BN(X), 0) and, through
// its gradient rule, BatchNormGrad with relu=1. The unshifted input puts about half of the
// outputs below zero.
CudaCase batch_norm_relu(std::string name, const Shape& x, uint64_t seed) {
  int64_t c = x[1];
  std::vector<Tensor> in{f32(x, seed), f32({c}, seed + 1), f32({c}, seed + 2), f32({c}, seed + 3),
                         positive({c}, seed + 4)};
  CudaCase k = make_case("BatchNormTraining/relu_" + name,
                         make_node("BatchNormTraining", 5, 3,
                                   attrs({{"epsilon", 1e-5f}, {"momentum", 0.9f}, {"relu", int64_t{1}}}), kCbtDomain),
                         std::move(in), 1e-4, 1e-5);
  k.training = false;  // already the training form
  return k;
}

CudaCase layer_norm(std::string name, const Shape& x, int64_t axis, bool bias, size_t outputs, uint64_t seed) {
  int64_t a = axis < 0 ? axis + static_cast<int64_t>(x.size()) : axis;
  Shape norm(x.begin() + a, x.end());
  std::vector<Tensor> in{f32(x, seed), f32(norm, seed + 1)};
  if (bias) in.push_back(f32(norm, seed + 2));
  Node node = make_node("LayerNormalization", in.size(), outputs, attrs({{"axis", axis}}));
  return make_case("LayerNormalization/" + name, std::move(node), std::move(in), 1e-4, 1e-5);
}

// RMSNorm (cbtrain's domain, graph/fusion.h's fuse_rms_norm), with or without a scale, saving
// InvRms (two outputs, as the fusion makes it) or not; through its gradient rule RMSNormGrad.
CudaCase rms_norm(std::string name, const Shape& x, int64_t axis, bool scaled, size_t outputs, uint64_t seed) {
  int64_t a = axis < 0 ? axis + static_cast<int64_t>(x.size()) : axis;
  std::vector<Tensor> in{f32(x, seed)};
  if (scaled) in.push_back(f32(Shape(x.begin() + a, x.end()), seed + 1));
  Node node = make_node("RMSNorm", in.size(), outputs, attrs({{"axis", axis}, {"epsilon", 1e-6f}}), kCbtDomain);
  return make_case("RMSNorm/" + name, std::move(node), std::move(in), 1e-4, 1e-5);
}

// InstanceNormalization (groups = 0) or GroupNormalization with `params` scale/bias values
// (per channel, or per group before opset 21); through its gradient rule GroupNormGrad.
CudaCase group_norm(std::string name, const Shape& x, int64_t groups, int64_t params, int64_t opset, uint64_t seed) {
  std::vector<Tensor> in{f32(x, seed), f32({params}, seed + 1), f32({params}, seed + 2)};
  const bool instance = groups == 0;
  Node node = instance ? make_node("InstanceNormalization", 3, 1, attrs({{"epsilon", 1e-3f}}))
                       : make_node("GroupNormalization", 3, 1, attrs({{"num_groups", groups}}));
  CudaCase k = make_case((instance ? "InstanceNormalization/" : "GroupNormalization/") + name, std::move(node),
                         std::move(in), 1e-4, 1e-5);
  k.opset = opset;
  return k;
}

std::vector<CudaCase> norm_cases() {
  std::vector<CudaCase> v;
  v.push_back(batch_norm("train_4x3x5x5", {4, 3, 5, 5}, true, 800));
  v.push_back(batch_norm("train_resnet_32x16x8x8", {32, 16, 8, 8}, true, 810));
  v.push_back(batch_norm("train_rank2", {8, 5}, true, 820));
  v.push_back(batch_norm("train_batch1", {1, 4, 3, 3}, true, 830));
  v.push_back(batch_norm("train_1d", {2, 3, 7}, true, 840));
  v.push_back(batch_norm("train_many_elements", {64, 2, 24, 24}, true, 850));
  v.push_back(batch_norm("inference_frozen", {2, 3, 4, 4}, false, 860));
  v.push_back(batch_norm("inference_stat_outputs", {3, 4, 5}, false, 870, 3));
  v.push_back(batch_norm_relu("resnet_32x16x8x8", {32, 16, 8, 8}, 880));
  // One-launch kernels (ops/cuda/batch_norm.cu): 8 blocks a channel of 16 values a thread,
  // and ragged chunks.
  v.push_back(batch_norm("train_resnet_stage1_32x16x32x32", {32, 16, 32, 32}, true, 890));
  v.push_back(batch_norm_relu("ragged_5x3x17x13", {5, 3, 17, 13}, 900));
  v.push_back(batch_norm_relu("odd_3x5x7x3", {3, 5, 7, 3}, 890));

  v.push_back(layer_norm("last_axis_bias", {4, 10}, -1, true, 1, 900));
  v.push_back(layer_norm("axis1_saved_stats", {2, 3, 8}, 1, true, 3, 910));
  v.push_back(layer_norm("wide_no_bias", {5, 300}, -1, false, 1, 920));
  v.push_back(layer_norm("many_rows", {64, 7}, -1, true, 1, 930));
  v.push_back(layer_norm("rank3_last_axis", {3, 4, 5}, -1, true, 3, 940));
  // Over the channels of a channels-last image (ConvNeXt): thousands of rows of 24 values, the
  // parameter gradients' partials of 16 rows and their sums a warp per parameter.
  v.push_back(layer_norm("channels_last_many_rows", {6, 14, 14, 24}, -1, true, 1, 950));
  // The decoder's rows (32 images of 28 tokens, 48 wide), a row wider than a block, two axes.
  v.push_back(rms_norm("decoder_rows_saved", {32, 28, 48}, -1, true, 2, 960));
  v.push_back(rms_norm("wide_recomputed", {5, 300}, -1, true, 1, 965));
  v.push_back(rms_norm("two_axes_no_scale", {3, 4, 5}, 1, false, 2, 970));

  v.push_back(group_norm("2x3x5x5", {2, 3, 5, 5}, 0, 3, 17, 950));
  v.push_back(group_norm("wide_rows_4x8x40x40", {4, 8, 40, 40}, 0, 8, 17, 955));
  v.push_back(group_norm("per_channel_2x8x6x6", {2, 8, 6, 6}, 4, 8, 21, 960));
  v.push_back(group_norm("per_group_opset18_3x6x7", {3, 6, 7}, 3, 3, 18, 965));
  v.push_back(group_norm("one_group_5x4x3", {5, 4, 3}, 1, 4, 21, 970));
  return v;
}

}  // namespace

CBT_CUDA_CASES(conv_cases);
CBT_CUDA_CASES(product_cases);
CBT_CUDA_CASES(pool_cases);
CBT_CUDA_CASES(norm_cases);

}  // namespace cbt::test
