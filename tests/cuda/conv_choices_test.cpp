// The convolution choices' text form and file (--conv-choices): plain data, so these run
// without a GPU.
#include "ops/cuda/conv_choices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace cbt::cuda {
namespace {

// algo_key's order: device, op, tf32, deterministic, --cudnn-algos, copies, workspace budget,
// CBT_CONV_DIRECT, then N, Ci, Cg, G, H, W, KH, KW, SH, SW, DH, DW, PH, PW, OH, OW, explicit pad,
// storage (0: float32 NCHW, 1: bfloat16 NHWC).
AlgoKey key_of(int64_t device, ConvOp op, int64_t n, int64_t ci, int64_t cg, int64_t hw, int64_t k,
               ConvStorage storage = ConvStorage::Float32Nchw) {
  const int64_t pad = k / 2;
  return {{device,
           static_cast<int64_t>(op),
           0,
           0,
           0,
           8,
           int64_t{32} << 20,
           0,
           n,
           ci,
           cg,
           1,
           hw,
           hw,
           k,
           k,
           1,
           1,
           1,
           1,
           pad,
           pad,
           hw,
           hw,
           0,
           static_cast<int64_t>(storage)}};
}

// key_of's convolution made depthwise: `c` channels in and out, as many groups, stride `s`.
AlgoKey depthwise_key(ConvOp op, int64_t n, int64_t c, int64_t hw, int64_t k, int64_t s) {
  AlgoKey key = key_of(0, op, n, c, c, hw, k);
  key.dims[kKeyGeometry + 3] = c;                                                              // G
  key.dims[kKeyGeometry + 8] = key.dims[kKeyGeometry + 9] = s;                                 // SH, SW
  key.dims[kKeyGeometry + 14] = key.dims[kKeyGeometry + 15] = (hw + 2 * (k / 2) - k) / s + 1;  // OH, OW
  return key;
}

// The depthwise form of depthwise_key's convolution (conv.cu's depthwise_form).
DepthwiseConv depthwise_of(int64_t n, int64_t c, int64_t hw, int64_t k, int64_t s) {
  DepthwiseConv d;
  d.N = n, d.C = c, d.H = d.W = hw, d.K = k, d.S = s, d.PH = d.PW = k / 2;
  d.OH = d.OW = (hw + 2 * (k / 2) - k) / s + 1;
  return d;
}

// The direct form of key_of's forward convolution (conv.cu's direct_form).
DirectConv forward_form(int64_t n, int64_t ci, int64_t cg, int64_t hw, int64_t k) {
  DirectConv d;
  d.N = n, d.C = ci, d.H = hw, d.W = hw, d.M = cg, d.OH = hw, d.OW = hw, d.K = k, d.PH = k / 2, d.PW = k / 2;
  return d;
}

AlgoChoice random_engine_choice(std::mt19937_64& rng) {
  AlgoChoice c;
  c.algo = static_cast<int>(rng() % 7) - 1;  // kBackupLater (-1) included
  c.math = rng() % 2 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  EngineId e;
  e.global_index = static_cast<int64_t>(rng() % 100);
  for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i)
    e.knobs.emplace_back(static_cast<int64_t>(rng() % 30), static_cast<int64_t>(rng() % 1000) - 500);
  e.workspace = rng() % (size_t{1} << 20);
  e.deterministic = rng() % 2;
  e.tensor_core = rng() % 2;
  e.ms = std::uniform_real_distribution<float>(0.001f, 2.0f)(rng);
  c.ws = e.workspace + rng() % 4096;
  c.engine = e;
  return c;
}

