#!/usr/bin/env bash
# Session 39, call 1 (one H200): cbt_tests_cuda whole at 6301e2b, the first GPU run of the
# thirty-eighth session's last three CUDA refactors (word_factor/with_move_word for strided
# copies and Roll, ew::lanes_reduce in the warp attention, sum_to_c_kernel relu-only), then
# cbtrain's Swin, ViT and ResNet-32 at batch 32 and 16 learners against call 7 of session 38.
#   OUT=... bash s39_call1.sh
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
grep -E "Roll|Transpose|SoftmaxAttention/warp|Gemm/(relu_)?bias" $OUT/cuda_tests.txt | grep -cE "  OK " | sed 's/^/strided, Roll, warp attention and Gemm bias cases passed: /'
for m in swin vit; do
  f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
  echo "== $m"; timeout 60 ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k 16 --warmup 10 --steps 30 2>&1 | tail -1
done
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
