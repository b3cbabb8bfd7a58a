#!/usr/bin/env bash
# session-local: the Identity-form ResNet-20 on the GPU after the untie fix; fixed K vs auto
set -u
OUT=$1
export CBT_LIB_DIR=$PWD/.device/onnx/usr/lib/x86_64-linux-gnu CBT_DATA=$PWD/.device/data
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
LD="$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$CBT_LIB_DIR"
PY=python3; python3 -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python
t0=$SECONDS
bash scripts/gpu_check.sh $OUT/gc build > /dev/null || { tail -50 $OUT/gc/build.log; exit 1; }
echo "built $((SECONDS-t0)) s"
W=/tmp/bw; rm -rf $W; mkdir -p $W/res $W/logs
LD_LIBRARY_PATH=$LD ./build-gpu/tests/cbt_tests_cuda --gtest_filter='Untie*:GpuRuntime.*' 2>&1 | tail -2
run() {  # k seed
  LD_LIBRARY_PATH=$LD timeout 100 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain \
    --model .device/m/resnet20_identity.onnx --name resnet20 --batch 32 --learners $1 --epochs 15 --lr 0.05 --schedule cosine \
    --target 0.91 --seed $2 --data $CBT_DATA --out $W/res/tta_resnet20_k$1_s$2.json --logs $W/logs/resnet20_k$1_s$2 -- --precision fp32 2>&1 | tail -1
}
for s in 1 2; do for k in auto 4 8 16; do run $k $s; done; done
echo "done $((SECONDS-t0)) s"
tar czf $OUT/r.tgz -C $W res logs
