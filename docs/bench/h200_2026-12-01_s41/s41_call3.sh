#!/usr/bin/env bash
# Session 41, call 3 (one H200): call 2 at the point the benchmark needs, epoch 3 of the 4-epoch
# cosine (lr 0.05, batch 32, 8 learners, bf16). cbtrain trains the 4 epochs with a checkpoint each
# epoch (it keeps the last two); the epoch-4 checkpoint is removed and a resume with --max-steps at
# epoch 3's round count writes the central model of epoch 3 without training further; then
# bench/bn_recalibration.py evaluates it with its statistics as written and recomputed.
#   OUT=... bash s41_call3.sh
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
for s in 1 2 3 4 5 6; do
  D=$OUT/ckpt_s$s
  a="--device cuda --batch-size 32 --epochs 4 --lr-schedule cosine --lr 0.05 --seed $s --data $CBT_DATA --progress off --precision bf16 --learners 8 --checkpoint-dir $D --checkpoint-every 1e"
  timeout 120 $C $M $a --metrics $OUT/res/logs/e4_s$s.jsonl > $OUT/res/logs/e4_s$s.log 2>&1
  echo "seed $s (rc $?): $(grep -E '^epoch 3:' $OUT/res/logs/e4_s$s.log)"
  ls $D > $OUT/res/logs/ckpt_s$s.txt
  rm -f $(ls -d $D/ckpt-* | sort | tail -1)
  timeout 120 $C $M $a --resume --force-resume --max-steps 702 -o $OUT/res/e3_s$s.onnx > $OUT/res/logs/e3_s$s.log 2>&1
  echo "  resumed (rc $?): $(grep -E '^final test accuracy' $OUT/res/logs/e3_s$s.log)"
  $PY bench/bn_recalibration.py --model resnet20 --onnx $OUT/res/e3_s$s.onnx --batches 2 4 8 16 \
    --data $CBT_DATA --out $OUT/res/recal_e3_s$s.json 2>&1 | tail -1
  rm -rf $D
done
rm -f $OUT/res/*.onnx
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
