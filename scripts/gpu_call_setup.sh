# The common start of a GPU session's call scripts (docs/bench/<session>/sN_callM.sh), sourced
# with OUT set to the call's output folder, on the GPU machine in the repository root:
#   - unpacks the carried ONNX libraries (.device/onnx.txz, when present; the session's carry as
#     the GPU records describe it) and builds ./build-gpu (scripts/gpu_check.sh OUT/check build,
#     its output in OUT/build.txt);
#   - exports what cbtrain, its tests and the PyTorch drivers need: LD_LIBRARY_PATH (cuDNN, NCCL
#     and cuBLAS of the PyTorch environment, the ONNX libraries), CBT_DATA (the carried
#     Fashion-MNIST, unpacked), CBT_LIB_DIR, CBT_PYTHON, NCCL_NVLS_ENABLE=0 and
#     CUDA_DEVICE_MAX_CONNECTIONS=32;
#   - sets T0 (the start, in SECONDS), PY (PyTorch's interpreter), C (cbtrain) and M (the shipped
#     ResNet-20);
#   - defines cuda_tests: runs cbt_tests_cuda whole (5 minutes at most), keeps its summary in
#     OUT/cuda_tests_summary.txt and prints the summary and any failure.
#
#   OUT=... ; source scripts/gpu_call_setup.sh
: "${OUT:?set OUT to the output folder of the call before sourcing gpu_call_setup.sh}"
T0=$SECONDS
[ -f .device/onnx.txz ] && tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh "$OUT/check" build > "$OUT/build.txt" 2>&1
echo "build rc $? after $((SECONDS - T0)) s"
NV=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$NV/cudnn/lib:$NV/nccl/lib:$NV/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
export CBT_DATA=$PWD/.device/data CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
bash scripts/unpack_carried_data.sh "$CBT_DATA"
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx

cuda_tests() {
  timeout 300 ./build-gpu/tests/cbt_tests_cuda > "$OUT/cuda_tests.txt" 2>&1
  echo "cbt_tests_cuda rc $? after $((SECONDS - T0)) s"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" "$OUT/cuda_tests.txt" > "$OUT/cuda_tests_summary.txt"
  head -8 "$OUT/cuda_tests_summary.txt"
  grep -B3 -A8 "Failure" "$OUT/cuda_tests.txt" | head -40
}
