#!/usr/bin/env bash
# Session 12 call 6: the final code on one H100: build, the whole CUDA suite, LeNet-5 and
# ResNet-20 to their targets with --learners auto (seed 1, stopped at the target).
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R/res $R/logs
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
timeout 220 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $R/tests.txt | head
timeout 60 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/lenet5/lenet5.ts17.onnx \
  --name lenet5 --batch 32 --learners auto --epochs 30 --lr 0.05 --schedule cosine --target 0.90 --seed 1 \
  --data $CBT_DATA --stop-at-target --timeout 55 --out $R/res/lenet5_s1.json --logs $R/logs > /dev/null 2>&1
timeout 90 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/resnet20/resnet20.ts17.onnx \
  --name resnet20 --batch 32 --learners auto --epochs 15 --lr 0.05 --schedule cosine --target 0.91 --seed 1 \
  --data $CBT_DATA --stop-at-target --timeout 85 --out $R/res/resnet20_s1.json --logs $R/logs > /dev/null 2>&1
grep -h "autotune: built\|autotune: chose" $R/logs/*.log
$PY - <<PY
import json, glob
for f in sorted(glob.glob('$R/res/*.json')):
    j = json.load(open(f))
    print(f.split('/')[-1], {k: j.get(k) for k in ('reached','epochs_to_target','seconds_to_target','autotune_seconds')})
PY