void expect_same(const AlgoChoice& a, const AlgoChoice& b) {
  EXPECT_EQ(a.algo, b.algo);
  EXPECT_EQ(a.math, b.math);
  EXPECT_EQ(a.ws, b.ws);
  ASSERT_EQ(a.engine.has_value(), b.engine.has_value());
  if (a.engine) {
    EXPECT_EQ(*a.engine, *b.engine);  // index and knobs
    EXPECT_EQ(a.engine->workspace, b.engine->workspace);
    EXPECT_EQ(a.engine->deterministic, b.engine->deterministic);
    EXPECT_EQ(a.engine->tensor_core, b.engine->tensor_core);
    EXPECT_NEAR(a.engine->ms, b.engine->ms, 1e-5 * a.engine->ms);
  }
  ASSERT_EQ(a.direct.has_value(), b.direct.has_value());
  if (a.direct) {
    EXPECT_TRUE(a.direct->conv == b.direct->conv);
    EXPECT_TRUE(a.direct->cfg == b.direct->cfg) << a.direct->cfg.str() << " / " << b.direct->cfg.str();
  }
  ASSERT_EQ(a.direct_wgrad.has_value(), b.direct_wgrad.has_value());
  if (a.direct_wgrad) {
    EXPECT_TRUE(a.direct_wgrad->conv == b.direct_wgrad->conv);
    EXPECT_TRUE(a.direct_wgrad->cfg == b.direct_wgrad->cfg)
        << a.direct_wgrad->cfg.str() << " / " << b.direct_wgrad->cfg.str();
    EXPECT_EQ(a.direct_wgrad->partial_bytes, b.direct_wgrad->partial_bytes);
  }
  ASSERT_EQ(a.depthwise.has_value(), b.depthwise.has_value());
  if (a.depthwise) {
    EXPECT_TRUE(a.depthwise->conv == b.depthwise->conv);
    EXPECT_TRUE(a.depthwise->cfg == b.depthwise->cfg) << a.depthwise->cfg.str() << " / " << b.depthwise->cfg.str();
    EXPECT_EQ(a.depthwise->partial_bytes, b.depthwise->partial_bytes);
  }
}

// Random choices of every kind come back from their lines field for field, and the line of
// the parsed choice is the same line.
TEST(ConvChoices, EveryFieldSurvivesItsLine) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    AlgoKey key = key_of(static_cast<int64_t>(rng() % 4), static_cast<ConvOp>(rng() % 3), 1 + rng() % 64,
                         1 + rng() % 64, 1 + rng() % 64, 4 + rng() % 28, rng() % 2 ? 3 : 5);
    AlgoChoice c = random_engine_choice(rng);
    const int64_t n = key.dims[8], ci = key.dims[9], cg = key.dims[10], hw = key.dims[12], k = key.dims[14];
    if (i % 3 == 1) {
      c.direct = DirectPlan{forward_form(n, ci, cg, hw, k), DirectConfig{2, 4, 1 + i % 5, 1, 128}};
      if (i % 4 == 1) c.direct->conv.phases = true, c.direct->conv.XH = 2 * hw - 1, c.direct->conv.XW = 2 * hw;
    }
    if (i % 3 == 2)
      c.direct_wgrad =
          DirectWgradPlan{forward_form(n, ci, cg, hw, k), WgradConfig{128, 2, 4, 4, 2, 1 + i % 7}, rng() % 100000};
    if (i % 6 == 3) {
      DepthwiseConv d = depthwise_of(n, ci, hw, k, 1 + i % 2);
      d.PW = 0, d.OW += 1;  // asymmetric pads
      c.depthwise = DepthwisePlan{d, DepthwiseConfig{1 + i % 3, 1 + i % 4, 1 + i % 9, 64 << (i % 3)}, rng() % 100000};
    }
    const std::string line = format_choice(key, c);
    const auto back = parse_choice(line);
    ASSERT_TRUE(back.has_value()) << line;
    EXPECT_EQ(back->first.dims, key.dims) << line;
    expect_same(c, back->second);
    EXPECT_EQ(format_choice(back->first, back->second), line);
  }
}

// Cut short at any field, lengthened, with a value out of range, or naming both kinds of
// direct kernel, a line is not a choice.
TEST(ConvChoices, BrokenLinesAreNotChoices) {
  std::mt19937_64 rng(4);
  AlgoKey key = key_of(0, ConvOp::BackwardFilter, 32, 16, 16, 32, 3);
  AlgoChoice c = random_engine_choice(rng);
  c.direct_wgrad = DirectWgradPlan{forward_form(32, 16, 16, 32, 3), WgradConfig{128, 2, 4, 4, 2, 8}, 4096};
  const std::string line = format_choice(key, c);
  ASSERT_TRUE(parse_choice(line));
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  std::string prefix;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    prefix += (i ? " " : "") + words[i];
    EXPECT_FALSE(parse_choice(prefix)) << prefix;
  }
  EXPECT_FALSE(parse_choice(line + " 7"));
  EXPECT_FALSE(parse_choice(""));
  EXPECT_FALSE(parse_choice("device 0 H200"));
  auto with = [&](size_t at, const std::string& value) {
    std::vector<std::string> w = words;
    w[at] = value;
    std::string s;
    for (const auto& x : w) s += (s.empty() ? "" : " ") + x;
    return s;
  };
  EXPECT_FALSE(parse_choice(with(2, "3"))) << "op 3";
  EXPECT_FALSE(parse_choice(with(9, "-32"))) << "a negative batch";
  EXPECT_FALSE(parse_choice(with(9, "x"))) << "not a number";
  AlgoChoice both = c;
  both.direct = DirectPlan{forward_form(32, 16, 16, 32, 3), DirectConfig{}};
  EXPECT_FALSE(parse_choice(format_choice(key, both)));
  AlgoChoice also_depthwise = c;
  also_depthwise.depthwise = DepthwisePlan{depthwise_of(32, 16, 32, 3, 1), DepthwiseConfig{}, 0};
  EXPECT_FALSE(parse_choice(format_choice(key, also_depthwise)));
  AlgoChoice depthwise_only = random_engine_choice(rng);
  depthwise_only.depthwise = also_depthwise.depthwise;
  EXPECT_TRUE(parse_choice(format_choice(key, depthwise_only)));
}

