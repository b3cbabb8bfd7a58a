#!/usr/bin/env bash
# Session 26 call 7: the default alpha capped at 0.4. The whole CUDA suite first, then ResNet-20
# with 3 learners fixed and the new default (0.4), seed 1, as the driver runs it (cosine over 15
# epochs), for the 14 s the device time left allows. Results are written as they come.
set -uo pipefail
R=$OUT; cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=ON bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1
echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$PWD/.device/onnx/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "CUDA suite rc $? after $((SECONDS-T0)) s"; grep -E "^\[  (PASSED|FAILED) |SKIPPED \] [0-9]" $R/tests.txt
rm -rf $R/check
for k in 3; do
  timeout 14 ./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --batch-size 32 --learners $k \
    --epochs 15 --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA --metrics $R/k$k.jsonl > $R/k$k.log 2>&1
  echo "k=$k rc $? after $((SECONDS-T0)) s: $(grep -o 'alpha [0-9.]*' $R/k$k.log | head -1)"
  grep -o '"epoch": [0-9]*\|"test_accuracy": [0-9.]*\|"elapsed_s": [0-9.]*' $R/k$k.jsonl | paste - - - | head -8
done
xz -9 $R/tests.txt
