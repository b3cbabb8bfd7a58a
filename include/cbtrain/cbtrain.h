// cbtrain's C++ API: load an ONNX model, train it, export it. The only header a program
// that uses the installed library includes (find_package(cbtrain), target cbtrain::cbtrain).
//
//   cbtrain::Model m = cbtrain::Model::load("lenet5.onnx");
//   cbtrain::TrainOptions o;
//   o.data_dir = "/usr/share/datasets/fashion-mnist";
//   cbtrain::TrainReport r = m.train(o);
//   m.save("lenet5.trained.onnx");
//
// Errors throw cbtrain::Error; bad input (a broken model, missing data, a bad option) has
// is_user_error() true, like the command line's exit code 2.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cbtrain {

class Error : public std::runtime_error {
 public:
  Error(const std::string& what, bool user_error) : std::runtime_error(what), user_(user_error) {}
  bool is_user_error() const { return user_; }

 private:
  bool user_;
};

struct TrainOptions {
  std::string data_dir = "/usr/share/datasets/fashion-mnist";  // IDX files (train, t10k)
  // The files in data_dir, as the command line's --data-format: "auto" (told by the files),
  // "idx", "cifar" (CIFAR-10/100 binary), "npy" (train_images.npy + train_labels.npy, ...) or
  // "images" (train/<class>/*.png|jpg and test/<class>/...). Normalised as the command line
  // does by default: Fashion-MNIST's constants for IDX, none for float .npy, the training
  // set's own statistics otherwise.
  std::string data_format = "auto";
  std::string device = "cpu";  // "cpu", "cuda" or "cuda:N"
  int learners = 1;            // model replicas, averaged with SMA when more than one
  int64_t batch_size = 32;     // per learner
  int64_t epochs = 1;
  int64_t max_steps = -1;  // stop after this many rounds; -1: all epochs
  double lr = 0.01;
  double momentum = 0.9;
  double weight_decay = 5e-4;
  std::string lr_schedule = "constant";  // or "cosine" (to 0 over the epochs, or max_steps)
  uint64_t seed = 42;
  bool deterministic = false;  // bit-identical runs for a seed
  bool verbose = false;        // progress lines on standard output
};

struct TrainReport {
  double test_accuracy = 0;  // after the last epoch, in [0, 1]
  double test_loss = 0;
  int64_t steps = 0;         // rounds trained
  double train_seconds = 0;  // evaluation excluded
};

class Model {
 public:
  // Reads and validates an ONNX file; throws Error naming the problem.
  static Model load(const std::string& onnx_path);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  // Trains on the data set, then keeps the trained weights for save().
  TrainReport train(const TrainOptions& options);
  // The model's output for a batch of inputs (row-major, batch first, float32).
  std::vector<float> predict(const std::vector<float>& inputs, int64_t batch) const;
  // Writes the model with its current (trained) weights; atomic, no partial file on failure.
  void save(const std::string& onnx_path) const;

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The library's version, e.g. "0.1.0".
std::string version();

}  // namespace cbtrain