// A direct-kernel choice is taken only with its key's own shapes and a configuration this
// build offers for them; an engine choice only within its key's workspace budget.
TEST(ConvChoices, OnlyChoicesThisBuildOffersAreTaken) {
  const AlgoKey key = key_of(0, ConvOp::Forward, 32, 16, 16, 32, 3);
  const DirectConv d = forward_form(32, 16, 16, 32, 3);
  const std::vector<DirectConfig> offered = direct_configs(d);
  ASSERT_FALSE(offered.empty());
  AlgoChoice c;
  c.direct = DirectPlan{d, offered[offered.size() / 2]};
  EXPECT_TRUE(choice_still_offered(key, c));
  AlgoChoice odd = c;
  odd.direct->cfg.mt = 3;  // never among the configurations
  EXPECT_FALSE(choice_still_offered(key, odd));
  AlgoChoice other_shape = c;
  other_shape.direct->conv.H = 31;
  EXPECT_FALSE(choice_still_offered(key, other_shape));
  EXPECT_FALSE(choice_still_offered(key_of(0, ConvOp::BackwardFilter, 32, 16, 16, 32, 3), c))
      << "a forward kernel for a backward filter";

  const AlgoKey wkey = key_of(0, ConvOp::BackwardFilter, 32, 16, 16, 32, 3);
  const std::vector<WgradConfig> wgrads = direct_wgrad_configs(d, size_t{32} << 20);
  ASSERT_FALSE(wgrads.empty());
  AlgoChoice w;
  w.direct_wgrad = DirectWgradPlan{d, wgrads.back(), direct_wgrad_partial_bytes(d, wgrads.back())};
  w.ws = w.direct_wgrad->partial_bytes;
  EXPECT_TRUE(choice_still_offered(wkey, w));
  w.direct_wgrad->partial_bytes += 4;
  EXPECT_FALSE(choice_still_offered(wkey, w));

  std::mt19937_64 rng(6);
  AlgoChoice e = random_engine_choice(rng);
  EXPECT_TRUE(choice_still_offered(key, e));
  e.ws = (size_t{32} << 20) + 1;
  EXPECT_FALSE(choice_still_offered(key, e)) << "beyond the budget";
  e = random_engine_choice(rng);
  e.algo = 99;
  EXPECT_FALSE(choice_still_offered(key, e));
  e.algo = kBackupLater;  // a bfloat16 engine's legacy backup, chosen when needed
  EXPECT_TRUE(choice_still_offered(key, e));
  e.algo = kBackupLater - 1;
  EXPECT_FALSE(choice_still_offered(key, e));
}

