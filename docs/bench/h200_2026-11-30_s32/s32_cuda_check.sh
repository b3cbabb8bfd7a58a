#!/usr/bin/env bash
# Session 32 (one H200): a CUDA build, then cbt_tests_cuda whole (the CUDA kernels against the
# CPU's and the GPU runtime tests), its cases of the ops named by OPS (an extended regex of op
# names, the first argument) listed by name, and the fixtures of tests/onnx_import/data run with
# `cbtrain infer --device cuda` against onnxruntime's outputs saved beside them.
#   OUT=... bash docs/bench/h200_2026-11-30_s32/s32_cuda_check.sh 'Resize|Sum'
set -uo pipefail
OUT=${OUT:?}
OPS=${1:?usage: s32_cuda_check.sh OPS_REGEX}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
echo "== cbt_tests_cuda from $((SECONDS-T0)) s"
timeout 420 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " $OUT/cuda_tests.txt | head -20
grep -E "/($OPS)_" $OUT/cuda_tests.txt | grep -E "OK|FAILED" > $OUT/new_cases.txt
echo "$(grep -c OK $OUT/new_cases.txt) OK, $(grep -c FAILED $OUT/new_cases.txt) FAILED"; grep FAILED $OUT/new_cases.txt | head
echo "== ops"; ./build-gpu/tools/cbtrain ops | grep -cE "^\| [A-Z]"; ./build-gpu/tools/cbtrain ops | grep -E "^\| ($OPS) "
echo "== the fixture models on the GPU"
for m in norms resize unary upsample7 upsample9 resize10 reductions13 reductions18; do
  ./build-gpu/tools/cbtrain infer tests/onnx_import/data/$m.onnx --device cuda --input tests/onnx_import/data/$m.input.npy --output $OUT/$m.gpu.npy 2>&1 | tail -1
  python3 -c "import numpy as np,sys; a=np.load('$OUT/$m.gpu.npy'); b=np.load('tests/onnx_import/data/$m.output.npy'); print('$m max |gpu - onnxruntime|', float(np.abs(a-b).max()))"
done
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/cuda_tests.txt $OUT/build.txt
