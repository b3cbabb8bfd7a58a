#!/usr/bin/env bash
# Session 12 call 1: build, the whole CUDA suite (first run of 9df85f7's refactor and of the
# one-trainer learner search), then LeNet-5 and ResNet-20 to their targets with --learners auto.
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
T1=$SECONDS
timeout 220 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
grep -A8 "TheTunerTimes" $R/tests.txt | head -12
for s in 1 2; do
  timeout 60 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/lenet5/lenet5.ts17.onnx \
    --name lenet5 --batch 32 --learners auto --epochs 30 --lr 0.05 --schedule cosine --target 0.90 --seed $s \
    --data $CBT_DATA --stop-at-target --timeout 55 --out $R/res/lenet5_s$s.json --logs $R/logs > /dev/null 2>&1
  timeout 90 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/resnet20/resnet20.ts17.onnx \
    --name resnet20 --batch 32 --learners auto --epochs 15 --lr 0.05 --schedule cosine --target 0.91 --seed $s \
    --data $CBT_DATA --stop-at-target --timeout 85 --out $R/res/resnet20_s$s.json --logs $R/logs > /dev/null 2>&1
done
grep -h "autotune" $R/logs/*.log | head -80
$PY - <<PY
import json, glob
for f in sorted(glob.glob('$R/res/*.json')):
    j = json.load(open(f))
    print(f.split('/')[-1], {k: j.get(k) for k in ('reached','epochs_to_target','seconds_to_target','autotune_seconds','learners')})
PY
tar czf $OUT/r.tgz -C $OUT r
