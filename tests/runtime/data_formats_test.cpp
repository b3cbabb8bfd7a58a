// The data loaders: CIFAR binaries, NumPy pairs, image folders, format detection, labels,
// layouts (NCHW, NHWC), normalisation, and clear errors for bad files.
#include "runtime/data_formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "common/data_writers.h"
#include "common/tiny_dataset.h"
#include "graph/errors.h"
#include "runtime/data_source.h"
#include "runtime/image_decode.h"
#include "runtime/normalize.h"
#include "runtime/npy.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

// The message of the UserError that f throws ("" when it throws none).
template <class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

DataOptions options(const fs::path& dir, DataFormat f = DataFormat::Auto) {
  DataOptions o;
  o.dir = dir.string();
  o.format = f;
  return o;
}

float pixel(uint8_t p, float mean, float sd) { return (p / 255.0f - mean) / sd; }

TEST(Cifar, TenClassesInBatchOrderWithGivenNormalisation) {
  fs::path d = test::temp_dir("cifar10_read");
  auto b1 = test::coloured_samples(7, 10, 3, 32, 32, 1), b2 = test::coloured_samples(5, 10, 3, 32, 32, 2);
  auto te = test::coloured_samples(4, 10, 3, 32, 32, 3);
  // Batch 10 sorts after batch 2 by number, not by name.
  test::write_cifar(d / "data_batch_2.bin", b1);
  test::write_cifar(d / "data_batch_10.bin", b2);
  test::write_cifar(d / "test_batch.bin", te);
  // Names that are not data_batch_<1 to 4 digits>.bin are not batches (a bad record here would
  // fail the load).
  for (const char* other : {"data_batch_.bin", "data_batch_12345.bin", "data_batch_1.bin.bak", "data_batch_x1.bin",
                            "data_batch_1x.bin", "xdata_batch_1.bin", "data_batch_3.BIN"})
    std::ofstream(d / other, std::ios::binary) << "not a CIFAR record";
  EXPECT_EQ(detect_data_format(d.string()), DataFormat::Cifar);
  DataOptions o = options(d);
  o.normalize = parse_normalization("0.1,0.2,0.3:0.5,0.25,0.125");
  TrainTestData t = load_data(o);
  ASSERT_EQ(t.train.size(), 12);
  ASSERT_EQ(t.test.size(), 4);
  EXPECT_EQ(t.train.images.shape(), (Shape{12, 3, 32, 32}));
  EXPECT_EQ(t.train.image.channels, 3);
  const float mean[3] = {0.1f, 0.2f, 0.3f}, sd[3] = {0.5f, 0.25f, 0.125f};
  for (int64_t i = 0; i < 12; ++i) {
    const auto& s = i < 7 ? b1[i] : b2[i - 7];
    EXPECT_EQ(t.train.labels.ptr<int64_t>()[i], s.label);
    for (int64_t e : {int64_t{0}, int64_t{1500}, int64_t{3071}}) {
      const int c = static_cast<int>(e / 1024);
      EXPECT_NEAR(t.train.images.ptr<float>()[i * 3072 + e], pixel(s.chw[e], mean[c], sd[c]), 1e-5) << i << " " << e;
    }
  }
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(t.test.labels.ptr<int64_t>()[i], te[i].label);
}

