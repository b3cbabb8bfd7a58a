// `cbtrain infer MODEL.onnx --input X.npy --output Y.npy`: one forward pass.
#include <iostream>

#include "onnx_import/model_io.h"
#include "runtime/inferencer.h"
#include "runtime/npy.h"
#include "tools/commands.h"

namespace cbt::cli {

int run_infer(const InferArgs& a) {
  Device device = parse_device(a.device);
  ImportedModel m = load_model(a.model);
  Tensor x = load_npy(a.input);
  if (x.dtype() != DType::Float32)
    throw UserError(a.input + " holds " + dtype_name(x.dtype()) + "; infer takes float32");
  if (x.rank() == 0) throw UserError(a.input + " is a scalar; give a batch of samples");
  auto backend = make_backend(device);
  Inferencer inf(m.graph, *backend);
  auto outs = inf.run(x);
  save_npy(a.output, outs.at(0));
  std::cout << "wrote " << a.output << " " << shape_str(outs.at(0).shape()) << std::endl;
  return 0;
}

}  // namespace cbt::cli
