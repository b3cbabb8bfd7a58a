#!/usr/bin/env bash
# Session 12, two H200s: the direct kernels' per-device opt-in to 96 KB of shared memory
# (c4a83a1). Build, the whole CUDA suite (both GPUs: the two-GPU tests run), cbtrain bench on
# GPU 0 alone, GPU 1 alone and both; then the opt-in put back as it was (once per process,
# optin_revert.py), rebuilt, the new test and the same benches again.
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
T1=$SECONDS
timeout 240 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $R/tests.txt | head
grep -E "DirectKernels|TwoGpus" $R/tests.txt | head
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
benches() {  # tag
  for m in "$R/models/resnet32.onnx" models/lenet5/lenet5.ts17.onnx; do
    for where in "--device cuda:0" "--device cuda:1" "--device cuda --gpus 0,1"; do
      echo -n "$1 $(basename $m) $where: "
      timeout 90 ./build-gpu/tools/cbtrain bench $m $where -b 32 -k 8 --json 2>/dev/null | tail -1 | grep -o '"images_per_sec": [0-9.]*'
    done
  done
}
benches fixed | tee $R/bench.txt
python3 .device/session/optin_revert.py
T2=$SECONDS
ninja -C build-gpu tests/cbt_tests_cuda tools/cbtrain > $R/rebuild.txt 2>&1; echo "rebuild rc $? after $((SECONDS-T2)) s"
timeout 60 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='DirectKernels.*' > $R/test_before.txt 2>&1
echo "DirectKernels test with the opt-in once per process: rc $?"; grep -E "Failure|OK \]|FAILED \]" $R/test_before.txt | head -5
benches once | tee -a $R/bench.txt
rm -rf $R/models