TEST(Cifar, HundredClassesUseTheFineLabel) {
  fs::path d = test::temp_dir("cifar100_read");
  auto tr = test::coloured_samples(9, 100, 3, 32, 32, 4), te = test::coloured_samples(3, 100, 3, 32, 32, 5);
  std::vector<uint8_t> coarse_tr, coarse_te;
  for (auto& s : tr) coarse_tr.push_back(static_cast<uint8_t>(s.label / 5));
  for (auto& s : te) coarse_te.push_back(static_cast<uint8_t>(s.label / 5));
  fs::create_directories(d / "cifar-100-binary");
  test::write_cifar(d / "cifar-100-binary" / "train.bin", tr, coarse_tr);
  test::write_cifar(d / "cifar-100-binary" / "test.bin", te, coarse_te);
  TrainTestData t = load_data(options(d));
  ASSERT_EQ(t.train.size(), 9);
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(t.train.labels.ptr<int64_t>()[i], tr[i].label);
  // Default normalisation: the training set's own statistics, so its mean is 0 and its spread 1.
  for (int64_t c = 0; c < 3; ++c) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < 9; ++i)
      for (int64_t k = 0; k < 1024; ++k) {
        double v = t.train.images.ptr<float>()[i * 3072 + c * 1024 + k];
        sum += v, sq += v * v;
      }
    EXPECT_NEAR(sum / 9216, 0.0, 1e-4) << c;
    EXPECT_NEAR(sq / 9216, 1.0, 1e-3) << c;
  }
}

TEST(Cifar, CorruptFilesNameTheFile) {
  fs::path d = test::temp_dir("cifar_bad");
  test::write_cifar(d / "data_batch_1.bin", test::coloured_samples(3, 10, 3, 32, 32, 6));
  std::string msg = user_error([&] { load_data(options(d, DataFormat::Cifar)); });
  EXPECT_NE(msg.find("test_batch.bin"), std::string::npos) << msg;
  test::write_cifar(d / "test_batch.bin", test::coloured_samples(3, 10, 3, 32, 32, 7));
  fs::resize_file(d / "test_batch.bin", 3 * 3073 - 100);  // truncated
  msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("test_batch.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3073-byte records"), std::string::npos) << msg;
  auto bad = test::coloured_samples(2, 10, 3, 32, 32, 8);
  bad[1].label = 17;  // not a CIFAR-10 label
  test::write_cifar(d / "test_batch.bin", bad);
  msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("label 17"), std::string::npos) << msg;
}

void write_npy_pair(const fs::path& d, const std::string& x_name, const Tensor& x, const std::string& y_name,
                    const Tensor& y) {
  save_npy((d / x_name).string(), x);
  save_npy((d / y_name).string(), y);
}

TEST(NpyPairs, ChannelsLastPixelsBecomeNchwAndFloatsStayAsTheyAre) {
  fs::path d = test::temp_dir("npy_read");
  std::mt19937 rng(3);
  Tensor x(DType::UInt8, {6, 5, 4, 3});  // (N, H, W, C)
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<uint8_t>()[i] = static_cast<uint8_t>(rng());
  Tensor y(DType::Int32, {6});
  for (int64_t i = 0; i < 6; ++i) y.ptr<int32_t>()[i] = static_cast<int32_t>(rng() % 4);
  write_npy_pair(d, "x_train.npy", x, "y_train.npy", y);
  write_npy_pair(d, "x_test.npy", x, "y_test.npy", y);
  EXPECT_EQ(detect_data_format(d.string()), DataFormat::Npy);
  DataOptions o = options(d);
  o.normalize = parse_normalization("none");
  TrainTestData t = load_data(o);
  EXPECT_EQ(t.train.images.shape(), (Shape{6, 3, 5, 4}));
  EXPECT_EQ(t.train.num_classes, 1 + *std::max_element(y.ptr<int32_t>(), y.ptr<int32_t>() + 6));
  for (int64_t n = 0; n < 6; ++n) {
    EXPECT_EQ(t.train.labels.ptr<int64_t>()[n], y.ptr<int32_t>()[n]);
    for (int64_t yy = 0; yy < 5; ++yy)
      for (int64_t xx = 0; xx < 4; ++xx)
        for (int64_t c = 0; c < 3; ++c)
          ASSERT_FLOAT_EQ(t.train.images.ptr<float>()[((n * 3 + c) * 5 + yy) * 4 + xx],
                          x.ptr<uint8_t>()[((n * 5 + yy) * 4 + xx) * 3 + c] / 255.0f);
  }

  fs::path f = test::temp_dir("npy_float");
  Tensor xf(DType::Float32, {8, 10});
  for (int64_t i = 0; i < xf.numel(); ++i) xf.ptr<float>()[i] = static_cast<float>(rng() % 1000) / 7.0f - 50;
  Tensor yl(DType::Int64, {8});
  for (int64_t i = 0; i < 8; ++i) yl.ptr<int64_t>()[i] = static_cast<int64_t>(rng() % 3);
  write_npy_pair(f, "train_images.npy", xf, "train_labels.npy", yl);
  write_npy_pair(f, "test_images.npy", xf, "test_labels.npy", yl);
  t = load_data(options(f));
  EXPECT_FALSE(t.train.image.is_image());
  for (int64_t i = 0; i < xf.numel(); ++i) ASSERT_EQ(t.train.images.ptr<float>()[i], xf.ptr<float>()[i]);
  DataOptions given = options(f);
  given.normalize = parse_normalization("2:4");
  t = load_data(given);
  for (int64_t i = 0; i < xf.numel(); ++i)
    ASSERT_NEAR(t.train.images.ptr<float>()[i], (xf.ptr<float>()[i] - 2) / 4, 1e-5);
  given.normalize = parse_normalization("dataset");  // flat samples: one channel
  t = load_data(given);
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < xf.numel(); ++i) {
    const double v = t.train.images.ptr<float>()[i];
    sum += v, sq += v * v;
  }
  EXPECT_NEAR(sum / xf.numel(), 0.0, 1e-4);
  EXPECT_NEAR(sq / xf.numel(), 1.0, 1e-3);
}

