#!/usr/bin/env bash
# Session 40, call 1 (one H200): cbt_tests_cuda whole (the thirty-ninth session's unrun test
# refactor run_cuda_node.h, the bf16 helpers moved beside their float twins, BatchNorm's finishing
# condition); then where ResNet-20's first epoch goes, with CBT_LOG_START=1 (the kernels' first
# runs, convolution searches and plans, graph captures), bf16 and float32: cold, then with the
# choices file of the cold run, then with that and 8 learners fixed (no tuner), then graphs off.
#   OUT=... bash s40_call1.sh
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
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt > $OUT/cuda_tests_summary.txt
head -8 $OUT/cuda_tests_summary.txt
grep -B3 -A8 "Failure" $OUT/cuda_tests.txt | head -40
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res
run() {  # name, flags...
  local name=$1; shift
  CBT_LOG_START=1 timeout 120 $C $M --device cuda --batch-size 32 --epochs 2 --lr 0.05 --lr-schedule cosine --seed 1 \
    --data $CBT_DATA --progress off "$@" > $OUT/res/$name.log 2>&1
  echo "== $name (rc $?)"; grep -E "^autotune: [0-9]+ learner|^autotune: chose|^epoch [0-9]+:|^start:" $OUT/res/$name.log
}
for p in bf16 fp32; do
  run ${p}_cold --precision $p --learners auto --conv-choices $OUT/res/choices_$p.txt
  run ${p}_warm --precision $p --learners auto --conv-choices $OUT/res/choices_$p.txt
  run ${p}_warm_k8 --precision $p --learners 8 --conv-choices $OUT/res/choices_$p.txt
  run ${p}_warm_k8_nographs --precision $p --learners 8 --conv-choices $OUT/res/choices_$p.txt --cuda-graphs off
  run ${p}_cold_k1 --precision $p --learners 1
done
echo "== after $((SECONDS-T0)) s"
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
xz -9 $OUT/build.txt
