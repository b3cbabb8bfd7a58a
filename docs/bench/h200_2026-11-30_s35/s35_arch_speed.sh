#!/usr/bin/env bash
# Session 35 (one H200): training throughput of well-known architectures side by side, batch 32
# per replica, synthetic data: PyTorch (bench/torch_throughput.py: eager, one CUDA graph, 8 graphs
# on 8 streams; float32) and cbtrain (`cbtrain bench` of the TorchScript export in
# models/architectures, 1 and 8 learners).   OUT=... bash s35_arch_speed.sh MODEL...
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$PWD/.device/onnx/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CUDA_DEVICE_MAX_CONNECTIONS=32
for m in "$@"; do
  /opt/torch/.venv/bin/python bench/torch_throughput.py --model $m --batch 32 --modes eager,graph,multistream --ks 8 \
    --windows 3 --out $OUT/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 1 8; do
    ./build-gpu/tools/cbtrain bench models/architectures/$m.ts17.onnx --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
  echo "after $((SECONDS-T0)) s"
done
