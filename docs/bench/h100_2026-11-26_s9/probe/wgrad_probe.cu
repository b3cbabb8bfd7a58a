// Probe (ninth session): a direct backward-filter kernel for LeNet-5's two small convolutions
// against cuDNN's legacy algorithms, each timed as the engine search times them: 8 copies on 8
// streams at once, 3 runs each, captured in one CUDA graph, the second replay timed.
//   nvcc -O3 -arch=sm_90 wgrad_probe.cu -I$CUDNN/include -L$CUDNN/lib -lcudnn -o wgrad_probe
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t err_ = (x);                                                    \
    if (err_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define DK(x)                                                                \
  do {                                                                       \
    cudnnStatus_t e = (x);                                                   \
    if (e != CUDNN_STATUS_SUCCESS) {                                         \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudnnGetErrorString(e)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

struct Conv {
  int N, C, H, W, M, K, P, OH, OW;
};

// Block (n, y, z): image n, pairs [y*T, (y+1)*T) of (m, c, kh, kw), output rows z, z+Z, ...
// The image's dY planes (all M) and X planes (all C) in shared memory; each thread one pair
// over its rows; partial sums per (n, z); the last of the N*Z blocks of pair chunk y adds them
// in a fixed order (deterministic).
__global__ void wgrad_direct(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ partials,
                             float* __restrict__ dw, unsigned* counters, Conv g) {
  extern __shared__ float sm[];
  const int n = blockIdx.x, y = blockIdx.y, z = blockIdx.z, Z = gridDim.z;
  const int ysz = g.M * g.OH * g.OW, xsz = g.C * g.H * g.W;
  float* sy = sm;
  float* sx = sm + ysz;
  for (int i = threadIdx.x; i < ysz; i += blockDim.x) sy[i] = dy[(size_t)n * ysz + i];
  for (int i = threadIdx.x; i < xsz; i += blockDim.x) sx[i] = x[(size_t)n * xsz + i];
  __syncthreads();
  const int R = g.C * g.K * g.K, pairs = g.M * R;
  const int p = y * blockDim.x + threadIdx.x;
  if (p < pairs) {
    const int m = p / R, r = p - m * R, c = r / (g.K * g.K), kh = (r / g.K) % g.K, kw = r % g.K;
    const float* yp = sy + m * g.OH * g.OW;
    const float* xp = sx + c * g.H * g.W;
    const int ow0 = max(0, g.P - kw), ow1 = min(g.OW, g.W + g.P - kw);
    float s = 0.f;
    for (int oh = z; oh < g.OH; oh += Z) {
      const int ih = oh + kh - g.P;
      if (ih < 0 || ih >= g.H) continue;
      for (int ow = ow0; ow < ow1; ++ow) s += yp[oh * g.OW + ow] * xp[ih * g.W + ow + kw - g.P];
    }
    partials[((size_t)n * Z + z) * pairs + p] = s;
  }
  __threadfence();
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&counters[y], 1u) == gridDim.x * Z - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (p < pairs) {
    float s = 0.f;
    for (int i = 0; i < g.N * Z; ++i) s += partials[(size_t)i * pairs + p];
    dw[p] = s;
  }
  if (threadIdx.x == 0) counters[y] = 0;
}

void fill(std::vector<float>& v, unsigned seed) {
  srand(seed);
  for (auto& x : v) x = (float)rand() / RAND_MAX * 2 - 1;
}

int main() {
  const int copies = 8, reps = 3;
  cudnnHandle_t h;
  DK(cudnnCreate(&h));
  std::vector<cudaStream_t> side(copies);
  for (auto& s : side) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (Conv g : {Conv{32, 1, 28, 28, 6, 5, 2, 28, 28}, Conv{32, 6, 14, 14, 16, 5, 0, 10, 10}}) {
    const size_t nx = (size_t)g.N * g.C * g.H * g.W, ny = (size_t)g.N * g.M * g.OH * g.OW;
    const int R = g.C * g.K * g.K, pairs = g.M * R;
    std::vector<float> hx(nx), hy(ny), ref(pairs, 0.f);
    fill(hx, 1), fill(hy, 2);
    for (int n = 0; n < g.N; ++n)
      for (int p = 0; p < pairs; ++p) {
        const int m = p / R, r = p % R, c = r / (g.K * g.K), kh = (r / g.K) % g.K, kw = r % g.K;
        double s = 0;
        for (int oh = 0; oh < g.OH; ++oh)
          for (int ow = 0; ow < g.OW; ++ow) {
            int ih = oh + kh - g.P, iw = ow + kw - g.P;
            if (ih < 0 || iw < 0 || ih >= g.H || iw >= g.W) continue;
            s += (double)hy[((size_t)(n * g.M + m) * g.OH + oh) * g.OW + ow] *
                 hx[((size_t)(n * g.C + c) * g.H + ih) * g.W + iw];
          }
        ref[p] += (float)s;
      }
    float *dx, *dy;
    CK(cudaMalloc(&dx, nx * 4));
    CK(cudaMalloc(&dy, ny * 4));
    CK(cudaMemcpy(dx, hx.data(), nx * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, hy.data(), ny * 4, cudaMemcpyHostToDevice));
    std::vector<float*> dw(copies), part(copies);
    std::vector<unsigned*> cnt(copies);
    for (int i = 0; i < copies; ++i) {
      CK(cudaMalloc(&dw[i], pairs * 4));
      CK(cudaMalloc(&part[i], (size_t)g.N * 8 * pairs * 4));
      CK(cudaMalloc(&cnt[i], 4096));
      CK(cudaMemset(cnt[i], 0, 4096));
    }
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    DK(cudnnCreateTensorDescriptor(&xd));
    DK(cudnnCreateTensorDescriptor(&yd));
    DK(cudnnCreateFilterDescriptor(&wd));
    DK(cudnnCreateConvolutionDescriptor(&cd));
    DK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, g.N, g.C, g.H, g.W));
    DK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, g.N, g.M, g.OH, g.OW));
    DK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, g.M, g.C, g.K, g.K));
    DK(cudnnSetConvolution2dDescriptor(cd, g.P, g.P, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    DK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    const size_t smem = (size_t)(g.M * g.OH * g.OW + g.C * g.H * g.W) * 4;
    // -1: the direct kernel; else a cuDNN algorithm.
    for (int algo = -4; algo < CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT; ++algo) {
      const int Zs[4] = {1, 2, 4, 8};
      const int Z = algo < 0 ? Zs[algo + 4] : 1;
      size_t ws = 0;
      if (algo >= 0 && cudnnGetConvolutionBackwardFilterWorkspaceSize(
                           h, xd, yd, cd, wd, (cudnnConvolutionBwdFilterAlgo_t)algo, &ws) != CUDNN_STATUS_SUCCESS)
        continue;
      std::vector<void*> wsp(copies, nullptr);
      for (int i = 0; i < copies && ws; ++i) CK(cudaMalloc(&wsp[i], ws));
      const float one = 1.f, zero = 0.f;
      auto run = [&](int i, cudaStream_t s) -> bool {
        if (algo < 0) {
          const int T = 128;
          wgrad_direct<<<dim3(g.N, (pairs + T - 1) / T, Z), T, smem, s>>>(dx, dy, part[i], dw[i], cnt[i], g);
          return cudaGetLastError() == cudaSuccess;
        }
        cudnnSetStream(h, s);
        return cudnnConvolutionBackwardFilter(h, &one, xd, dx, yd, dy, cd, (cudnnConvolutionBwdFilterAlgo_t)algo,
                                              wsp[i], ws, &zero, wd, dw[i]) == CUDNN_STATUS_SUCCESS;
      };
      bool ok = true;
      for (int i = 0; i < copies; ++i) ok = ok && run(i, st);
      CK(cudaStreamSynchronize(st));
      if (!ok) {
        std::printf("algo %d: failed\n", algo);
        continue;
      }
      std::vector<float> got(pairs);
      CK(cudaMemcpy(got.data(), dw[0], pairs * 4, cudaMemcpyDeviceToHost));
      double err = 0, nrm = 0;
      for (int p = 0; p < pairs; ++p)
        err += (got[p] - ref[p]) * (double)(got[p] - ref[p]), nrm += (double)ref[p] * ref[p];
      cudaEvent_t fork, t0, t1;
      std::vector<cudaEvent_t> joins(copies);
      CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
      for (auto& ev : joins) CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
      CK(cudaEventCreate(&t0));
      CK(cudaEventCreate(&t1));
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
      CK(cudaEventRecord(fork, st));
      for (int i = 0; i < copies; ++i) {
        CK(cudaStreamWaitEvent(side[i], fork, 0));
        for (int r = 0; r < reps; ++r) run(i, side[i]);
        CK(cudaEventRecord(joins[i], side[i]));
        CK(cudaStreamWaitEvent(st, joins[i], 0));
      }
      cudnnSetStream(h, st);
      CK(cudaStreamEndCapture(st, &graph));
      CK(cudaGraphInstantiate(&exec, graph, 0));
      float best = 1e9;
      for (int t = 0; t < 6; ++t) {
        CK(cudaGraphLaunch(exec, st));
        CK(cudaEventRecord(t0, st));
        CK(cudaGraphLaunch(exec, st));
        CK(cudaEventRecord(t1, st));
        CK(cudaEventSynchronize(t1));
        float ms;
        CK(cudaEventElapsedTime(&ms, t0, t1));
        if (t > 0) best = std::fmin(best, ms);
      }
      std::printf("conv C=%d H=%d M=%d: %-7s %2d Z=%d  %7.2f us per copy (8 at once)  rel.err %.1e  ws %zu B\n", g.C,
                  g.H, g.M, algo < 0 ? "direct" : "cudnn", algo, Z, best * 1000 / (reps * copies), std::sqrt(err / nrm),
                  ws);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      for (void* p : wsp)
        if (p) cudaFree(p);
    }
  }
  return 0;
}
