// Rendering of line charts with cairo: axes with rounded ticks, one polyline per series,
// a legend; PNG through an image surface, SVG through cairo's SVG surface.
#include "tools/plot.h"

#include "graph/errors.h"

#if CBT_WITH_CAIRO
#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "graph/atomic_file.h"

namespace cbt::cli {

namespace {

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  void add(double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

// A "nice" tick step (1, 2 or 5 times a power of ten) for about `n` ticks over [lo, hi].
double tick_step(double lo, double hi, int n) {
  const double raw = (hi - lo) / n;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

std::string tick_label(double v, double step) {
  char buf[32];
  if (std::fabs(v) < 1e-9 * step) v = 0;  // not "-0.000" from the accumulated ticks
  if (v != 0 && (std::fabs(v) < 1e-3 || std::fabs(v) >= 1e6))
    std::snprintf(buf, sizeof buf, "%.1e", v);
  else
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, -static_cast<int>(std::floor(std::log10(step)))), v);
  return buf;
}

const double kColors[][3] = {
    {0.12, 0.47, 0.71}, {1.0, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16}, {0.58, 0.40, 0.74}};

// Pads a range by 5% on each side; a single value gets +-10% of itself (or +-0.5 at 0).
Range padded(Range r) {
  if (r.hi == r.lo) {
    const double d = r.lo == 0 ? 0.5 : std::fabs(r.lo) * 0.1;
    r.lo -= d, r.hi += d;
  }
  const double pad = (r.hi - r.lo) * 0.05;
  r.lo -= pad, r.hi += pad;
  return r;
}

// One chart in the box (x0, y0, w, h); every chart shares the x range `xr` (steps).
void draw_panel(cairo_t* cr, const Panel& p, const Range& xr, double x0, double y0, double w, double h) {
  const double left = 70, right = 20, top = 30, bottom = 40;
  const double px = x0 + left, py = y0 + top, pw = w - left - right, ph = h - top - bottom;
  Range yr;
  for (const auto& s : p.series)
    for (double v : s.y) yr.add(v);
  yr = padded(yr);
  auto X = [&](double v) { return px + (v - xr.lo) / (xr.hi - xr.lo) * pw; };
  auto Y = [&](double v) { return py + ph - (v - yr.lo) / (yr.hi - yr.lo) * ph; };

  // Title, frame, grid and ticks.
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 14);
  cairo_move_to(cr, px, y0 + 20);
  cairo_show_text(cr, p.title.c_str());
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 11);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, px, py, pw, ph);
  cairo_stroke(cr);
  cairo_text_extents_t ext;
  const double xs = tick_step(xr.lo, xr.hi, 8), ys = tick_step(yr.lo, yr.hi, 5);
  for (double v = std::ceil(xr.lo / xs) * xs; v <= xr.hi + 1e-9 * xs; v += xs) {
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, X(v), py), cairo_line_to(cr, X(v), py + ph), cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    std::string t = tick_label(v, xs);
    cairo_text_extents(cr, t.c_str(), &ext);
    cairo_move_to(cr, X(v) - ext.width / 2, py + ph + 15), cairo_show_text(cr, t.c_str());
  }
  for (double v = std::ceil(yr.lo / ys) * ys; v <= yr.hi + 1e-9 * ys; v += ys) {
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, px, Y(v)), cairo_line_to(cr, px + pw, Y(v)), cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    std::string t = tick_label(v, ys);
    cairo_text_extents(cr, t.c_str(), &ext);
    cairo_move_to(cr, px - ext.width - 6, Y(v) + 4), cairo_show_text(cr, t.c_str());
  }
  cairo_text_extents(cr, p.x_label.c_str(), &ext);
  cairo_move_to(cr, px + pw / 2 - ext.width / 2, py + ph + 32), cairo_show_text(cr, p.x_label.c_str());

  // The series, clipped to the frame, and the legend.
  cairo_save(cr);
  cairo_rectangle(cr, px, py, pw, ph);
  cairo_clip(cr);
  cairo_set_line_width(cr, 2);
  for (size_t k = 0; k < p.series.size(); ++k) {
    const Series& s = p.series[k];
    const double* c = kColors[k % 5];
    cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    bool pen = false;
    size_t points = 0;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) {
        pen = false;
        continue;
      }
      pen ? cairo_line_to(cr, X(s.x[i]), Y(s.y[i])) : cairo_move_to(cr, X(s.x[i]), Y(s.y[i]));
      pen = true;
      ++points;
    }
    cairo_stroke(cr);
    if (points <= 40)  // few points (one per epoch): mark each
      for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.y[i])) cairo_arc(cr, X(s.x[i]), Y(s.y[i]), 3, 0, 2 * M_PI), cairo_fill(cr);
  }
  cairo_restore(cr);
  double ly = py + 14;
  for (size_t k = 0; k < p.series.size(); ++k) {
    const double* c = kColors[k % 5];
    cairo_text_extents(cr, p.series[k].label.c_str(), &ext);
    const double lx = px + pw - ext.width - 36;
    cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    cairo_rectangle(cr, lx, ly - 8, 20, 4), cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, lx + 26, ly), cairo_show_text(cr, p.series[k].label.c_str());
    ly += 16;
  }
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int n) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), n);
  return CAIRO_STATUS_SUCCESS;
}

