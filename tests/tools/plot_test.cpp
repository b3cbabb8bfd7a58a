// `cbtrain plot`: a metrics file and a TensorBoard folder drawn to a valid PNG (signature,
// requested size, drawn pixels) and to SVG; bad input exits 2 without a file.
#include <gtest/gtest.h>
#if CBT_WITH_CAIRO
#include <cairo.h>
#endif

#include <fstream>
#include <random>
#include <set>

#include "common/run_cli.h"
#include "common/tiny_dataset.h"
#include "tensorboard/event_file.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

// Checks the PNG signature and size, decodes it with cairo and counts the colours used:
// axes, text and curves of several colours on white.
void expect_valid_png(const fs::path& p, int width) {
#if !CBT_WITH_CAIRO
  GTEST_SKIP() << "built without cairo (libcairo2-dev): cbtrain plot is not available";
#else
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(bytes.size(), 1000u) << p;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  cairo_surface_t* s = cairo_image_surface_create_from_png(p.c_str());
  ASSERT_EQ(cairo_surface_status(s), CAIRO_STATUS_SUCCESS) << p;
  const int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  EXPECT_EQ(w, width);
  EXPECT_GT(h, 200);
  const unsigned char* px = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  std::set<uint32_t> colours;
  int64_t non_white = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint32_t v = *reinterpret_cast<const uint32_t*>(px + y * stride + 4 * x) & 0xffffff;
      colours.insert(v);
      non_white += v != 0xffffff;
    }
  cairo_surface_destroy(s);
  EXPECT_GT(non_white, static_cast<int64_t>(w) * h / 200) << "the plot is blank";
  EXPECT_LT(non_white, static_cast<int64_t>(w) * h / 2);
  EXPECT_TRUE(colours.count(0x1f77b4) || colours.count(0x1e78b5)) << "no curve in the first series' colour";
#endif
}

TEST(Plot, MetricsFileToPngAndSvg) {
#if !CBT_WITH_CAIRO
  GTEST_SKIP() << "built without cairo (libcairo2-dev): cbtrain plot is not available";
#endif
  fs::path d = test::temp_dir("plot");
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  {
    std::ofstream m(d / "run.jsonl");
    for (int e = 1; e <= 6; ++e)
      m << "{\"epoch\": " << e << ", \"step\": " << 100 * e << ", \"train_loss\": " << 2.0 / e + 0.1 * u(rng)
        << ", \"test_loss\": " << 2.2 / e + 0.1 * u(rng) << ", \"test_accuracy\": " << 0.5 + 0.07 * e * u(rng)
        << ", \"images_per_sec\": 1000, \"elapsed_s\": " << e << ", \"lr\": " << 0.1 / e << "}\n";
  }
  test::CliResult r = test::run_cli("plot " + (d / "run.jsonl").string() + " --width 640");
  ASSERT_EQ(r.code, 0) << r.output;
  expect_valid_png(d / "run.png", 640);

  r = test::run_cli("plot " + (d / "run.jsonl").string() + " -o " + (d / "run.svg").string());
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(d / "run.svg");
  std::string svg((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("<path"), std::string::npos);

  for (const std::string& bad : {"plot " + (d / "run.jsonl").string() + " -o " + (d / "run.gif").string(),
                                 "plot " + (d / "missing.jsonl").string()}) {
    r = test::run_cli(bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(d / "run.gif"));
  std::ofstream(d / "garbage.jsonl") << "{\"step\": 1}\nnot json\n";
  r = test::run_cli("plot " + (d / "garbage.jsonl").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("garbage.jsonl:2"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(d / "garbage.png"));
}

TEST(Plot, TensorBoardFolderToPng) {
#if !CBT_WITH_CAIRO
  GTEST_SKIP() << "built without cairo (libcairo2-dev): cbtrain plot is not available";
#endif
  fs::path d = test::temp_dir("plot_tb");
  {
    tensorboard::EventWriter w((d / "tb").string());
    std::mt19937 rng(4);
    for (int s = 10; s <= 300; s += 10)
      w.scalars(s, {{"train/loss", 2.0 * std::exp(-s / 100.0) + 0.05 * (rng() % 100) / 100.0},
                    {"train/learning_rate", 0.1 * (1 + std::cos(M_PI * s / 300)) / 2},
                    {"sma/replica_spread", 0.01 / (1 + s / 50.0)}});
    w.scalars(150, {{"test/loss", 0.7}, {"test/accuracy", 0.8}});
    w.scalars(300, {{"test/loss", 0.5}, {"test/accuracy", 0.86}});
  }
  test::CliResult r = test::run_cli("plot " + (d / "tb").string());
  ASSERT_EQ(r.code, 0) << r.output;
  expect_valid_png(d / "tb" / "curves.png", 900);
}

}  // namespace
}  // namespace cbt
