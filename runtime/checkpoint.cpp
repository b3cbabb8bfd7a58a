// Checkpoint files: encoding with a CRC-32, atomic writing with retention, newest-valid loading.
#include "runtime/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "graph/atomic_file.h"

namespace cbt {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'C', 'B', 'T', 'C', 'K', 'P', 'T', '1'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 4;
constexpr const char* kPrefix = "ckpt-";
constexpr const char* kSuffix = ".cbt";

uint32_t crc32_of(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(data.data());
  size_t left = data.size();
  while (left > 0) {  // zlib's crc32 takes a uInt length
    const uInt n = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
    crc = crc32(crc, p, n);
    p += n;
    left -= n;
  }
  return static_cast<uint32_t>(crc);
}

class Writer {
 public:
  template <class T>
  void pod(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(std::string_view s) {
    pod<uint64_t>(s.size());
    out_.append(s);
  }
  void bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

// Bounds-checked reading; every failure names the file.
class Reader {
 public:
  Reader(std::string_view data, const std::string& what) : data_(data), what_(what) {}
  template <class T>
  T pod() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string str() {
    const uint64_t n = pod<uint64_t>();
    if (n > left()) fail("truncated");
    return std::string(take(static_cast<size_t>(n)), static_cast<size_t>(n));
  }
  const char* take(size_t n) {
    if (n > left()) fail("truncated");
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t left() const { return data_.size() - pos_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw UserError("checkpoint " + what_ + " is unusable: " + why);
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  const std::string& what_;
};

// FNV-1a, 64 bits: stable across builds and platforms (std::hash is not).
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\0", 1);
  }
  void add(int64_t v) { add(&v, sizeof v); }
};

std::string fmt_float(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::map<std::string, std::string> config_lines(const std::string& config) {
  std::map<std::string, std::string> m;
  std::istringstream in(config);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) m[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return m;
}

bool is_checkpoint_name(const std::string& name, int64_t* round) {
  const size_t p = std::strlen(kPrefix), s = std::strlen(kSuffix);
  if (name.size() <= p + s || name.compare(0, p, kPrefix) != 0 || name.compare(name.size() - s, s, kSuffix) != 0)
    return false;
  const std::string digits = name.substr(p, name.size() - p - s);
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  *round = std::stoll(digits);
  return true;
}

}  // namespace

void parse_checkpoint_every(const std::string& s, CheckpointOptions& opt) {
  const bool epochs = !s.empty() && s.back() == 'e';
  const std::string digits = epochs ? s.substr(0, s.size() - 1) : s;
  int64_t n = 0;
  bool ok = !digits.empty() && digits.size() <= 12 &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (ok) n = std::stoll(digits);
  if (!ok || n < 1)
    throw UserError("--checkpoint-every must be a number of rounds (e.g. 500) or of epochs (e.g. 1e), not '" + s + "'");
  opt.every_rounds = epochs ? 0 : n;
  opt.every_epochs = epochs ? n : 0;
}

uint64_t model_fingerprint(const Graph& model) {
  Fnv f;
  f.add(model.opset);
  for (const auto& [name, t] : model.initializers) {  // a std::map: sorted, stable
    f.add(name);
    f.add(static_cast<int64_t>(t.dtype()));
    f.add(static_cast<int64_t>(t.shape().size()));
    for (int64_t d : t.shape()) f.add(d);
  }
  for (const Node& n : model.nodes) {
    f.add(n.domain);
    f.add(n.op_type);
  }
  return f.h;
}

std::string checkpoint_config(const TrainerOptions& o, const LrSchedule& sch, uint64_t seed, int64_t train_samples) {
  std::ostringstream c;
  const OptimizerOptions& op = o.optimizer;
  const char* losses[] = {"cross-entropy", "mse", "bce"};
  c << "batch=" << o.batch_size << "\n"
    << "learners=" << o.learners << "\n"
    << "algorithm=" << (o.algorithm == Algorithm::Sma ? "sma" : "ssgd") << "\n";
  if (o.algorithm == Algorithm::Sma)
    c << "alpha=" << fmt_float(o.alpha) << "\n"
      << "sma_momentum=" << fmt_float(o.sma_momentum) << "\n";
  c << "optimizer=" << (op.kind == OptimizerKind::SGD ? "sgd" : "adamw") << "\n"
    << "lr=" << fmt_float(sch.base_lr) << "\n"
    << "weight_decay=" << fmt_float(op.weight_decay) << "\n";
  if (op.kind == OptimizerKind::SGD)
    c << "momentum=" << fmt_float(op.momentum) << "\n";
  else
    c << "beta1=" << fmt_float(op.beta1) << "\n"
      << "beta2=" << fmt_float(op.beta2) << "\n"
      << "eps=" << fmt_float(op.eps) << "\n";
  const char* kinds[] = {"constant", "cosine", "step"};
  c << "lr_schedule=" << kinds[static_cast<int>(sch.kind)] << "\n"
    << "warmup_steps=" << sch.warmup_steps << "\n";
  if (sch.kind == LrSchedule::Kind::Cosine)
    c << "total_steps=" << sch.total_steps << "\n"
      << "min_lr=" << fmt_float(sch.min_lr) << "\n";
  if (sch.kind == LrSchedule::Kind::Step) {
    c << "milestones=";
    for (size_t i = 0; i < sch.milestones.size(); ++i) c << (i ? "," : "") << sch.milestones[i];
    c << "\n"
      << "lr_gamma=" << fmt_float(sch.gamma) << "\n";
  }
  c << "seed=" << seed << "\n"
    << "loss=" << losses[static_cast<int>(o.graph.loss)] << "\n"
    << "output=" << o.graph.output << "\n"
    << "label_smoothing=" << fmt_float(o.graph.label_smoothing) << "\n"
    << "train_samples=" << train_samples << "\n"
    << "device=" << o.device.str() << "\n"
    << "deterministic=" << (o.deterministic ? "yes" : "no") << "\n";
  if (o.clip_grad_norm > 0) c << "clip_grad_norm=" << fmt_float(o.clip_grad_norm) << "\n";
  if (!o.graph.frozen.empty()) {
    c << "frozen=";
    for (const auto& f : o.graph.frozen) c << f << (f == *o.graph.frozen.rbegin() ? "" : ",");
    c << "\n";
  }
  return c.str();
}

std::string encode_checkpoint(const Checkpoint& c) {
  Writer p;
  p.pod<uint64_t>(c.meta.fingerprint);
  p.str(c.meta.config);
  p.pod<int64_t>(c.meta.epoch);
  p.pod<int64_t>(c.meta.round_in_epoch);
  p.pod<int64_t>(c.meta.round);
  p.pod<int64_t>(c.state.rounds);
  p.pod<float>(c.state.lr);
  p.pod<uint64_t>(c.state.tensors.size());
  for (const auto& [name, t] : c.state.tensors) {
    CBT_CHECK(t.device().is_cpu(), "checkpoint tensor ", name, " is not on the host");
    p.str(name);
    p.pod<uint32_t>(static_cast<uint32_t>(t.dtype()));
    p.pod<uint32_t>(static_cast<uint32_t>(t.shape().size()));
    for (int64_t d : t.shape()) p.pod<int64_t>(d);
    p.pod<uint64_t>(t.nbytes());
    p.bytes(t.data(), t.nbytes());
  }
  Writer h;
  h.bytes(kMagic, sizeof kMagic);
  h.pod<uint32_t>(kVersion);
  h.pod<uint32_t>(0);
  h.pod<uint64_t>(p.out().size());
  h.pod<uint32_t>(crc32_of(p.out()));
  h.out() += p.out();
  return std::move(h.out());
}

Checkpoint decode_checkpoint(std::string_view bytes, const std::string& what) {
  Reader h(bytes, what);
  if (bytes.size() < kHeaderBytes) h.fail("truncated (" + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(h.take(sizeof kMagic), kMagic, sizeof kMagic) != 0) h.fail("not a cbtrain checkpoint");
  const auto version = h.pod<uint32_t>();
  if (version != kVersion)
    h.fail("format version " + std::to_string(version) + ", this cbtrain reads " + std::to_string(kVersion));
  h.pod<uint32_t>();
  const auto size = h.pod<uint64_t>();
  const auto crc = h.pod<uint32_t>();
  if (size != h.left())
    h.fail("truncated (" + std::to_string(h.left()) + " of " + std::to_string(size) + " payload bytes)");
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (crc32_of(payload) != crc) h.fail("checksum mismatch");

  Reader r(payload, what);
  Checkpoint c;
  c.meta.fingerprint = r.pod<uint64_t>();
  c.meta.config = r.str();
  c.meta.epoch = r.pod<int64_t>();
  c.meta.round_in_epoch = r.pod<int64_t>();
  c.meta.round = r.pod<int64_t>();
  c.state.rounds = r.pod<int64_t>();
  c.state.lr = r.pod<float>();
  if (c.meta.epoch < 1 || c.meta.round_in_epoch < 0 || c.meta.round < 0 || c.state.rounds < 0) r.fail("bad position");
  const auto count = r.pod<uint64_t>();
  if (count > r.left()) r.fail("truncated");
  for (uint64_t i = 0; i < count; ++i) {
    std::string name = r.str();
    const auto dtype = r.pod<uint32_t>();
    if (dtype == 0 || dtype > static_cast<uint32_t>(DType::Float16)) r.fail("bad dtype of '" + name + "'");
    const auto ndim = r.pod<uint32_t>();
    if (ndim > 8) r.fail("bad rank of '" + name + "'");
    Shape shape;
    uint64_t numel = 1;
    for (uint32_t d = 0; d < ndim; ++d) {
      const auto dim = r.pod<int64_t>();
      if (dim < 0 || (dim > 0 && numel > r.left() / static_cast<uint64_t>(dim))) r.fail("bad shape of '" + name + "'");
      numel *= static_cast<uint64_t>(dim);
      shape.push_back(dim);
    }
    const auto nbytes = r.pod<uint64_t>();
    const DType dt = static_cast<DType>(dtype);
    if (nbytes != numel * dtype_size(dt)) r.fail("size of '" + name + "' does not match its shape");
    Tensor t(dt, shape);
    std::memcpy(t.data(), r.take(static_cast<size_t>(nbytes)), static_cast<size_t>(nbytes));
    c.state.tensors.emplace_back(std::move(name), std::move(t));
  }
  if (r.left() != 0) r.fail("trailing bytes");
  return c;
}

Checkpoint read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read checkpoint " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UserError("cannot read checkpoint " + path);
  return decode_checkpoint(bytes, path);
}

std::string checkpoint_path(const std::string& dir, int64_t round) {
  char name[48];
  std::snprintf(name, sizeof name, "%s%012lld%s", kPrefix, static_cast<long long>(round), kSuffix);
  return (fs::path(dir) / name).string();
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    int64_t round = 0;
    // Temporary files of write_file_atomically start with '.', never match.
    if (is_checkpoint_name(e.path().filename().string(), &round) && e.is_regular_file(ec))
      found.emplace_back(round, e.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> paths;
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

std::string write_checkpoint(const std::string& dir, const Checkpoint& c, int keep) {
  std::error_code ec;
  ensure_writable_folder(dir, "checkpoint folder");
  const std::string path = checkpoint_path(dir, c.meta.round);
  write_file_atomically(path, encode_checkpoint(c));
  // The new file is durable now; older ones beyond `keep` and temporary files left by
  // killed writers can go.
  std::vector<std::string> all = list_checkpoints(dir);
  for (size_t i = static_cast<size_t>(std::max(keep, 1)); i < all.size(); ++i) fs::remove(all[i], ec);
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(std::string(".") + kPrefix, 0) == 0 && name.find(".tmp.") != std::string::npos)
      fs::remove(e.path(), ec);
  }
  return path;
}

std::optional<LoadedCheckpoint> load_latest_checkpoint(const std::string& dir) {
  LoadedCheckpoint res;
  for (const std::string& path : list_checkpoints(dir)) {
    try {
      res.checkpoint = read_checkpoint(path);
      res.path = path;
      return res;
    } catch (const UserError& e) {
      res.skipped.push_back(e.what());
    }
  }
  if (!res.skipped.empty()) {
    std::string why;
    for (const auto& s : res.skipped) why += "\n  " + s;
    throw UserError("no intact checkpoint in " + dir + ":" + why);
  }
  return std::nullopt;
}

void check_resumable(const CheckpointMeta& saved, const CheckpointMeta& now, bool force, const std::string& path,
                     std::ostream& log) {
  std::vector<std::string> diffs;
  if (saved.fingerprint != now.fingerprint) diffs.push_back("another model (its initializers, ops or opset differ)");
  auto a = config_lines(saved.config), b = config_lines(now.config);
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    const std::string cur = it == b.end() ? "(unset)" : it->second;
    if (cur != v) diffs.push_back(k + " " + v + " (now " + cur + ")");
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) diffs.push_back(k + " (unset) (now " + v + ")");
  if (diffs.empty()) return;
  std::string list;
  for (const auto& d : diffs) list += (list.empty() ? "" : ", ") + d;
  if (!force)
    throw UserError("checkpoint " + path + " was written with " + list +
                    "; resume with the same model and settings, or pass --force-resume");
  log << "warning: --force-resume: checkpoint " << path << " was written with " << list << std::endl;
}

std::string first_non_finite(const TrainerState& s) {
  for (const auto& [name, t] : s.tensors) {
    if (t.dtype() != DType::Float32) continue;
    const float* p = t.ptr<float>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i)
      if (!std::isfinite(p[i])) return name;
  }
  return "";
}

}  // namespace cbt
