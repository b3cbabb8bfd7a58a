#!/usr/bin/env bash
# Session 13 call 1: build, the whole CUDA suite, then LeNet-5 and ResNet-20 to their targets
# with --learners auto tuned while training (3 seeds) and searched before training (1 seed).
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
timeout 230 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
tta() {  # model name target epochs seed tag extra...
  local m=$1 n=$2 t=$3 e=$4 s=$5 tag=$6; shift 6
  timeout 95 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/$n/$n.ts17.onnx \
    --name $n --batch 32 --learners auto --epochs $e --lr 0.05 --schedule cosine --target $t --seed $s \
    --data $CBT_DATA --stop-at-target --timeout 90 --out $R/res/${n}_${tag}_s$s.json --logs $R/logs/$tag -- "$@" > /dev/null 2>&1
}
for s in 1 2 3; do
  tta x lenet5 0.90 30 $s during
  tta x resnet20 0.91 15 $s during
done
tta x lenet5 0.90 30 1 before --autotune-when before
tta x resnet20 0.91 15 1 before --autotune-when before
grep -h "autotune\|^epoch" $R/logs/during/resnet20*s1*.log | head -40
$PY - <<PY
import json, glob
for f in sorted(glob.glob('$R/res/*.json')):
    j = json.load(open(f))
    print(f.split('/')[-1], {k: j.get(k) for k in ('reached','epochs_to_target','seconds_to_target','autotune_seconds','learners_chosen','learners_by_epoch','error')})
PY
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
