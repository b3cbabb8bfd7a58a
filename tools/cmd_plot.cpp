// `cbtrain plot RUN`: the loss, accuracy and learning-rate curves of a run (its --metrics
// JSON-lines file or its --tensorboard folder) drawn to a PNG or SVG file.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tensorboard/event_file.h"
#include "tools/commands.h"
#include "tools/plot.h"

namespace cbt::cli {

namespace {

namespace fs = std::filesystem;

// One JSON object per epoch (fit()'s metrics file): x is the step at the end of the epoch.
std::vector<Panel> panels_from_metrics(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read the metrics file " + path);
  Series train{"train loss", {}, {}}, test{"test loss", {}, {}}, acc{"test accuracy (%)", {}, {}},
      lr{"learning rate", {}, {}};
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step"))
      throw UserError(path + ":" + std::to_string(n) + ": not a metrics record (a JSON object with \"step\")");
    auto num = [&](const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN; };
    const double x = num("step");
    for (auto [s, key, scale] : {std::tuple{&train, "train_loss", 1.0}, std::tuple{&test, "test_loss", 1.0},
                                 std::tuple{&acc, "test_accuracy", 100.0}, std::tuple{&lr, "lr", 1.0}}) {
      s->x.push_back(x);
      s->y.push_back(num(key) * scale);
    }
  }
  return {{"loss", "step", {train, test}}, {"accuracy", "step", {acc}}, {"learning rate", "step", {lr}}};
}

std::vector<Panel> panels_from_tensorboard(const std::string& path) {
  tensorboard::ScalarSeries all = tensorboard::read_scalars(path);
  auto series = [&](const std::string& tag, const std::string& label, double scale = 1.0) {
    Series s{label, {}, {}};
    auto it = all.find(tag);
    if (it != all.end())
      for (const auto& p : it->second) s.x.push_back(static_cast<double>(p.step)), s.y.push_back(p.value * scale);
    return s;
  };
  std::vector<Panel> panels = {{"loss", "step", {series("train/loss", "train loss"), series("test/loss", "test loss")}},
                               {"accuracy", "step", {series("test/accuracy", "test accuracy (%)", 100.0)}},
                               {"learning rate", "step", {series("train/learning_rate", "learning rate")}}};
  if (all.count("sma/replica_spread"))
    panels.push_back(
        {"SMA: spread of the replicas around z", "step", {series("sma/replica_spread", "rms ||x_j - z|| / ||z||")}});
  return panels;
}

}  // namespace

int run_plot(const PlotArgs& a) {
  std::error_code ec;
  if (!fs::exists(a.run, ec))
    throw UserError("no such run: " + a.run + " (a --metrics file or a --tensorboard folder)");
  const bool tb = fs::is_directory(a.run, ec) || a.run.find("tfevents") != std::string::npos;
  std::vector<Panel> panels = tb ? panels_from_tensorboard(a.run) : panels_from_metrics(a.run);
  std::string out = a.output;
  if (out.empty()) {
    fs::path p(a.run);
    if (p.filename().empty()) p = p.parent_path();  // "dir/"
    out = (tb && fs::is_directory(p, ec) ? p / "curves.png" : fs::path(p).replace_extension(".png")).string();
  }
  PlotOptions po;
  po.width = a.width;
  po.title = a.title.empty() ? a.run : a.title;
  draw_panels(panels, out, po);
  std::cout << "wrote " << out << std::endl;
  return 0;
}

}  // namespace cbt::cli
