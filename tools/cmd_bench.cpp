// `cbtrain bench MODEL`: images/s of whole training rounds on synthetic data, and the device
// memory one learner holds.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "onnx_import/model_io.h"
#include "runtime/autotune.h"
#include "tools/commands.h"

namespace cbt::cli {

int run_bench(const BenchArgs& a) {
  Device device = parse_device(a.train.device);
  if (!a.train.gpus.empty() && device.is_cpu()) device = Device{DeviceKind::CUDA, 0};
  ImportedModel model = load_model(a.train.model);
  std::ostringstream tune_log;
  report_untied(model, a.json ? tune_log : std::cout);
  report_exporter_made(model, a.json ? tune_log : std::cout);
  load_conv_choices_flag(a.train, device, a.json ? tune_log : std::cout);
  TrainerOptions to = trainer_options(a.train, model.graph, device, a.json ? tune_log : std::cout);
  Trainer trainer(model.graph, to);
  Throughput tp = measure_throughput(trainer, a.warmup, a.steps);
  save_conv_choices_flag(a.train, a.json ? tune_log : std::cout);
  const int cpu_threads = device.is_cpu() ? trainer.options().cpu_threads : 0;  // 0: not a CPU run
  if (a.json) {
    std::string log = tune_log.str();
    for (char& c : log)
      if (c == '\n')
        c = '|';
      else if (c == '"')
        c = '\'';
    std::printf(
        "{\"model\": \"%s\", \"device\": \"%s\", \"batch\": %lld, \"learners\": %d, "
        "\"learners_flag\": \"%s\", \"algorithm\": \"%s\", \"precision\": \"%s\", "
        "\"cuda_graphs\": \"%s\", \"fusion\": \"%s\", \"cudnn_algos\": \"%s\", \"images_per_sec\": %.1f, "
        "\"peak_bytes_per_learner\": %zu, \"workspace_bytes_per_learner\": %zu, "
        "\"enqueue_fraction\": %.3f, \"cpu_threads\": %d, \"autotune_log\": \"%s\"}\n",
        a.train.model.c_str(), device.str().c_str(), static_cast<long long>(a.train.batch_size), trainer.learners(),
        a.train.learners.c_str(), trainer.algorithm() == Algorithm::Sma ? "sma" : "ssgd", a.train.precision.c_str(),
        a.train.cuda_graphs.c_str(), a.train.fusion.c_str(), a.train.cudnn_algos.c_str(), tp.images_per_sec,
        tp.bytes_per_learner, trainer.workspace_bytes_per_learner(), tp.enqueue_fraction, cpu_threads, log.c_str());
  } else {
    const std::string threads = cpu_threads ? ", " + std::to_string(cpu_threads) + " thread(s) each" : "";
    std::printf("%s on %s: %d learner(s) x batch %lld%s: %.0f images/s, %.1f MiB per learner\n", a.train.model.c_str(),
                device.str().c_str(), trainer.learners(), static_cast<long long>(a.train.batch_size), threads.c_str(),
                tp.images_per_sec, tp.bytes_per_learner / 1048576.0);
  }
  return 0;
}

}  // namespace cbt::cli
