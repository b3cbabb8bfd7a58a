#!/usr/bin/env bash
# Session 37, call 3 (one H200): cbt_tests_cuda whole (the max-pool backward in bands and RMSNorm
# among its cases), then GoogLeNet and the decoder side by side with PyTorch at batch 32 (8 and
# 16 graphs on as many streams against 8 and 16 learners), and their kernel profiles again.
#   OUT=... bash s37_call3.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt | head -12
grep -E "RMSNorm|MaxPool/bands|1d_row_beyond" $OUT/cuda_tests.txt | grep -E "  OK |FAILED  " | head
PY=/opt/torch/.venv/bin/python
echo "== throughput from $((SECONDS-T0)) s"
mkdir -p $OUT/tp
for m in googlenet rowgpt; do
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 8,16 --windows 3 \
    --out $OUT/tp/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 8 16; do
    f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
    ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
done
echo "== profiles from $((SECONDS-T0)) s"
export PYTHON=$PY CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
bash bench/profile_gpu.sh $OUT/prof googlenet,rowgpt fp32 2>&1 | grep -E "^\| |µs of kernels" | head -60
tar czf $OUT/results.tgz --exclude='*.csv' --exclude='*.onnx' -C $OUT tp prof && rm -rf $OUT/tp $OUT/prof
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
