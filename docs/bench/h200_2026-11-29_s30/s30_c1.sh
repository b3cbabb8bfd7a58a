#!/usr/bin/env bash
# Session 30, call 1 (one H200): the whole test suite in a CUDA build at this session's code
# (CI builds the CUDA backend but has no GPU to run it), and the out-of-memory messages on a GPU.
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0
# Two command-line tests read Debian's Fashion-MNIST path on purpose; give it this machine's copy.
if [ ! -e /usr/share/datasets/fashion-mnist ]; then
  mkdir -p /usr/share/datasets 2>/dev/null && ln -s $CBT_DATA /usr/share/datasets/fashion-mnist 2>/dev/null &&
    echo "linked /usr/share/datasets/fashion-mnist" || echo "cannot link /usr/share/datasets/fashion-mnist"
fi
C=./build-gpu/tools/cbtrain
echo "== out of memory on the GPU (exit code, last line)"
for b in 100000000 100000000000; do
  $C bench models/resnet20/resnet20.ts17.onnx --device cuda --batch-size $b --warmup 1 --steps 1 > $OUT/oom_bench_$b.txt 2>&1
  echo "bench --batch-size $b: rc $? | $(tail -1 $OUT/oom_bench_$b.txt)"
done
$C models/resnet20/resnet20.ts17.onnx --device cuda --data $CBT_DATA --batch-size 100000000000 --max-steps 1 > $OUT/oom_train.txt 2>&1
echo "train --batch-size 1e11: rc $? | $(tail -1 $OUT/oom_train.txt)"
echo "== ctest (CUDA build) from $((SECONDS-T0)) s"
timeout $((570 - SECONDS + T0)) ctest --test-dir build-gpu -j 6 --timeout 400 > $OUT/ctest.txt 2>&1
echo "ctest rc $? after $((SECONDS-T0)) s"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\(Skipped\)|Not Run" $OUT/ctest.txt | head -30
cp build-gpu/Testing/Temporary/LastTest.log $OUT/LastTest.log 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT ctest.txt LastTest.log build.txt oom_bench_100000000.txt oom_bench_100000000000.txt oom_train.txt 2>/dev/null
rm -f $OUT/LastTest.log $OUT/oom_*.txt $OUT/build.txt
