#!/usr/bin/env bash
# Session 34 (one H200, after a CUDA build in ./build-gpu): why SeqNet's learners scale less than
# PyTorch's streams at batch 64. cbtrain K=4 under SMA and SSGD, with CUDA graphs on and off;
# four independent cbtrain processes of one learner at once (no averaging between them); the
# same for batch 32.   OUT=... bash s34_rnn_scaling.sh
set -uo pipefail
OUT=${OUT:?}
PY=/opt/torch/.venv/bin/python
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CUDA_DEVICE_MAX_CONNECTIONS=32
[ -f $OUT/seqnet.onnx ] || $PY bench/models.py --out $OUT --models seqnet > $OUT/export.txt 2>&1
bench() { ./build-gpu/tools/cbtrain bench $OUT/seqnet.onnx --device cuda "$@" 2>&1 | grep -E "images/s" | tail -1; }
for b in 64 32; do
  echo "== batch $b"
  echo "K=1: $(bench --batch-size $b --learners 1)"
  echo "K=4 sma: $(bench --batch-size $b --learners 4)"
  echo "K=4 ssgd: $(bench --batch-size $b --learners 4 --algorithm ssgd)"
  echo "K=4 sma graphs off: $(bench --batch-size $b --learners 4 --cuda-graphs off)"
  for i in 1 2 3 4; do bench --batch-size $b --learners 1 --warmup 20 --steps 400 > $OUT/solo_b${b}_$i.txt & done
  wait
  echo "4 processes of K=1 at once:"; cat $OUT/solo_b${b}_*.txt
done
