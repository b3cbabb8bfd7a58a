#!/usr/bin/env bash
# Session 28, call 5 (the machine of calls 1-4, kept warm): the whole CUDA test suite on two
# GPUs, so that the three tests that need two run too (one GPU skips them).
OUT=${OUT:?}
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0
bash scripts/unpack_carried_data.sh $CBT_DATA  # the images travel xz-compressed
T0=$SECONDS
timeout 450 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $OUT/cuda_tests.txt | head -20
xz -9 $OUT/cuda_tests.txt
