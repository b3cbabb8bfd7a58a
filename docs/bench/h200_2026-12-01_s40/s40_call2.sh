#!/usr/bin/env bash
# Session 40, call 2 (one H200): where ResNet-20's first epoch goes, op by op (CBT_LOG_START=1
# now also totals each op type's first runs) and search by search (CBT_LOG_CONV_ALGOS=1: each
# engine search's phases), bf16 and float32 cold with the tuner's learners; bf16 with cuDNN's
# legacy heuristics instead of measuring (--cudnn-algos heuristic); bf16 with every module loaded
# at start (CUDA_MODULE_LOADING=EAGER), for what lazy loading costs the first epoch.
#   OUT=... bash s40_call2.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
export CBT_DATA=$PWD/.device/data CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
bash scripts/unpack_carried_data.sh $CBT_DATA
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res
run() {  # name, flags...
  local name=$1; shift
  CBT_LOG_START=1 timeout 120 $C $M --device cuda --batch-size 32 --epochs 2 --lr 0.05 --lr-schedule cosine --seed 1 \
    --data $CBT_DATA --progress off "$@" > $OUT/res/$name.log 2>&1
  echo "== $name (rc $?)"; grep -E "^autotune: chose|^epoch [0-9]+:|^start:" $OUT/res/$name.log | sed 's/, first runs of/\n  first runs of/g'
}
CBT_LOG_CONV_ALGOS=1 run bf16_cold_log --precision bf16 --learners auto
grep "cbtrain conv engines:" $OUT/res/bf16_cold_log.log | sed -E 's/.*cbtrain conv engines: ([a-z-]+( bf16-nhwc)? x[0-9]+ image=\([0-9,]+\) filter=\([0-9,]+\) s=[0-9]).*searched in (.*)\)$/\1 \3/' | head -40
CBT_LOG_CONV_ALGOS=1 run fp32_cold_log --precision fp32 --learners auto
grep -c "cbtrain conv" $OUT/res/fp32_cold_log.log
run bf16_heuristic --precision bf16 --learners auto --cudnn-algos heuristic
CUDA_MODULE_LOADING=EAGER run bf16_eager --precision bf16 --learners auto
echo "== after $((SECONDS-T0)) s"
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
xz -9 $OUT/build.txt
