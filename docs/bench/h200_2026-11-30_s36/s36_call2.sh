#!/usr/bin/env bash
# Session 36, call 2 (one H200): the CUDA build's cbt_tests_cuda whole (the kernels changed for
# LayerNorm/GroupNorm parameter gradients, sums to a shape, transposes; GELU fusion), then the
# kernel profile of ViT and ConvNeXt again (s36_profile.sh's second half, 30 kernels of cbtrain).
#   OUT=... bash s36_call2.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 420 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt | head -20
export PYTHON=/opt/torch/.venv/bin/python CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
bash bench/profile_gpu.sh $OUT/prof ${MODELS:-vit,convnext} fp32 > $OUT/prof.txt 2>&1
M=${MODELS:-vit,convnext}
for m in ${M//,/ }; do
  for side in cbtrain torch; do
    echo "== $m $side"
    $PYTHON - $OUT/prof/${m}_fp32.$side.json $side <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["steps"]
print(f"total {d['us_per_step']:.0f} us/step, {d['launches_per_step']:.0f} launches/step")
if sys.argv[2] == "cbtrain":
    for n, v in sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:30]:
        print(f"{v['us']/s:8.1f} {v['launches']/s:5.1f}  {n[:110]}")
PY
  done
done
rm -rf $OUT/prof/models $OUT/prof/*.ncu.csv
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
