#!/usr/bin/env bash
# Session 38, call 7 (one H200): cbt_tests_cuda whole after the block attention kernels read their
# bias offset once a matrix and index in 32 bits, then ViT, the decoder (their attention runs
# the block kernels) and Swin side by side with PyTorch at batch 32, 16 graphs on 16 streams against 16
# learners.
#   OUT=... bash s38_call7.sh
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
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt > $OUT/cuda_tests_summary.txt
head -14 $OUT/cuda_tests_summary.txt
grep -E "SoftmaxAttention|LayerNorm|RMSNorm" $OUT/cuda_tests.txt | grep -cE "  OK " | sed 's/^/attention and norm cases passed: /'
PY=/opt/torch/.venv/bin/python
mkdir -p $OUT/tp
for m in vit rowgpt swin; do
  f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 16 --windows 3 \
    --out $OUT/tp/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  timeout 60 ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k 16 --warmup 10 --steps 30 2>&1 | tail -1
done
tar czf $OUT/results.tgz -C $OUT tp && rm -rf $OUT/tp
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
