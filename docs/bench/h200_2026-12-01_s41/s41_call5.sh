#!/usr/bin/env bash
# Session 41, call 5 (one H200): what SMA's own settings do for ResNet-20's accuracy at epoch 3
# (the benchmark's 4-epoch cosine, lr 0.05, batch 32, bf16, the tuner's learners), seeds 1-3:
# the central momentum (--sma-momentum, default 0.9), the correction (--alpha, default
# min(0.4, 1.9 / k) = 0.2375 at 8), the learners' momentum (--momentum 0.9), a warm-up, and label
# smoothing, which the PyTorch side then runs too (its driver has the flag).
#   OUT=... bash s41_call5.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
export CBT_DATA=$PWD/.device/data CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
bash scripts/unpack_carried_data.sh $CBT_DATA
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res/logs
declare -A VARIANT=([base]="" [zmom0.8]="--sma-momentum 0.8" [zmom0.95]="--sma-momentum 0.95" [alpha0.15]="--alpha 0.15"
  [alpha0.35]="--alpha 0.35" [mom0.8]="--momentum 0.8" [warm100]="--warmup-steps 100" [ls0.1]="--label-smoothing 0.1")
for v in base zmom0.8 zmom0.95 alpha0.15 alpha0.35 mom0.8 warm100 ls0.1; do
  for s in 1 2 3; do
    $PY bench/cbtrain_runs.py tta --cbtrain $C --model $M --name resnet20 --batch 32 --learners auto \
      --epochs 4 --lr 0.05 --schedule cosine --target 0.91 --seed $s --data $CBT_DATA \
      --out $OUT/res/tta_${v}_s$s.json --logs $OUT/res/logs/$v -- --precision bf16 ${VARIANT[$v]} > /dev/null 2>&1
  done
  echo "$v after $((SECONDS-T0)) s"
done
for s in 1 2 3; do
  $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
    --max-epochs 4 --seed $s --data $CBT_DATA --init-onnx $M --precision fp32 --warm-libraries off --label-smoothing 0.1 \
    --out $OUT/res/tta_torch_ls0.1_s$s.json > $OUT/res/logs/torch_ls0.1_s$s.log 2>&1 || tail -2 $OUT/res/logs/torch_ls0.1_s$s.log
done
$PY - $OUT/res <<'PYEOF'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tta_*.json"))):
    d = json.load(open(f))
    acc = ", ".join(f"{a:.4f}" for a in d.get("accuracy", []))
    el = ", ".join(f"{e:.2f}" for e in d.get("elapsed_s", []))
    print(f"{os.path.basename(f)[:-5]:28s} epoch {d.get('epochs_to_target')} at {d.get('seconds_to_target')} s; acc [{acc}]; clock [{el}]")
PYEOF
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