TEST(NpyPairs, BadFilesNameTheFile) {
  fs::path d = test::temp_dir("npy_bad");
  Tensor x(DType::UInt8, {4, 1, 2, 2}), y(DType::Int64, {3});
  write_npy_pair(d, "train_x.npy", x, "train_y.npy", y);
  write_npy_pair(d, "test_x.npy", x, "test_y.npy", Tensor(DType::Int64, {4}));
  std::string msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("train_y.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3 labels"), std::string::npos) << msg;
  Tensor yf(DType::Float32, {4});
  write_npy_pair(d, "train_x.npy", x, "train_y.npy", yf);
  msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("must be integers"), std::string::npos) << msg;
  std::ofstream(d / "train_y.npy") << "garbage";
  msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("train_y.npy"), std::string::npos) << msg;
  fs::remove(d / "test_y.npy");
  msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("test_y.npy"), std::string::npos) << msg;

  // Inputs that are not finite are refused naming the sample (they trained into a "diverged"
  // loss that blamed the learning rate); a float64 beyond float32's range likewise.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor xf(DType::Float32, {4, 1, 2, 2}), yi(DType::Int64, {4});
  for (int64_t i = 0; i < xf.numel(); ++i) xf.ptr<float>()[i] = u(rng);
  write_npy_pair(d, "test_x.npy", xf, "test_y.npy", yi);
  xf.ptr<float>()[2 * 4 + 1] = std::numeric_limits<float>::quiet_NaN();  // sample 2
  write_npy_pair(d, "train_x.npy", xf, "train_y.npy", yi);
  msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("train_x.npy: sample 2 holds NaN"), std::string::npos) << msg;
  Tensor xd(DType::Float64, {4, 1, 2, 2});
  for (int64_t i = 0; i < xd.numel(); ++i) xd.ptr<double>()[i] = u(rng);
  xd.ptr<double>()[3 * 4] = 1e300;  // sample 3: inf as a float32
  write_npy_pair(d, "train_x.npy", xd, "train_y.npy", yi);
  msg = user_error([&] { load_data(options(d)); });
  EXPECT_NE(msg.find("train_x.npy: sample 3 holds an infinity"), std::string::npos) << msg;
}

// A version 1.0 .npy file of `header` (padded with spaces to 64 bytes and a newline, as NumPy
// writes it) and `data`.
void write_raw_npy(const fs::path& path, std::string header, const std::string& data) {
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  f.write(len, 2);
  f << header << data;
}

