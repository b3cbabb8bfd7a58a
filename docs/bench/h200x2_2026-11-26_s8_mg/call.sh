#!/usr/bin/env bash
# Session 8, two GPUs: build, the CUDA suite (the two-GPU test runs here), then the
# multi-GPU benchmark (N=2, quick): time to accuracy of cbtrain (the tuner now chooses at
# most 16 learners in all) against PyTorch DDP; tarred into $OUT/r.tgz.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
nvidia-smi -L > $R/gpus.txt 2>&1
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
( export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
  T1=$SECONDS
  timeout 100 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='-HostSignal.*' > $R/gpu_tests.log 2>&1
  echo "gpu tests rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |TwoGpus.*(OK|FAILED)" $R/gpu_tests.log | head -10 )
export CBT_DATA=$PWD/.device/data
T3=$SECONDS
MG_BUDGET_S=${MG_BUDGET_S:-400} CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 430 bash bench/run_multi_gpu.sh $R/mg quick 2 export,tta_lenet,tta_resnet,report > $R/mg.log 2>&1
echo "multi-GPU bench rc $? after $((SECONDS-T3)) s"
grep -E "img/s|reached|skip|chose" $R/mg.log | tail -20
[ -f $R/mg/MULTI_GPU.md ] && grep -E "^\|" $R/mg/MULTI_GPU.md | head -30
rm -rf $R/mg/models
tar czf $OUT/r.tgz -C $OUT r
