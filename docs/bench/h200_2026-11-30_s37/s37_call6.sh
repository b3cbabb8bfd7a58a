#!/usr/bin/env bash
# Session 37, call 6 (one H200): where a training step's GPU time goes in Swin and, after the session's changes, EfficientNet (models of
# models/architectures.py, batch 32, float32), cbtrain (one learner, Nsight Compute) against
# PyTorch eager (torch.profiler): bench/profile_gpu.sh, then each side's 25 longest kernels.
#   OUT=... bash s37_call6.sh [MODELS]     # default swin,efficientnet
set -uo pipefail
OUT=${OUT:?}
MODELS=${1:-swin,efficientnet}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
export PYTHON=/opt/torch/.venv/bin/python CBT_LIB_DIR=$PWD/.device/onnx/usr/lib/x86_64-linux-gnu
export CUDA_DEVICE_MAX_CONNECTIONS=32
bash bench/profile_gpu.sh $OUT/prof $MODELS fp32 2>&1 | grep -v '^ *%' | tail -60
for m in ${MODELS//,/ }; do
  for side in cbtrain torch; do
    echo "== $m $side: longest kernels (µs per step, launches per step)"
    $PYTHON - $OUT/prof/${m}_fp32.$side.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["steps"]
rows = sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:30]
print(f"total {d['us_per_step']:.0f} us/step, {d['launches_per_step']:.0f} launches/step")
for n, v in rows:
    print(f"{v['us']/s:8.1f} {v['launches']/s:5.1f}  {n[:150]}")
PY
  done
done > $OUT/longest.txt 2>&1
grep -A1 '^==' $OUT/longest.txt
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
tar czf $OUT/prof.tgz --exclude='*.csv' --exclude='*.onnx' -C $OUT prof && rm -rf $OUT/prof