TEST(Npy, HeadersAreReadWhateverTheirSpacingAndBadOnesNameTheProblem) {
  fs::path d = test::temp_dir("npy_headers");
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  std::vector<float> v(12);
  for (float& x : v) x = u(rng);
  const std::string data(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  // Keys in any order, spaces or none, a trailing comma in the shape or not.
  for (const char* header : {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
                             "{'shape':(3,4),'fortran_order':False,'descr':'<f4'}",
                             "{'fortran_order':  False , 'descr':   '<f4' , 'shape': ( 3 , 4 , ) }"}) {
    write_raw_npy(d / "a.npy", header, data);
    Tensor t = load_npy((d / "a.npy").string());
    ASSERT_EQ(t.shape(), (Shape{3, 4})) << header;
    for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(t.ptr<float>()[i], v[i]) << header;
  }
  write_raw_npy(d / "a.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (12,), }", data);
  EXPECT_EQ(load_npy((d / "a.npy").string()).shape(), (Shape{12}));
  const std::pair<const char*, const char*> bad[] = {
      {"{'fortran_order': False, 'shape': (3, 4), }", "has no descr"},
      {"{'descr': '', 'fortran_order': False, 'shape': (3, 4), }", "has no descr"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }", "Fortran-ordered"},
      {"{'descr': '<f4', 'fortran_order': False, }", "has no shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 12, }", "has no shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4", "has no shape"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, x), }", "bad shape"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (3, 4), }", "unsupported .npy dtype '<c8'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (5, 4), }", "does not match shape"}};
  for (const auto& [header, why] : bad) {
    write_raw_npy(d / "b.npy", header, data);
    const std::string msg = user_error([&] { load_npy((d / "b.npy").string()); });
    EXPECT_NE(msg.find("b.npy"), std::string::npos) << header << ": " << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << header << ": " << msg;
  }
}

TEST(ImageFolder, PngAndJpegGreyAndColourDecodeToTheModelsChannels) {
  fs::path d = test::temp_dir("images_read");
  auto rgb = test::coloured_samples(6, 3, 3, 8, 10, 11), grey = test::coloured_samples(3, 3, 1, 8, 10, 12);
  fs::create_directories(d / "train" / "cat");
  fs::create_directories(d / "train" / "dog");
  fs::create_directories(d / "test" / "dog");
  // train/cat: colour PNGs; train/dog: a grey PNG and a colour JPEG; test/dog: a grey PNG.
  for (int i = 0; i < 3; ++i)
    test::write_png(d / "train" / "cat" / ("c" + std::to_string(i) + ".png"), test::to_hwc(rgb[i].chw, 3, 8, 10), 3, 8,
                    10);
  test::write_png(d / "train" / "dog" / "a.png", grey[0].chw, 1, 8, 10);
  test::write_jpeg(d / "train" / "dog" / "b.JPG", test::to_hwc(rgb[3].chw, 3, 8, 10), 3, 8, 10, 100);
  test::write_png(d / "test" / "dog" / "t.png", grey[1].chw, 1, 8, 10);
  std::ofstream(d / "train" / "cat" / "notes.txt") << "not an image: skipped";
  EXPECT_EQ(detect_data_format(d.string()), DataFormat::Images);

  ImageFolderOptions io;  // channels from the files: one colour image makes RGB
  RawData r = read_image_folder(d.string(), io);
  ASSERT_EQ(r.train.labels, (std::vector<int64_t>{0, 0, 0, 1, 1}));
  ASSERT_EQ(r.test.labels, (std::vector<int64_t>{1}));
  ASSERT_EQ(r.train.values.shape(), (Shape{5, 3, 8, 10}));
  const uint8_t* px = r.train.values.ptr<uint8_t>();
  for (int i = 0; i < 3; ++i)
    for (int64_t e = 0; e < 240; ++e) ASSERT_EQ(px[i * 240 + e], rgb[i].chw[e]) << "PNG pixels are exact";
  for (int64_t c = 0; c < 3; ++c)  // grey repeated into R, G, B
    for (int64_t k = 0; k < 80; ++k) ASSERT_EQ(px[3 * 240 + c * 80 + k], grey[0].chw[k]);
  // JPEG is lossy (chroma subsampling blurs the noise) but keeps each channel's mean.
  for (int64_t c = 0; c < 3; ++c) {
    double got = 0, want = 0;
    for (int64_t k = 0; k < 80; ++k) got += px[4 * 240 + c * 80 + k], want += rgb[3].chw[c * 80 + k];
    EXPECT_NEAR(got / 80, want / 80, 4.0) << "channel " << c;
  }

  io.channels = 1;  // a grey model: colour becomes luma
  r = read_image_folder(d.string(), io);
  ASSERT_EQ(r.train.values.shape(), (Shape{5, 1, 8, 10}));
  for (int64_t k = 0; k < 80; ++k) {
    const auto& s = rgb[0].chw;
    const float luma = 0.299f * s[k] + 0.587f * s[80 + k] + 0.114f * s[160 + k];
    ASSERT_NEAR(r.train.values.ptr<uint8_t>()[k], luma, 0.51f);
  }
}

