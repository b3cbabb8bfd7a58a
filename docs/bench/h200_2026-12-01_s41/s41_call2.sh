#!/usr/bin/env bash
# Session 41, call 2 (one H200): what the central model's BatchNorm statistics cost under SMA.
# cbtrain bf16 trains ResNet-20 (batch 32, 8 learners, lr 0.05) and writes the model; then
# bench/bn_recalibration.py evaluates it with the statistics as written (the mean of the
# learners' running statistics) and recomputed over 4, 16 and 64 training batches of 256.
# Three regimes: a 3- and a 4-epoch cosine (lr near 0 at the end) and 2 epochs at a constant lr.
#   OUT=... bash s41_call2.sh
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
for s in 1 2 3; do
  for run in cos3 cos4 const2; do
    case $run in
      cos3) a="--epochs 3 --lr-schedule cosine" ;;
      cos4) a="--epochs 4 --lr-schedule cosine" ;;
      const2) a="--epochs 2 --lr-schedule constant" ;;
    esac
    timeout 120 $C $M --device cuda --batch-size 32 $a --lr 0.05 --seed $s --data $CBT_DATA --progress off \
      --precision bf16 --learners 8 -o $OUT/res/${run}_s$s.onnx > $OUT/res/logs/${run}_s$s.log 2>&1
    echo "$run seed $s (rc $?): $(grep -E '^final test accuracy' $OUT/res/logs/${run}_s$s.log)"
    $PY bench/bn_recalibration.py --model resnet20 --onnx $OUT/res/${run}_s$s.onnx --batches 4 16 64 \
      --data $CBT_DATA --out $OUT/res/recal_${run}_s$s.json 2>&1 | tail -1
  done
done
rm -f $OUT/res/*.onnx
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
