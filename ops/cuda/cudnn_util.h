// Move-only owners of cuDNN descriptors (tensor, filter, convolution, pooling, activation)
// and setters for the NCHW float32 layouts the CUDA kernels use.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <limits>
#include <utility>

#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {

template <class H, cudnnStatus_t (*Create)(H*), cudnnStatus_t (*Destroy)(H)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() { CBT_CUDNN_CHECK(Create(&h_)); }
  ~CudnnDescriptor() {
    if (h_) Destroy(h_);  // never throws: a failed destroy only leaks
  }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  CudnnDescriptor(CudnnDescriptor&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  CudnnDescriptor& operator=(CudnnDescriptor&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  H get() const { return h_; }
  operator H() const { return h_; }

 private:
  H h_ = nullptr;
};

using TensorDesc = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using PoolingDesc =
    CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;
using ActivationDesc =
    CudnnDescriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor>;

// cuDNN takes int dimensions; larger ones are a model the GPU path cannot run.
inline int cudnn_dim(int64_t v) {
  CBT_MODEL_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "dimension ", v, " is too large for cuDNN");
  return static_cast<int>(v);
}

// Packed NCHW float32 tensor (n, c, h, w).
inline void set_nchw(const TensorDesc& d, int64_t n, int64_t c, int64_t h, int64_t w) {
  CBT_MODEL_CHECK(n * c * h * w <= std::numeric_limits<int>::max(), "tensor of ", n * c * h * w,
                  " elements is too large for cuDNN");
  CBT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, cudnn_dim(n), cudnn_dim(c),
                                             cudnn_dim(h), cudnn_dim(w)));
}

// Float32 filter (k output channels, c input channels per group, kh, kw).
inline void set_filter(const FilterDesc& d, int64_t k, int64_t c, int64_t kh, int64_t kw) {
  CBT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, cudnn_dim(k), cudnn_dim(c),
                                             cudnn_dim(kh), cudnn_dim(kw)));
}

// cuDNN calls of a kernel go to the context's stream.
inline cudnnHandle_t cudnn_on_stream(const CudaContext& cc) {
  CBT_CUDNN_CHECK(cudnnSetStream(cc.cudnn, cc.stream));
  return cc.cudnn;
}

}  // namespace cbt::cuda