TEST(ImageDecode, AlphaIsDroppedAndOpaquePixelsStayExact) {
  fs::path d = test::temp_dir("decode_alpha");
  auto s = test::coloured_samples(1, 1, 3, 5, 6, 17)[0].chw;
  std::vector<uint8_t> rgba(5 * 6 * 4), ga(5 * 6 * 2);
  for (int64_t i = 0; i < 30; ++i) {
    for (int64_t c = 0; c < 3; ++c) rgba[i * 4 + c] = s[c * 30 + i];
    rgba[i * 4 + 3] = 255;
    ga[i * 2] = s[i];
    ga[i * 2 + 1] = 255;
  }
  auto write = [&](const fs::path& p, const std::vector<uint8_t>& px, png_uint_32 format) {
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = 6;
    img.height = 5;
    img.format = format;
    return png_image_write_to_file(&img, p.c_str(), 0, px.data(), 0, nullptr) != 0;
  };
  ASSERT_TRUE(write(d / "rgba.png", rgba, PNG_FORMAT_RGBA));
  ASSERT_TRUE(write(d / "ga.png", ga, PNG_FORMAT_GA));
  EXPECT_EQ(image_channels((d / "rgba.png").string()), 3);
  EXPECT_EQ(image_channels((d / "ga.png").string()), 1);
  DecodedImage a = decode_image((d / "rgba.png").string(), 3), g = decode_image((d / "ga.png").string(), 1);
  ASSERT_EQ(a.pixels.size(), 90u);
  ASSERT_EQ(g.pixels.size(), 30u);
  for (int64_t i = 0; i < 30; ++i) {
    for (int64_t c = 0; c < 3; ++c) ASSERT_EQ(a.pixels[i * 3 + c], s[c * 30 + i]);
    ASSERT_EQ(g.pixels[i], s[i]);
  }
}

TEST(ImageDecode, CorruptedBytesGiveAUserErrorOrAnImageNeverACrash) {
  fs::path d = test::temp_dir("decode_corrupt");
  auto s = test::coloured_samples(1, 1, 3, 16, 16, 18)[0];
  auto hwc = test::to_hwc(s.chw, 3, 16, 16);
  ASSERT_TRUE(test::write_png(d / "a.png", hwc, 3, 16, 16));
  ASSERT_TRUE(test::write_jpeg(d / "a.jpg", hwc, 3, 16, 16));
  std::mt19937 rng(19);
  for (const char* name : {"a.png", "a.jpg"}) {
    std::ifstream in(d / name, std::ios::binary);
    const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int errors = 0;
    for (int trial = 0; trial < 200; ++trial) {
      std::string bad = good;
      // A few flipped bytes past the signature, or a cut.
      if (trial % 4 == 0) {
        bad.resize(rng() % good.size());
      } else {
        for (int k = 0; k < 3; ++k) bad[4 + rng() % (good.size() - 4)] ^= static_cast<char>(1 + rng() % 255);
      }
      const fs::path p = d / ("bad_" + std::string(name));
      std::ofstream(p, std::ios::binary) << bad;
      try {
        DecodedImage im = decode_image(p.string(), 3);
        EXPECT_EQ(im.pixels.size(), static_cast<size_t>(im.height * im.width * 3));
      } catch (const UserError& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find(p.filename().string()), std::string::npos) << e.what();
      }
    }
    EXPECT_GT(errors, 0) << name;
  }
}

