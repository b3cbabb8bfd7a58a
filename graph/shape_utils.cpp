// Shape arithmetic shared by schemas and kernels.
#include "graph/shape_utils.h"

#include <algorithm>

namespace cbt {

int64_t normalize_axis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  CBT_MODEL_CHECK(a >= 0 && a < std::max<int64_t>(rank, 1), "axis ", axis, " out of range for rank ", rank);
  return a;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(normalize_axis(a, rank));
  std::sort(out.begin(), out.end());
  CBT_MODEL_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), "repeated axis");
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    CBT_MODEL_CHECK(da == db || da == 1 || db == 1, "shapes ", shape_str(a), " and ", shape_str(b),
                    " cannot be broadcast");
    out[i] = (da == 1) ? db : da;
  }
  return out;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  auto own = strides_of(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = (in[i] == 1) ? 0 : own[i];
  return st;
}

int64_t dims_product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

MatDims mat_dims(Shape a, Shape b) {
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatDims d;
  d.M = a[a.size() - 2], d.K = a.back(), d.N = b.back();
  d.abatch.assign(a.begin(), a.end() - 2);
  d.bbatch.assign(b.begin(), b.end() - 2);
  d.batch = broadcast_shapes(d.abatch, d.bbatch);
  return d;
}

TileView tile_view(const Shape& x, const Shape& y) {
  CBT_CHECK(x.size() == y.size(), "tile_view: ranks differ");
  TileView v;
  for (size_t i = 0; i < x.size(); ++i) {
    v.tiled.push_back(x[i] == 0 ? 0 : y[i] / x[i]);
    v.tiled.push_back(x[i]);
    v.input.push_back(1);
    v.input.push_back(x[i]);
  }
  return v;
}

PermutedView depth_space_view(const Shape& x, int64_t b, bool to_space, bool crd) {
  CBT_CHECK(x.size() == 4 && b > 0, "depth_space_view: (N, C, H, W) and a positive block size");
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  Shape view;
  std::vector<int64_t> perm;
  if (to_space) {
    view = crd ? Shape{n, c / (b * b), b, b, h, w} : Shape{n, b, b, c / (b * b), h, w};
    perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
  } else {
    view = Shape{n, c, h / b, b, w / b, b};
    perm = crd ? std::vector<int64_t>{0, 1, 3, 5, 2, 4} : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
  }
  const std::vector<int64_t> strides = strides_of(view);
  PermutedView v;
  for (int64_t p : perm) {
    v.shape.push_back(view[p]);
    v.src_strides.push_back(strides[p]);
  }
  return v;
}

}  // namespace cbt
