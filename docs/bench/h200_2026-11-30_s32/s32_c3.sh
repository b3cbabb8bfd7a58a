#!/usr/bin/env bash
# Session 32, call 3 (one H200): a CUDA build, then cbt_tests_cuda whole (the new kernels of
# InstanceNormalization, GroupNormalization, ArgMax/ArgMin, Resize, Sin, Cos, Floor, Ceil, Round,
# Sign, Mish, Celu, ThresholdedRelu, Sum, Mean, CumSum, Trilu, DepthToSpace and SpaceToDepth against the CPU's among
# its cases), the new cases listed by name, and the fixtures' CLI tests on the GPU.
set -uo pipefail
OUT=${OUT:?}
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
grep -E "/(InstanceNormalization|GroupNormalization|ArgMax|ArgMin|Resize|Sin|Cos|Floor|Ceil|Round|Sign|Mish|Celu|ThresholdedRelu|Sum|Mean|CumSum|Trilu|DepthToSpace|SpaceToDepth)_" $OUT/cuda_tests.txt | grep -E "OK|FAILED" > $OUT/new_cases.txt
echo "$(grep -c OK $OUT/new_cases.txt) OK, $(grep -c FAILED $OUT/new_cases.txt) FAILED"; grep FAILED $OUT/new_cases.txt | head
echo "== ops"; ./build-gpu/tools/cbtrain ops | grep -cE "^\| [A-Z]" ; ./build-gpu/tools/cbtrain ops | grep -E "Resize|GroupNorm|InstanceNorm|ArgM|Sin|Cos|Floor|Ceil|Round|Sign|Mish|Celu|Thresholded|Sum|Mean|CumSum|Trilu|DepthToSpace|SpaceToDepth"
echo "== the fixture models on the GPU"
for m in norms resize unary; do
  ./build-gpu/tools/cbtrain infer tests/onnx_import/data/$m.onnx --device cuda --input tests/onnx_import/data/$m.input.npy --output $OUT/$m.gpu.npy 2>&1 | tail -1
  python3 -c "import numpy as np,sys; a=np.load('$OUT/$m.gpu.npy'); b=np.load('tests/onnx_import/data/$m.output.npy'); print('$m max |gpu - onnxruntime|', float(np.abs(a-b).max()))"
done
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/cuda_tests.txt $OUT/build.txt
