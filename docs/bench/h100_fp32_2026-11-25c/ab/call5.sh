#!/usr/bin/env bash
# session-local: build, GPU tests (with CBT_DATA), time to accuracy with fixed K against auto
set -u
OUT=$1
export NCCL_NVLS_ENABLE=0 CBT_LIB_DIR=$PWD/.device/onnx/usr/lib/x86_64-linux-gnu CBT_DATA=$PWD/.device/data CBT_PYTHON=python3
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
LD="$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$CBT_LIB_DIR"
PY=python3; python3 -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python
t0=$SECONDS
bash scripts/gpu_check.sh $OUT/gc build || { tail -50 $OUT/gc/build.log; exit 1; }
echo "built $((SECONDS-t0)) s"
W=/tmp/bw; rm -rf $W; mkdir -p $W/models $W/res $W/logs
LD_LIBRARY_PATH=$LD ./build-gpu/tests/cbt_tests_cuda > $W/gpu_tests.log 2>&1
grep -E "^\[  (PASSED|FAILED) |FAILED|SKIPPED \]|tests? ran" $W/gpu_tests.log | head -20
echo "tests $((SECONDS-t0)) s"
$PY bench/models.py --out $W/models --models resnet20 > $W/export.log 2>&1
cp models/lenet5/lenet5.ts17.onnx $W/models/lenet5.onnx
run() {  # model k epochs target seed
  LD_LIBRARY_PATH=$LD timeout 120 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain \
    --model $W/models/$1.onnx --name $1 --batch 32 --learners $2 --epochs $3 --lr 0.05 --schedule cosine \
    --target $4 --seed $5 --data $CBT_DATA --out $W/res/tta_$1_k$2_s$5.json --logs $W/logs/$1_k$2_s$5 -- --precision fp32 2>&1 | tail -1
}
for s in 1 2; do for k in 4 8 16; do run lenet5 $k 30 0.90 $s; done; done
echo "lenet $((SECONDS-t0)) s"
for s in 1 2; do for k in 4 8 16; do run resnet20 $k 15 0.91 $s; done; done
echo "done $((SECONDS-t0)) s"
cp $W/gpu_tests.log $W/res/
tar czf $OUT/r.tgz -C $W res logs
