#!/usr/bin/env bash
# Session 14 call 1: build; ResNet-20 to 91% (batch 32, lr 0.05 cosine over 15 epochs) with
# fixed K=14 over a grid of SMA's alpha and central momentum, and --learners auto at three
# tuner thresholds. Results print as they come.
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
show() {
  $PY - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(sys.argv[1].split('/')[-1], {k: j.get(k) for k in ('reached','epochs_to_target','seconds_to_target','autotune_seconds','learners_chosen','error')}, flush=True)
PY
}
tta() {  # name target epochs seed K tag extra...
  local n=$1 t=$2 e=$3 s=$4 k=$5 tag=$6; shift 6
  timeout 45 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/$n/$n.ts17.onnx \
    --name $n --batch 32 --learners $k --epochs $e --lr 0.05 --schedule cosine --target $t --seed $s \
    --data $CBT_DATA --stop-at-target --timeout 40 --out $R/res/${n}_${tag}_s$s.json --logs $R/logs/$tag -- "$@" > /dev/null 2>&1
  show $R/res/${n}_${tag}_s$s.json
}
grid() {  # seed
  tta resnet20 0.91 15 $1 14 k14_def
  tta resnet20 0.91 15 $1 14 k14_m05 --sma-momentum 0.5
  tta resnet20 0.91 15 $1 14 k14_m0 --sma-momentum 0
  tta resnet20 0.91 15 $1 14 k14_a15 --alpha 0.15
  tta resnet20 0.91 15 $1 14 k14_a15_m05 --alpha 0.15 --sma-momentum 0.5
  tta resnet20 0.91 15 $1 14 k14_a30_m05 --alpha 0.3 --sma-momentum 0.5
  tta resnet20 0.91 15 $1 14 k14_a30_m0 --alpha 0.3 --sma-momentum 0
  tta resnet20 0.91 15 $1 14 k14_m07 --sma-momentum 0.7
}
grid 1
for th in 0.3 0.6; do tta resnet20 0.91 15 1 auto auto_t$th --autotune-threshold $th; done
grid 2
for th in 0.3 0.6; do tta resnet20 0.91 15 2 auto auto_t$th --autotune-threshold $th; done
grep -h "autotune" $R/logs/auto_t0.3/*.log | head -30
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
