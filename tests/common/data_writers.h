// Small data sets in every supported format, written by tests at run time: random pixels
// with a learnable signal (each class has its own colour), as CIFAR binaries, PNG / JPEG
// files (through libpng and libjpeg) and NumPy pairs.
#pragma once
#include <png.h>
#include <stdio.h>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace cbt::test {

// One sample: (C, H, W) pixels and its label.
struct ImageSample {
  std::vector<uint8_t> chw;
  int64_t label = 0;
};

// The colour of class c (10 well separated colours).
inline std::array<int, 3> class_colour(int64_t c) {
  static const int palette[10][3] = {{230, 25, 75},  {60, 180, 75},  {255, 225, 25}, {0, 130, 200}, {245, 130, 48},
                                     {145, 30, 180}, {70, 240, 240}, {240, 50, 230}, {150, 95, 40}, {128, 128, 128}};
  return {palette[c % 10][0], palette[c % 10][1], palette[c % 10][2]};
}

// n samples of `classes` classes: pixel = class colour (grey: its brightness) + uniform
// noise of +-noise, labels uniform.
inline std::vector<ImageSample> coloured_samples(int64_t n, int64_t classes, int64_t channels, int64_t h, int64_t w,
                                                 uint32_t seed, int noise = 50) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> jitter(-noise, noise);
  std::vector<ImageSample> out(static_cast<size_t>(n));
  for (auto& s : out) {
    s.label = static_cast<int64_t>(rng() % static_cast<uint32_t>(classes));
    auto col = class_colour(s.label);
    // Grey classes: evenly spread brightness.
    const int grey = static_cast<int>(30 + 195 * s.label / std::max<int64_t>(1, classes - 1));
    s.chw.resize(static_cast<size_t>(channels * h * w));
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t k = 0; k < h * w; ++k) {
        const int base = channels == 1 ? grey : col[c];
        s.chw[c * h * w + k] = static_cast<uint8_t>(std::clamp(base + jitter(rng), 0, 255));
      }
  }
  return out;
}

// (C, H, W) -> (H, W, C).
inline std::vector<uint8_t> to_hwc(const std::vector<uint8_t>& chw, int64_t c, int64_t h, int64_t w) {
  std::vector<uint8_t> out(chw.size());
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < h * w; ++i) out[i * c + k] = chw[k * h * w + i];
  return out;
}

// CIFAR-10 records (label, 3072 pixels); with coarse labels, CIFAR-100 records.
inline void write_cifar(const std::filesystem::path& path, const std::vector<ImageSample>& samples,
                        const std::vector<uint8_t>& coarse = {}) {
  std::ofstream f(path, std::ios::binary);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!coarse.empty()) f.put(static_cast<char>(coarse[i]));
    f.put(static_cast<char>(samples[i].label));
    f.write(reinterpret_cast<const char*>(samples[i].chw.data()), static_cast<std::streamsize>(samples[i].chw.size()));
  }
}

// PNG of (H, W, C) pixels, C = 1 or 3.
inline bool write_png(const std::filesystem::path& path, const std::vector<uint8_t>& hwc, int64_t c, int64_t h,
                      int64_t w) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(w);
  img.height = static_cast<png_uint_32>(h);
  img.format = c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  return png_image_write_to_file(&img, path.c_str(), 0, hwc.data(), 0, nullptr) != 0;
}

// JPEG of (H, W, C) pixels at the given quality.
inline bool write_jpeg(const std::filesystem::path& path, const std::vector<uint8_t>& hwc, int64_t c, int64_t h,
                       int64_t w, int quality = 95) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  jpeg_compress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, f);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = static_cast<int>(c);
  cinfo.in_color_space = c == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(hwc.data()) + cinfo.next_scanline * w * c;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return fclose(f) == 0;
}

// DIR/<split>/class<k>/img<i>.png|.jpg (every third image a JPEG when jpeg_too).
inline void write_image_split(const std::filesystem::path& dir, const std::vector<ImageSample>& samples, int64_t c,
                              int64_t h, int64_t w, bool jpeg_too) {
  for (size_t i = 0; i < samples.size(); ++i) {
    auto folder = dir / ("class" + std::to_string(samples[i].label));
    std::filesystem::create_directories(folder);
    auto hwc = to_hwc(samples[i].chw, c, h, w);
    if (jpeg_too && i % 3 == 0)
      write_jpeg(folder / ("img" + std::to_string(i) + ".jpg"), hwc, c, h, w);
    else
      write_png(folder / ("img" + std::to_string(i) + ".png"), hwc, c, h, w);
  }
}

}  // namespace cbt::test
