#!/usr/bin/env bash
# Session 28, call 1 (nvidia-h200-x2): build; the CUDA tests of the GPU runtime (three of them
# need two GPUs); then the multi-GPU driver's time to accuracy on 2 GPUs, seeds 1-3
# (`MG_SEEDS="1 2 3" bash bench/run_multi_gpu.sh OUT full 2 export,tta_lenet,tta_resnet,report`).
# The output folder stays on the machine (build-gpu/ is kept between calls on a machine kept
# warm) so that the next call runs what this one's budget skipped; a copy comes back as r.tgz.
set -uo pipefail
OUT=${OUT:?}
R=$PWD/build-gpu/s28; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
nvidia-smi > $R/nvidia-smi.txt 2>&1
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export CBT_DATA=$PWD/.device/data CBT_COMMIT=$(cat .device/session/commit.txt)
( export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  NCCL_NVLS_ENABLE=0 timeout 120 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='GpuRuntime.*:DirectKernels.ConfigurationsBeyond48KB*' > $R/tests.txt 2>&1
  echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|TwoAlike|TwoGpus|Beyond48" $R/tests.txt | head -20 )
T3=$SECONDS
MG_SEEDS="1 2 3" MG_BUDGET_S=$((540 - T3)) CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout $((570 - T3)) bash bench/run_multi_gpu.sh $R/mg full 2 export,tta_lenet,tta_resnet,report > $R/mg1.log 2>&1
echo "multi-GPU bench rc $? after $((SECONDS-T3)) s"
grep -E "^---|reached|autotune: chose" $R/mg1.log | tail -30
[ -f $R/mg/MULTI_GPU.md ] && grep -E "^\|" $R/mg/MULTI_GPU.md | head -40
tar czf $OUT/r.tgz --exclude=models --exclude=check -C $R/.. s28
echo "total $((SECONDS-T0)) s"
