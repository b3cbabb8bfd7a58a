#!/usr/bin/env bash
# Kernel-time profile of one training step, cbtrain against PyTorch eager, on the GPU machine:
# cbtrain under Nsight Compute (gpu__time_duration of every kernel of a few steps, one
# learner, CUDA graphs off so that every kernel is a launch of its own), PyTorch under
# torch.profiler; bench/kernel_profile.py sorts the kernels into groups and writes
# OUT_DIR/profile_MODEL_PRECISION.md.
#
#   bash bench/profile_gpu.sh OUT_DIR [MODELS] [PRECISIONS]     # default: resnet32 fp32
#
# Environment as bench/run_gpu.sh (CBTRAIN, PYTHON, CBT_LIB_DIR).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bash bench/profile_gpu.sh OUT_DIR [MODELS] [PRECISIONS]}
MODELS=${2:-resnet32}
PRECISIONS=${3:-fp32}
mkdir -p "$OUT/models"
CBT=${CBTRAIN:-./build-gpu/tools/cbtrain}
PYTHON=${PYTHON:-python3}
NV=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
CBT_LD="$NV/cudnn/lib:$NV/nccl/lib${CBT_LIB_DIR:+:$CBT_LIB_DIR}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The architectures of models/architectures.py are profiled from their committed exports (the
# decoder's RMSNorm has no TorchScript export); the others are exported here.
model_file() {
  local f
  for f in "models/architectures/$1.ts17.onnx" "models/architectures/$1.dynamo_noopt.onnx"; do
    [ -e "$f" ] && { echo "$f"; return; }
  done
  echo "$OUT/models/$1.onnx"
}
to_export=$(for m in ${MODELS//,/ }; do [ "$(model_file "$m")" = "$OUT/models/$m.onnx" ] && echo "$m"; done |
  paste -sd, -)
if [ -n "$to_export" ]; then
  "$PYTHON" bench/models.py --out "$OUT/models" --models "$to_export" > "$OUT/export.log" 2>&1 ||
    { tail -5 "$OUT/export.log"; exit 1; }
fi
for m in ${MODELS//,/ }; do
  for p in ${PRECISIONS//,/ }; do
    base="$OUT/${m}_${p}"
    # Only the timed windows (cbtrain opens the profiler's span there): not the start-up,
    # whose convolution searches launch thousands of kernels, nor the warm-up rounds; their
    # first 1500 launches (about 50 LeNet-5 steps, 3 of ResNet-32).
    LD_LIBRARY_PATH="$CBT_LD" ncu --csv --print-units base --metrics gpu__time_duration.sum \
      --clock-control none --cache-control none --profile-from-start off --launch-count 1500 \
      "$CBT" bench "$(model_file "$m")" --device cuda --batch-size 32 --learners 1 \
      --cuda-graphs off --precision "$p" --warmup 10 --steps 100 > "$base.ncu.csv" 2> "$base.ncu.err"
    "$PYTHON" bench/kernel_profile.py ncu "$base.ncu.csv" --steps-marker sce_rows_kernel \
      --model "$m" --batch 32 --precision "$p" --out "$base.cbtrain.json"
    "$PYTHON" bench/kernel_profile.py torch --model "$m" --batch 32 --precision "$p" \
      --out "$base.torch.json"
    "$PYTHON" bench/kernel_profile.py compare "$base.cbtrain.json" "$base.torch.json" \
      --md "$OUT/profile_${m}_${p}.md" > /dev/null
    head -25 "$OUT/profile_${m}_${p}.md"
  done
done
