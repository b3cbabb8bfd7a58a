#!/usr/bin/env bash
# Session 31, call 3 (one H200): the whole test suite in a CUDA build after the session's new
# ops (their CUDA kernels against the CPU's in cbt_tests_cuda), and the new cases by name.
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
if [ ! -e /usr/share/datasets/fashion-mnist ]; then
  mkdir -p /usr/share/datasets 2>/dev/null && ln -s $CBT_DATA /usr/share/datasets/fashion-mnist 2>/dev/null &&
    echo "linked /usr/share/datasets/fashion-mnist" || echo "cannot link /usr/share/datasets/fashion-mnist"
fi
echo "== ctest (CUDA build) from $((SECONDS-T0)) s"
timeout 400 ctest --test-dir build-gpu -j 6 --timeout 300 > $OUT/ctest.txt 2>&1
echo "ctest rc $? after $((SECONDS-T0)) s"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\(Skipped\)|Not Run" $OUT/ctest.txt | head -30
cp build-gpu/Testing/Temporary/LastTest.log $OUT/LastTest.log 2>/dev/null
echo "== the new ops' CUDA cases"
./build-gpu/tests/cbt_tests_cuda --gtest_filter='Cases/CudaVsCpu.*' 2>&1 |
  grep -E "(Elu|Selu|Softplus|Softsign|HardSigmoid|HardSwish|Exp|Log|Abs|Reciprocal|Max|Min|PRelu|Greater|Less|Not|And|Or|Xor|OrEqual|ReduceMax|ReduceMin|Tile|GlobalMaxPool)_" |
  grep -E "OK|FAILED" > $OUT/new_cases.txt
echo "$(grep -c OK $OUT/new_cases.txt) OK, $(grep -c FAILED $OUT/new_cases.txt) FAILED"; grep FAILED $OUT/new_cases.txt | head
echo "done after $((SECONDS-T0)) s"
tar czf $OUT/logs.tgz -C $OUT ctest.txt LastTest.log build.txt new_cases.txt && rm -f $OUT/ctest.txt $OUT/LastTest.log $OUT/build.txt
