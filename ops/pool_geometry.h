// Geometry of a pooling window from a node's attributes and its (inferred) shapes, shared by
// the CPU and CUDA pooling kernels so that both read the attributes the same way.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

// A pooling window in 2-D form (1-D pooling has H = KH = OH = 1). Rows/cols of a window
// start at o*S - P and step by D; [-P, H + PE) is the padded extent.
struct PoolGeom {
  int64_t NC = 0, H = 1, W = 1, KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PH = 0, PW = 0, PEH = 0, PEW = 0,
          OH = 1, OW = 1;
};

inline PoolGeom make_pool_geom(const Node& node, const Shape& x, const Shape& y) {
  size_t nd = x.size() - 2;
  std::vector<int64_t> ones(nd, 1);
  auto k = node.attrs.get_ints("kernel_shape");
  auto s = node.attrs.get_ints("strides", ones);
  auto d = node.attrs.get_ints("dilations", ones);
  auto pads = node.attrs.get_ints("pads", std::vector<int64_t>(2 * nd, 0));
  std::string ap = node.attrs.get_string("auto_pad", "NOTSET");
  std::vector<int64_t> pb(nd, 0), pe(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t eff = (k[i] - 1) * d[i] + 1;
      int64_t total = std::max<int64_t>(0, (y[2 + i] - 1) * s[i] + eff - x[2 + i]);
      pb[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    } else if (ap == "NOTSET") {
      pb[i] = pads[i], pe[i] = pads[nd + i];
    }
  }
  PoolGeom g;
  g.NC = x[0] * x[1];
  size_t o = nd - 1;  // index of the W axis among the spatial dims
  if (nd == 2) {
    g.H = x[2], g.KH = k[0], g.SH = s[0], g.DH = d[0], g.PH = pb[0], g.PEH = pe[0], g.OH = y[2];
  }
  g.W = x[2 + o], g.KW = k[o], g.SW = s[o], g.DW = d[o], g.PW = pb[o], g.PEW = pe[o];
  g.OW = y[2 + o];
  return g;
}

}  // namespace cbt
