#!/usr/bin/env bash
# session-local: why a resnet20 exported alone tests at 10% on the GPU
set -u
OUT=$1
export CBT_LIB_DIR=$PWD/.device/onnx/usr/lib/x86_64-linux-gnu CBT_DATA=$PWD/.device/data
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
LD="$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$CBT_LIB_DIR"
PY=python3; python3 -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python
t0=$SECONDS
bash scripts/gpu_check.sh $OUT/gc build > /dev/null || { tail -50 $OUT/gc/build.log; exit 1; }
echo "built $((SECONDS-t0)) s"
mkdir -p $OUT/alone $OUT/set
$PY bench/models.py --out $OUT/alone --models resnet20 | tail -2
$PY bench/models.py --out $OUT/set --models lenet5,resnet32,resnet20 | tail -2
rm -f $OUT/set/lenet5.onnx $OUT/set/resnet32.onnx
C="env LD_LIBRARY_PATH=$LD ./build-gpu/tools/cbtrain"
for m in alone set; do
  echo "== $m cuda K=8"; $C $OUT/$m/resnet20.onnx --data $CBT_DATA --device cuda --learners 8 --epochs 1 --lr 0.05 --log-every 0 --seed 1 2>&1 | grep -E "shared|epoch 1:"
  echo "== $m cuda K=1"; $C $OUT/$m/resnet20.onnx --data $CBT_DATA --device cuda --learners 1 --epochs 1 --max-steps 300 --lr 0.05 --log-every 0 --seed 1 2>&1 | grep -E "epoch 1:"
  echo "== $m cuda K=8 graphs off"; $C $OUT/$m/resnet20.onnx --data $CBT_DATA --device cuda --learners 8 --epochs 1 --cuda-graphs off --lr 0.05 --log-every 0 --seed 1 2>&1 | grep -E "epoch 1:"
  echo "== $m cpu K=2"; $C $OUT/$m/resnet20.onnx --data $CBT_DATA --device cpu --learners 2 --epochs 1 --max-steps 150 --lr 0.05 --log-every 0 --seed 1 2>&1 | grep -E "epoch 1:"
done
echo "done $((SECONDS-t0)) s"
