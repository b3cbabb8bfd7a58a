#!/usr/bin/env bash
# Session 11 call 10: the final commit (a zero-initialised array instead of a loop nest in
# wgrad_tile_kernel): build, the whole CUDA suite, ResNet-32 b=32 K=16 and LeNet-5 K=16 once.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
timeout 90 ./build-gpu/tools/cbtrain bench $R/models/resnet32.onnx --device cuda -b 32 -k 16 --json 2>/dev/null | tail -1 | cut -c1-400
timeout 90 ./build-gpu/tools/cbtrain bench models/lenet5/lenet5.ts17.onnx --device cuda -b 32 -k 16 --json 2>/dev/null | tail -1 | cut -c1-400
rm -rf $R/models
