// CumSum and Trilu CPU kernels (ops/cumsum_trilu.h's rules).
#include "ops/cumsum_trilu.h"

#include "ops/cpu/broadcast.h"
#include "ops/kernel.h"

namespace cbt::cpu {
namespace {

// X, axis -> Y (exclusive, reverse)
void cumsum(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const AxisView a(x.shape(), ctx.in(1).to_i64_vector().at(0));
  const bool exclusive = ctx.node.attrs.get_int("exclusive", 0) != 0;
  const bool reverse = ctx.node.attrs.get_int("reverse", 0) != 0;
  dispatch_arith(x.dtype(), [&]<class T>() {
    const T* px = x.ptr<T>();
    T* py = ctx.out(0).ptr<T>();
#pragma omp parallel for if (x.numel() > (int64_t{1} << 16))
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t i = 0; i < a.inner; ++i) cumsum_line(px, py, a, o, i, exclusive, reverse);
  });
}

// X (..., N, M), k? -> Y (upper)
void trilu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t k = ctx.has_in(1) ? ctx.in(1).to_i64_vector().at(0) : 0;
  const bool upper = ctx.node.attrs.get_int("upper", 1) != 0;
  const int64_t cols = x.dim(x.rank() - 1), rows = x.dim(x.rank() - 2);
  dispatch_arith(x.dtype(), [&]<class T>() {
    const T* px = x.ptr<T>();
    T* py = ctx.out(0).ptr<T>();
    const int64_t n = x.numel();
#pragma omp parallel for if (n > (int64_t{1} << 16))
    for (int64_t e = 0; e < n; ++e) py[e] = trilu_keeps(e / cols % rows, e % cols, k, upper) ? px[e] : T(0);
  });
}

}  // namespace

CBT_REGISTER_KERNEL("", "CumSum", DeviceKind::CPU, cumsum);
CBT_REGISTER_KERNEL("", "Trilu", DeviceKind::CPU, trilu);

}  // namespace cbt::cpu
