#!/usr/bin/env bash
# Session 11 call 6: ResNet-20 to 91% against the number of learners, fixed K (not auto),
# the benchmark's settings (batch 32, lr 0.05 cosine over 15 epochs), stopped at the target.
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
for ks in "6 1" "8 1" "10 1" "14 1" "4 1" "12 1" "16 1" "8 2" "14 2" "6 2" "10 2"; do
  set -- $ks
  timeout 80 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/resnet20/resnet20.ts17.onnx \
    --name resnet20 --batch 32 --learners $1 --epochs 15 --lr 0.05 --schedule cosine --target 0.91 --seed $2 \
    --data $CBT_DATA --stop-at-target --timeout 75 --out $R/res/k$1_s$2.json --logs $R/logs > /dev/null 2>&1
  echo "k $1 seed $2 done after $((SECONDS-T1)) s"
  [ $((SECONDS-T1)) -gt 420 ] && break
done
$PY - <<PY
import json, glob
for f in sorted(glob.glob('$R/res/*.json')):
    j = json.load(open(f))
    acc = j.get('accuracy') or []
    print(f.split('/')[-1], 'reached', j.get('reached'), 'epoch', j.get('epochs_to_target'), 's', j.get('seconds_to_target'),
          'ips', [round(h.get('images_per_sec', 0)) for h in j.get('history', [])][:2], 'acc', acc[:9])
PY
tar czf $OUT/r.tgz -C $OUT r
