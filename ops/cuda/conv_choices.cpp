// The process's convolution choices and their text form (conv_choices.h).
#include "ops/cuda/conv_choices.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <istream>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>

namespace cbt::cuda {
namespace {

// 2: a direct convolution's phases, XH and XW; 3: depthwise kernels; 4: the storage in the key.
constexpr int kFormat = 4;
constexpr int64_t kMaxKnobs = 64;

void put_direct_conv(std::ostream& o, const DirectConv& d) {
  o << ' ' << d.N << ' ' << d.C << ' ' << d.H << ' ' << d.W << ' ' << d.M << ' ' << d.OH << ' ' << d.OW << ' ' << d.K
    << ' ' << d.PH << ' ' << d.PW << ' ' << (d.turned ? 1 : 0) << ' ' << (d.phases ? 1 : 0) << ' ' << d.XH << ' '
    << d.XW;
}

// Reads the whitespace-separated fields of a line: given words, integers in [lo, hi], a time.
// From the first field that is not what was asked for on, every read fails and done() is false.
class Fields {
 public:
  explicit Fields(const std::string& line) : in_(line) {}
  void word(const char* w) {
    std::string s;
    if (!ok_ || !(in_ >> s) || s != w) ok_ = false;
  }
  template <class T>
  T num(int64_t lo = 0, int64_t hi = std::numeric_limits<int64_t>::max()) {
    long long v = 0;
    if (!ok_ || !(in_ >> v) || v < lo || v > hi) {
      ok_ = false;
      return T{};
    }
    return static_cast<T>(v);
  }
  bool flag() { return num<int>(0, 1) == 1; }
  float real() {
    float v = 0;
    if (!ok_ || !(in_ >> v) || !(v >= 0 || v == -1)) ok_ = false;
    return v;
  }
  DirectConv direct_conv() {
    DirectConv d;
    d.N = num<int64_t>(1), d.C = num<int64_t>(1), d.H = num<int64_t>(1), d.W = num<int64_t>(1);
    d.M = num<int64_t>(1), d.OH = num<int64_t>(1), d.OW = num<int64_t>(1), d.K = num<int64_t>(1);
    d.PH = num<int64_t>(), d.PW = num<int64_t>(), d.turned = flag();
    d.phases = flag(), d.XH = num<int64_t>(), d.XW = num<int64_t>();
    return d;
  }
  DepthwiseConv depthwise_conv() {
    DepthwiseConv d;
    d.N = num<int64_t>(1), d.C = num<int64_t>(1), d.H = num<int64_t>(1), d.W = num<int64_t>(1);
    d.OH = num<int64_t>(1), d.OW = num<int64_t>(1), d.K = num<int64_t>(1), d.S = num<int64_t>(1);
    d.PH = num<int64_t>(), d.PW = num<int64_t>();
    return d;
  }
  // Everything read and nothing after it.
  bool done() {
    std::string rest;
    return ok_ && !(in_ >> rest);
  }