using SurfacePtr = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using ContextPtr = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;

}  // namespace

void draw_panels(const std::vector<Panel>& all, const std::string& path, const PlotOptions& opt) {
  std::vector<const Panel*> panels;
  for (const auto& p : all) {
    bool any = false;
    for (const auto& s : p.series)
      for (double v : s.y) any = any || std::isfinite(v);
    if (any) panels.push_back(&p);
  }
  Range xr;
  for (const Panel* p : panels)
    for (const auto& s : p->series)
      for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.y[i])) xr.add(s.x[i]);
  xr = padded(xr);
  if (panels.empty()) throw UserError("nothing to plot: the run holds no loss, accuracy or learning-rate values");
  const auto dot = path.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : path.substr(dot);
  if (ext != ".png" && ext != ".svg") throw UserError("the plot file must end in .png or .svg, not '" + path + "'");
  const double head = opt.title.empty() ? 0 : 30;
  const int height = static_cast<int>(head) + opt.panel_height * static_cast<int>(panels.size());
  // Drawn into memory, then written atomically: a failure leaves no half-written plot.
  std::string bytes;
  SurfacePtr surface(ext == ".png" ? cairo_image_surface_create(CAIRO_FORMAT_RGB24, opt.width, height)
                                   : cairo_svg_surface_create_for_stream(append_bytes, &bytes, opt.width, height),
                     &cairo_surface_destroy);
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS)
    throw UserError("cannot create the plot " + path + ": " +
                    cairo_status_to_string(cairo_surface_status(surface.get())));
  {
    ContextPtr cr(cairo_create(surface.get()), &cairo_destroy);
    cairo_set_source_rgb(cr.get(), 1, 1, 1);
    cairo_paint(cr.get());
    if (head > 0) {
      cairo_set_source_rgb(cr.get(), 0, 0, 0);
      cairo_select_font_face(cr.get(), "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
      cairo_set_font_size(cr.get(), 15);
      cairo_move_to(cr.get(), 12, 21);
      cairo_show_text(cr.get(), opt.title.c_str());
    }
    for (size_t i = 0; i < panels.size(); ++i)
      draw_panel(cr.get(), *panels[i], xr, 0, head + static_cast<double>(i * opt.panel_height), opt.width,
                 opt.panel_height);
  }
  cairo_surface_flush(surface.get());
  cairo_status_t st =
      ext == ".png" ? cairo_surface_write_to_png_stream(surface.get(), append_bytes, &bytes) : CAIRO_STATUS_SUCCESS;
  cairo_surface_finish(surface.get());
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(surface.get());
  if (st != CAIRO_STATUS_SUCCESS) throw UserError("cannot draw the plot " + path + ": " + cairo_status_to_string(st));
  write_file_atomically(path, bytes);
}

}  // namespace cbt::cli

#else  // built without cairo

namespace cbt::cli {
void draw_panels(const std::vector<Panel>&, const std::string&, const PlotOptions&) {
  throw UserError(
      "this cbtrain was built without cairo, so it cannot draw plots; install libcairo2-dev "
      "(scripts/setup.sh does) and build again");
}
}  // namespace cbt::cli

#endif