// A depthwise kernel's choice is taken only for a depthwise convolution of its own shapes, with a
// configuration this build offers for the key's op, and the partial-sum bytes this build
// computes for it within the choice's workspace.
TEST(ConvChoices, ADepthwiseChoiceIsTakenOnlyForItsOwnConvolution) {
  for (ConvOp op : {ConvOp::Forward, ConvOp::BackwardData, ConvOp::BackwardFilter})
    for (int64_t s : {1, 2}) {
      const AlgoKey key = depthwise_key(op, 32, 96, 28, 3, s);
      const DepthwiseConv d = depthwise_of(32, 96, 28, 3, s);
      const std::vector<DepthwiseConfig> offered = depthwise_configs(d, op, size_t{32} << 20);
      ASSERT_FALSE(offered.empty());
      for (const DepthwiseConfig& cfg : {offered.front(), offered.back()}) {
        AlgoChoice c;
        c.depthwise = DepthwisePlan{d, cfg, depthwise_partial_bytes(d, op, cfg)};
        c.ws = c.depthwise->partial_bytes;
        EXPECT_TRUE(choice_still_offered(key, c)) << cfg.str();
        AlgoChoice odd = c;
        odd.depthwise->cfg.pt = 3;  // never among the configurations
        EXPECT_FALSE(choice_still_offered(key, odd));
        AlgoChoice other_shape = c;
        other_shape.depthwise->conv.H = 27;
        EXPECT_FALSE(choice_still_offered(key, other_shape));
        AlgoChoice more_bytes = c;
        more_bytes.depthwise->partial_bytes += 4;
        more_bytes.ws += 4;
        EXPECT_FALSE(choice_still_offered(key, more_bytes));
        if (c.depthwise->partial_bytes > 0) {
          AlgoChoice small_ws = c;
          small_ws.ws -= 4;
          EXPECT_FALSE(choice_still_offered(key, small_ws)) << "partial sums beyond the workspace";
        }
        EXPECT_FALSE(choice_still_offered(key_of(0, op, 32, 96, 96, 28, 3), c)) << "one group: not depthwise";
      }
    }
}

// A bfloat16 NHWC choice keeps its storage through its line, is kept apart from the float32
// choice of the same geometry, and never names a kernel of cbtrain's own (float32 NCHW only).
TEST(ConvChoices, BFloat16ChoicesAreKeptApartAndCuDnnsAlone) {
  std::mt19937_64 rng(9);
  const AlgoKey fp32 = key_of(0, ConvOp::Forward, 32, 16, 16, 32, 3);
  const AlgoKey bf16 = key_of(0, ConvOp::Forward, 32, 16, 16, 32, 3, ConvStorage::BFloat16Nhwc);
  ASSERT_EQ(bf16.dims.size(), kKeyDims);
  EXPECT_EQ(bf16.dims[kKeyStorage], 1);
  EXPECT_TRUE(fp32 < bf16 || bf16 < fp32);
  const AlgoChoice c = random_engine_choice(rng);
  const std::string line = format_choice(bf16, c);
  const auto back = parse_choice(line);
  ASSERT_TRUE(back.has_value()) << line;
  EXPECT_EQ(back->first.dims, bf16.dims);
  expect_same(c, back->second);
  EXPECT_NE(format_choice(fp32, c), line);

  AlgoChoice direct = c;
  direct.direct = DirectPlan{forward_form(32, 16, 16, 32, 3), DirectConfig{2, 4, 1, 1, 128}};
  EXPECT_TRUE(parse_choice(format_choice(fp32, direct)));
  EXPECT_FALSE(parse_choice(format_choice(bf16, direct))) << "a direct kernel for bfloat16";
  AlgoChoice depthwise = c;
  depthwise.depthwise = DepthwisePlan{depthwise_of(32, 16, 32, 3, 1), DepthwiseConfig{}, 0};
  EXPECT_FALSE(parse_choice(format_choice(bf16, depthwise))) << "a depthwise kernel for bfloat16";
  AlgoChoice wgrad = c;
  wgrad.direct_wgrad = DirectWgradPlan{forward_form(32, 16, 16, 32, 3), WgradConfig{128, 2, 4, 4, 2, 8}, 4096};
  EXPECT_FALSE(parse_choice(
      format_choice(key_of(0, ConvOp::BackwardFilter, 32, 16, 16, 32, 3, ConvStorage::BFloat16Nhwc), wgrad)));

  AlgoKey other = bf16;
  other.dims[kKeyStorage] = 2;  // no such storage
  EXPECT_FALSE(parse_choice(format_choice(other, c)));
  // A line of the format before the storage (25 key fields) is not a choice either.
  AlgoKey short_key = fp32;
  short_key.dims.pop_back();
  EXPECT_FALSE(parse_choice(format_choice(short_key, c)));
}

// The storage in the key changed the format: a file of the one before it is searched afresh.
TEST(ConvChoices, TheFormatIsTheOneWithTheStorage) {
  const std::string header = conv_choices_header();
  EXPECT_EQ(header.rfind("cbtrain convolution choices 4 ", 0), 0u) << header;
  std::string why;
  std::istringstream old("cbtrain convolution choices 3" + header.substr(header.find(" cudnn ")) + "\n");
  EXPECT_EQ(read_conv_choices(
                old, header, [](const std::string&) { return 0; }, &why),
            0u);
  EXPECT_NE(why.find("another version"), std::string::npos) << why;
}

