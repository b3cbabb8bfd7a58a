#!/usr/bin/env bash
# Session 12: two GPUs (nvidia-h200-x2) at the one-trainer learner search: build, the runtime's
# GPU tests (the two-GPU one included), then the multi-GPU driver's time to accuracy on 2 GPUs
# with the search counted: `bench/run_multi_gpu.sh OUT full 2 export,tta_lenet,tta_resnet,report`.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
nvidia-smi > $R/nvidia-smi.txt 2>&1
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export CBT_DATA=$PWD/.device/data
( export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  NCCL_NVLS_ENABLE=0 timeout 90 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='GpuRuntime.*' > $R/tests.txt 2>&1
  echo "GpuRuntime tests rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $R/tests.txt )
T3=$SECONDS
MG_BUDGET_S=${MG_BUDGET_S:-450} CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 480 bash bench/run_multi_gpu.sh $R/mg full 2 export,tta_lenet,tta_resnet,report > $R/mg.log 2>&1
echo "multi-GPU bench rc $? after $((SECONDS-T3)) s"
grep -E "reached|skip|chose|autotune: chose" $R/mg.log | tail -20
[ -f $R/mg/MULTI_GPU.md ] && grep -E "^\|" $R/mg/MULTI_GPU.md | head -40
rm -rf $R/mg/models
tar czf $OUT/r.tgz -C $OUT r