TEST(ImageFolder, TestSplitHoldsOutAFractionOfEachClass) {
  fs::path d = test::temp_dir("images_split");
  auto s = test::coloured_samples(40, 2, 3, 4, 4, 13);
  test::write_image_split(d, s, 3, 4, 4, false);
  std::string msg = user_error([&] { read_image_folder(d.string(), {}); });
  EXPECT_NE(msg.find("--test-split"), std::string::npos) << msg;
  ImageFolderOptions io;
  io.test_split = 0.25;
  RawData a = read_image_folder(d.string(), io), b = read_image_folder(d.string(), io);
  int64_t per_class[2] = {0, 0};
  for (auto& x : s) ++per_class[x.label];
  int64_t held[2] = {0, 0};
  for (int64_t l : a.test.labels) ++held[l];
  for (int c = 0; c < 2; ++c) EXPECT_EQ(held[c], std::llround(0.25 * per_class[c])) << c;
  EXPECT_EQ(a.train.labels.size() + a.test.labels.size(), 40u);
  EXPECT_EQ(std::memcmp(a.test.values.data(), b.test.values.data(), a.test.values.nbytes()), 0)
      << "same seed, same split";
  io.seed = 99;
  RawData c = read_image_folder(d.string(), io);
  EXPECT_NE(std::memcmp(a.test.values.data(), c.test.values.data(), a.test.values.nbytes()), 0) << "other seed";
}

TEST(ImageFolder, BadImagesNameTheFile) {
  fs::path d = test::temp_dir("images_bad");
  auto s = test::coloured_samples(6, 2, 3, 8, 8, 14);
  test::write_image_split(d / "train", s, 3, 8, 8, true);
  test::write_image_split(d / "test", s, 3, 8, 8, false);
  ASSERT_NO_THROW(read_image_folder(d.string(), {}));
  // Another size.
  auto big = test::coloured_samples(1, 1, 3, 9, 8, 15);
  test::write_png(d / "test" / "class1" / "odd.png", test::to_hwc(big[0].chw, 3, 9, 8), 3, 9, 8);
  std::string msg = user_error([&] { read_image_folder(d.string(), {}); });
  EXPECT_NE(msg.find("odd.png"), std::string::npos) << msg;
  EXPECT_NE(msg.find("8x9"), std::string::npos) << msg;
  fs::remove(d / "test" / "class1" / "odd.png");
  // A truncated PNG, a truncated JPEG, a text file called .png.
  for (const char* kind : {"png", "jpg", "txt"}) {
    fs::path victim;
    for (auto& e : fs::recursive_directory_iterator(d / "train"))
      if (e.path().extension() == (kind == std::string("txt") ? ".png" : std::string(".") + kind)) victim = e.path();
    ASSERT_FALSE(victim.empty()) << kind;
    fs::path saved = victim.string() + ".saved";
    fs::copy_file(victim, saved);
    if (kind == std::string("txt"))
      std::ofstream(victim) << "hello";
    else
      fs::resize_file(victim, fs::file_size(victim) / 2);
    msg = user_error([&] { read_image_folder(d.string(), {}); });
    EXPECT_NE(msg.find(victim.filename().string()), std::string::npos) << kind << ": " << msg;
    fs::rename(saved, victim);
  }
}

