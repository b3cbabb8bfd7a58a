#!/usr/bin/env bash
# Session 16: two GPUs (nvidia-h200-x2) at a5c3a1b: build; the CUDA tests that need two GPUs
# and the runtime's GPU tests; then the multi-GPU driver's time to accuracy on 2 GPUs, seeds
# 1-3 (`MG_SEEDS="1 2 3" bash bench/run_multi_gpu.sh OUT full 2 export,tta_lenet,tta_resnet,report`).
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
  NCCL_NVLS_ENABLE=0 timeout 100 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='GpuRuntime.*:DirectKernels.ConfigurationsBeyond48KB*' > $R/tests.txt 2>&1
  echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|TwoAlike|TwoGpus|Beyond48" $R/tests.txt | head -20 )
T3=$SECONDS
MG_SEEDS="1 2 3" MG_BUDGET_S=${MG_BUDGET_S:-440} CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 470 bash bench/run_multi_gpu.sh $R/mg full 2 export,tta_lenet,tta_resnet,report > $R/mg.log 2>&1
echo "multi-GPU bench rc $? after $((SECONDS-T3)) s"
grep -E "reached|skip|autotune: chose" $R/mg.log | tail -24
[ -f $R/mg/MULTI_GPU.md ] && grep -E "^\|" $R/mg/MULTI_GPU.md | head -40
rm -rf $R/mg/models
tar czf $OUT/r.tgz -C $OUT r