 private:
  std::istringstream in_;
  bool ok_ = true;
};

}  // namespace

std::mutex& conv_choices_mutex() {
  static std::mutex m;
  return m;
}

std::map<AlgoKey, AlgoChoice>& conv_choices() {
  static std::map<AlgoKey, AlgoChoice> choices;
  return choices;
}

void forget_conv_choices() {
  std::lock_guard lock(conv_choices_mutex());
  conv_choices().clear();
}

std::string format_choice(const AlgoKey& key, const AlgoChoice& c) {
  std::ostringstream o;
  o << "choice";
  for (int64_t v : key.dims) o << ' ' << v;
  o << " | " << c.algo << ' ' << static_cast<int>(c.math) << ' ' << c.ws << " | e " << (c.engine ? 1 : 0);
  if (c.engine) {
    const EngineId& e = *c.engine;
    o << ' ' << e.global_index << ' ' << e.knobs.size();
    for (const auto& [type, value] : e.knobs) o << ' ' << type << ' ' << value;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.6g", static_cast<double>(e.ms));
    o << ' ' << e.workspace << ' ' << (e.deterministic ? 1 : 0) << ' ' << (e.tensor_core ? 1 : 0) << ' ' << ms;
  }
  o << " | d " << (c.direct ? 1 : 0);
  if (c.direct) {
    put_direct_conv(o, c.direct->conv);
    const DirectConfig& f = c.direct->cfg;
    o << ' ' << f.mt << ' ' << f.pt << ' ' << f.bands << ' ' << f.splits << ' ' << f.threads;
  }
  o << " | w " << (c.direct_wgrad ? 1 : 0);
  if (c.direct_wgrad) {
    put_direct_conv(o, c.direct_wgrad->conv);
    const WgradConfig& f = c.direct_wgrad->cfg;
    o << ' ' << f.threads << ' ' << f.z << ' ' << f.ipb << ' ' << f.mt << ' ' << f.ct << ' ' << f.rb << ' '
      << c.direct_wgrad->partial_bytes;
  }
  o << " | dw " << (c.depthwise ? 1 : 0);
  if (c.depthwise) {
    const DepthwiseConv& d = c.depthwise->conv;
    const DepthwiseConfig& f = c.depthwise->cfg;
    o << ' ' << d.N << ' ' << d.C << ' ' << d.H << ' ' << d.W << ' ' << d.OH << ' ' << d.OW << ' ' << d.K << ' ' << d.S
      << ' ' << d.PH << ' ' << d.PW << ' ' << f.pt << ' ' << f.bands << ' ' << f.group << ' ' << f.threads << ' '
      << c.depthwise->partial_bytes;
  }
  return o.str();
}

std::optional<std::pair<AlgoKey, AlgoChoice>> parse_choice(const std::string& line) {
  Fields f(line);
  AlgoKey key;
  AlgoChoice c;
  f.word("choice");
  for (size_t i = 0; i < kKeyDims; ++i)
    key.dims.push_back(f.num<int64_t>(0, i == kKeyOp ? 2 : i == kKeyStorage ? 1 : INT64_MAX));
  f.word("|");
  c.algo = f.num<int>(kBackupLater, 64);
  c.math = static_cast<cudnnMathType_t>(f.num<int>(0, 3));
  c.ws = f.num<size_t>();
  f.word("|");
  f.word("e");
  if (f.flag()) {
    EngineId& e = c.engine.emplace();
    e.global_index = f.num<int64_t>();
    const auto knobs = f.num<int64_t>(0, kMaxKnobs);
    for (int64_t k = 0; k < knobs; ++k) {
      const auto type = f.num<int64_t>(INT64_MIN, INT64_MAX);
      e.knobs.emplace_back(type, f.num<int64_t>(INT64_MIN, INT64_MAX));
    }
    e.workspace = f.num<size_t>();
    e.deterministic = f.flag();
    e.tensor_core = f.flag();
    e.ms = f.real();
  }
  f.word("|");
  f.word("d");
  if (f.flag()) {
    DirectPlan& d = c.direct.emplace();
    d.conv = f.direct_conv();
    d.cfg.mt = f.num<int>(1, 1024), d.cfg.pt = f.num<int>(1, 1024), d.cfg.bands = f.num<int>(1, 1 << 20);
    d.cfg.splits = f.num<int>(1, 1 << 20), d.cfg.threads = f.num<int>(1, 1024);
  }
  f.word("|");
  f.word("w");
  if (f.flag()) {
    DirectWgradPlan& w = c.direct_wgrad.emplace();
    w.conv = f.direct_conv();
    w.cfg.threads = f.num<int>(1, 1024), w.cfg.z = f.num<int>(1, 1 << 20), w.cfg.ipb = f.num<int>(1, 1 << 20);
    w.cfg.mt = f.num<int>(0, 1024), w.cfg.ct = f.num<int>(0, 1024), w.cfg.rb = f.num<int>(0, 1 << 20);
    w.partial_bytes = f.num<size_t>();
  }
  f.word("|");
  f.word("dw");
  if (f.flag()) {
    DepthwisePlan& d = c.depthwise.emplace();
    d.conv = f.depthwise_conv();
    d.cfg.pt = f.num<int>(1, 1024), d.cfg.bands = f.num<int>(1, 1 << 20), d.cfg.group = f.num<int>(1, INT32_MAX);
    d.cfg.threads = f.num<int>(1, 1024);
    d.partial_bytes = f.num<size_t>();
  }
  // At most one kernel of cbtrain's own per op, and none for bfloat16 (they are float32 NCHW).
  const int own = int{c.direct.has_value()} + int{c.direct_wgrad.has_value()} + int{c.depthwise.has_value()};
  if (!f.done() || own > (key.dims[kKeyStorage] == 0 ? 1 : 0)) return std::nullopt;
  return std::make_pair(std::move(key), std::move(c));
}

std::string conv_choices_header() {
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) (void)cudaGetLastError();
  return "cbtrain convolution choices " + std::to_string(kFormat) + " cudnn " + std::to_string(cudnnGetVersion()) +
         " cudart " + std::to_string(runtime);
}

size_t read_conv_choices(std::istream& in, const std::string& header,
                         const std::function<int(const std::string& signature)>& local, std::string* why) {
  std::string line;
  if (!std::getline(in, line) || line != header) {
    if (why)
      *why =
          "made by another version (its first line is '" + line.substr(0, 120) + "', this cbtrain's '" + header + "')";
    return 0;
  }
  std::map<int64_t, int> devices;  // the file's index -> this process's first alike, or -1
  bool any_here = false;
  std::map<AlgoKey, AlgoChoice> found;
  while (std::getline(in, line)) {
    if (line.rfind("device ", 0) == 0) {
      std::istringstream d(line.substr(7));
      int64_t index = -1;
      std::string signature;
      if ((d >> index) && index >= 0 && std::getline(d >> std::ws, signature)) {
        devices[index] = local(signature);
        any_here = any_here || devices[index] >= 0;
      }
      continue;
    }
    auto parsed = parse_choice(line);
    if (!parsed) continue;
    auto& [key, choice] = *parsed;
    auto dev = devices.find(key.dims[kKeyDevice]);
    if (dev == devices.end() || dev->second < 0) continue;
    key.dims[kKeyDevice] = dev->second;
    if (choice_still_offered(key, choice)) found.emplace(std::move(key), std::move(choice));
  }
  if (!any_here && why) *why = "made on another GPU model";
  std::lock_guard lock(conv_choices_mutex());
  size_t added = 0;
  for (auto& [key, choice] : found) added += conv_choices().emplace(key, std::move(choice)).second ? 1 : 0;
  return added;
}

size_t write_conv_choices(std::ostream& out, const std::string& header,
                          const std::function<std::string(int device)>& signature) {
  std::lock_guard lock(conv_choices_mutex());
  out << header << '\n';
  std::map<int64_t, std::string> devices;
  for (const auto& [key, choice] : conv_choices()) devices.emplace(key.dims[kKeyDevice], "");
  for (auto& [index, sig] : devices) {
    sig = signature(static_cast<int>(index));
    if (!sig.empty()) out << "device " << index << ' ' << sig << '\n';
  }
  size_t written = 0;
  for (const auto& [key, choice] : conv_choices())
    if (!devices[key.dims[kKeyDevice]].empty()) {
      out << format_choice(key, choice) << '\n';
      ++written;
    }
  return written;
}

}  // namespace cbt::cuda