// Both storages of one geometry go through a file and come back as two choices.
TEST(ConvChoices, AFileKeepsBothStoragesOfAGeometry) {
  std::mt19937_64 rng(10);
  forget_conv_choices();
  const AlgoKey fp32 = key_of(0, ConvOp::BackwardData, 32, 16, 32, 16, 3);
  const AlgoKey bf16 = key_of(0, ConvOp::BackwardData, 32, 16, 32, 16, 3, ConvStorage::BFloat16Nhwc);
  const AlgoChoice a = random_engine_choice(rng), b = random_engine_choice(rng);
  {
    std::lock_guard lock(conv_choices_mutex());
    conv_choices().emplace(fp32, a);
    conv_choices().emplace(bf16, b);
  }
  const std::string header = "cbtrain convolution choices 4 cudnn 91900 cudart 13000";
  std::ostringstream file;
  EXPECT_EQ(write_conv_choices(file, header, [](int) { return std::string("GPU_A sm9.0"); }), 2u);
  forget_conv_choices();
  std::istringstream in(file.str());
  EXPECT_EQ(read_conv_choices(
                in, header, [](const std::string&) { return 0; }, nullptr),
            2u);
  std::lock_guard lock(conv_choices_mutex());
  ASSERT_EQ(conv_choices().count(fp32), 1u);
  ASSERT_EQ(conv_choices().count(bf16), 1u);
  expect_same(conv_choices().at(fp32), a);
  expect_same(conv_choices().at(bf16), b);
  conv_choices().clear();
}

// Written and read back through a file's text: every choice returns, for the GPU this process
// has of the file's model; a file of another version or GPU model reads nothing and says why.
TEST(ConvChoices, AFileBringsBackItsChoicesForTheSameGpuOnly) {
  std::mt19937_64 rng(8);
  forget_conv_choices();
  std::vector<std::string> written;
  {
    std::lock_guard lock(conv_choices_mutex());
    for (int i = 0; i < 12; ++i) {
      const AlgoKey key = key_of(i % 2, static_cast<ConvOp>(i % 3), 8 + i, 16, 16, 32, 3);
      const AlgoChoice c = random_engine_choice(rng);
      conv_choices().emplace(key, c);
      written.push_back(format_choice(key, c));
    }
  }
  const std::string header = "cbtrain convolution choices 1 cudnn 91900 cudart 13000";
  std::ostringstream file;
  auto signature = [](int device) { return device == 0 ? std::string("GPU_A sm9.0") : std::string("GPU_B sm8.0"); };
  EXPECT_EQ(write_conv_choices(file, header, signature), 12u);
  forget_conv_choices();

  std::string why;
  std::istringstream other_version(file.str());
  EXPECT_EQ(read_conv_choices(
                other_version, "cbtrain convolution choices 1 cudnn 90100 cudart 12080",
                [](const std::string&) { return 0; }, &why),
            0u);
  EXPECT_NE(why.find("another version"), std::string::npos) << why;

  why.clear();
  std::istringstream other_gpu(file.str());
  EXPECT_EQ(read_conv_choices(
                other_gpu, header, [](const std::string&) { return -1; }, &why),
            0u);
  EXPECT_NE(why.find("another GPU model"), std::string::npos) << why;

  // This process has GPU_A only, as its device 3: the file's device-0 choices come back there.
  why.clear();
  std::istringstream same(file.str());
  auto local = [](const std::string& s) { return s == "GPU_A sm9.0" ? 3 : -1; };
  EXPECT_EQ(read_conv_choices(same, header, local, &why), 6u);
  EXPECT_TRUE(why.empty()) << why;
  std::lock_guard lock(conv_choices_mutex());
  EXPECT_EQ(conv_choices().size(), 6u);
  for (const auto& [key, choice] : conv_choices()) {
    EXPECT_EQ(key.dims[kKeyDevice], 3);
    AlgoKey as_written = key;
    as_written.dims[kKeyDevice] = 0;
    EXPECT_NE(std::find(written.begin(), written.end(), format_choice(as_written, choice)), written.end());
  }
  conv_choices().clear();
}

}  // namespace
}  // namespace cbt::cuda