TEST(DataSource, NhwcModelsGetChannelsLastSamples) {
  fs::path d = test::temp_dir("nhwc_layout");
  auto tr = test::coloured_samples(5, 10, 3, 32, 32, 16);
  test::write_cifar(d / "data_batch_1.bin", tr);
  test::write_cifar(d / "test_batch.bin", tr);
  DataOptions o = options(d);
  o.normalize = parse_normalization("none");
  TrainTestData nchw = load_data(o);
  o.sample_shape = {-1, -1, 3};  // (H, W, C) with symbolic H and W
  TrainTestData nhwc = load_data(o);
  EXPECT_EQ(nchw.train.image.layout, Layout::NCHW);
  EXPECT_EQ(nhwc.train.image.layout, Layout::NHWC);
  EXPECT_EQ(nhwc.train.images.shape(), (Shape{5, 32, 32, 3}));
  EXPECT_EQ(nhwc.test.images.shape(), (Shape{5, 32, 32, 3}));
  const float* a = nchw.train.images.ptr<float>();
  const float* b = nhwc.train.images.ptr<float>();
  for (int64_t n = 0; n < 5; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < 32; ++y)
        for (int64_t x = 0; x < 32; ++x)
          ASSERT_EQ(b[((n * 32 + y) * 32 + x) * 3 + c], a[((n * 3 + c) * 32 + y) * 32 + x]);
  o.sample_shape = {3, 32, 32};
  EXPECT_EQ(load_data(o).train.image.layout, Layout::NCHW);
  o.sample_shape = {1, 28, 28};  // a model of another size
  std::string msg = user_error([&] { load_data(o); });
  EXPECT_NE(msg.find("32x32"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(1, 28, 28)"), std::string::npos) << msg;
}

TEST(DataSource, IdxKeepsItsDefaultsAndDetection) {
  fs::path d = test::make_tiny_dataset("idx_source", 32, 8);
  EXPECT_EQ(detect_data_format(d.string()), DataFormat::Idx);
  TrainTestData a = load_data(options(d));
  TrainTestData b = load_idx_folder(d.string(), Normalization{});
  ASSERT_EQ(a.train.images.numel(), b.train.images.numel());
  for (int64_t i = 0; i < a.train.images.numel(); ++i)
    ASSERT_EQ(a.train.images.ptr<float>()[i], b.train.images.ptr<float>()[i]);
  EXPECT_EQ(a.train.image.channels, 1);
  EXPECT_EQ(a.train.image.height, 28);
  std::string msg = user_error([&] { detect_data_format(test::temp_dir("empty_data").string()); });
  EXPECT_NE(msg.find("--data-format"), std::string::npos) << msg;
  msg = user_error([&] { load_data(options("/nonexistent/data")); });
  EXPECT_NE(msg.find("/nonexistent/data"), std::string::npos) << msg;
  DataOptions o = options(d);
  o.normalize = parse_normalization("0.1,0.2:0.3,0.4");  // 2 values for 1 channel
  msg = user_error([&] { load_data(o); });
  EXPECT_NE(msg.find("1 channel"), std::string::npos) << msg;
}

TEST(Normalize, FlagParsing) {
  EXPECT_EQ(parse_normalization("").mode, NormalizeSpec::Mode::Default);
  EXPECT_EQ(parse_normalization("none").mode, NormalizeSpec::Mode::None);
  EXPECT_EQ(parse_normalization("dataset").mode, NormalizeSpec::Mode::Dataset);
  NormalizeSpec s = parse_normalization("0.5,0.25:1,2");
  EXPECT_EQ(s.given.mean, (std::vector<float>{0.5f, 0.25f}));
  EXPECT_EQ(s.given.stddev, (std::vector<float>{1.0f, 2.0f}));
  for (const char* bad : {"0.5", "a:b", "0.5:0", "0.5:-1", "1,:2", "1:2:3", "0.5:"})
    EXPECT_THROW(parse_normalization(bad), UserError) << bad;
}

}  // namespace
}  // namespace cbt
