// Trains an ONNX model with cbtrain's C++ API and writes the trained model:
//   train_model MODEL.onnx DATA_DIR OUT.onnx [STEPS]
// DATA_DIR holds IDX files (train-images-idx3-ubyte, ...), e.g. Fashion-MNIST.
#include <cbtrain/cbtrain.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.onnx DATA_DIR OUT.onnx [STEPS]\n", argv[0]);
    return 2;
  }
  try {
    cbtrain::Model model = cbtrain::Model::load(argv[1]);
    cbtrain::TrainOptions options;
    options.data_dir = argv[2];
    options.epochs = 1;
    options.max_steps = argc > 4 ? std::stoll(argv[4]) : -1;
    options.learners = 2;  // two replicas, averaged with SMA
    cbtrain::TrainReport report = model.train(options);
    std::printf("cbtrain %s: %lld rounds, test accuracy %.4f\n", cbtrain::version().c_str(),
                static_cast<long long>(report.steps), report.test_accuracy);
    // One prediction, to show the trained model at work (a sample of zeros is enough here).
    std::vector<float> sample(28 * 28, 0.0f);
    std::vector<float> scores = model.predict(sample, 1);
    std::printf("predict: %zu scores\n", scores.size());
    model.save(argv[3]);
    std::printf("wrote %s\n", argv[3]);
  } catch (const cbtrain::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.is_user_error() ? 2 : 1;
  }
  return 0;
}
