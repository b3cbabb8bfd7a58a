#!/usr/bin/env bash
# Session 9: the multi-GPU driver's skipped cbtrain ResNet-20 run on 2 GPUs, then the report of all.
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data
MG_BUDGET_S=310 CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 300 bash bench/run_multi_gpu.sh .device/mg_s9 full 2 export,tta_resnet > $OUT/mg2.log 2>&1
echo "tta_resnet rc $? after $((SECONDS-T0)) s"
MG_BUDGET_S=60 CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 60 bash bench/run_multi_gpu.sh .device/mg_s9 full 1,2 report >> $OUT/mg2.log 2>&1
grep -E "reached|skip" $OUT/mg2.log | tail; rm -rf .device/mg_s9/models
tar czf $OUT/mg.tgz .device/mg_s9
