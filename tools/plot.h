// Line charts of a training run (loss, accuracy, learning rate) drawn with cairo to a PNG or
// an SVG file.
#pragma once
#include <string>
#include <vector>

namespace cbt::cli {

struct Series {
  std::string label;
  std::vector<double> x, y;
};

struct Panel {
  std::string title;    // e.g. "loss"
  std::string x_label;  // e.g. "step"
  std::vector<Series> series;
};

struct PlotOptions {
  int width = 900;  // pixels (PNG) or points (SVG)
  int panel_height = 280;
  std::string title;
};

// Draws the panels (stacked, empty ones left out) to `path`; the format follows the
// extension (.png or .svg). UserError for another extension, no data or a failed write.
void draw_panels(const std::vector<Panel>& panels, const std::string& path, const PlotOptions& opt);

}  // namespace cbt::cli
