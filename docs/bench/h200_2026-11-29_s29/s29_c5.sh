#!/usr/bin/env bash
# Session 29, call 5 (one H200, the device time left): the command-line tests in a CUDA build at
# the final code (their README op-table check and GPU flag tests run only there).
OUT=${OUT:?}
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0
bash scripts/unpack_carried_data.sh $CBT_DATA  # the images travel xz-compressed
T0=$SECONDS
extra=(); [ -d "$ONNX/include/x86_64-linux-gnu" ] && extra+=("-DCMAKE_CXX_FLAGS=-isystem $ONNX/include/x86_64-linux-gnu")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCBT_WITH_CUDA=ON -DCBT_BUILD_TESTS=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCBT_CUDNN_ROOT=$V/cudnn -DCBT_NCCL_ROOT=$V/nccl \
  -DONNX_DIR=$ONNX/lib/x86_64-linux-gnu/cmake/ONNX -DCMAKE_PREFIX_PATH=$ONNX "${extra[@]}" > $OUT/configure.log 2>&1
cmake --build build-gpu -j 16 --target cbtrain cbt_tests_tools > $OUT/build.log 2>&1
echo "build rc $? after $((SECONDS-T0)) s"; grep -E " error" $OUT/build.log | head
timeout 200 ./build-gpu/tests/cbt_tests_tools > $OUT/tools_tests.txt 2>&1
echo "tools tests rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $OUT/tools_tests.txt | head -20
xz -9 $OUT/tools_tests.txt
