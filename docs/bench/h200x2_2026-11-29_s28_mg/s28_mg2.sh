#!/usr/bin/env bash
# Session 28, call 2 (the machine of call 1, kept warm): the same driver command into the same
# folder runs what call 1's budget skipped (ResNet-20), then throughput on 1 and 2 GPUs.
set -uo pipefail
OUT=${OUT:?}
R=$PWD/build-gpu/s28; T0=$SECONDS
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data CBT_COMMIT=$(cat .device/session/commit.txt) CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
MG_SEEDS="1 2 3" MG_BUDGET_S=330 timeout 350 bash bench/run_multi_gpu.sh $R/mg full 2 tta_resnet,report > $R/mg2.log 2>&1
echo "multi-GPU tta rc $? after $((SECONDS-T0)) s"
T3=$SECONDS
MG_BUDGET_S=$((575 - T3)) timeout $((590 - T3)) bash bench/run_multi_gpu.sh $R/mg full 1,2 tput,report > $R/mg3.log 2>&1
echo "multi-GPU tput rc $? after $((SECONDS-T3)) s"
grep -hE "^---|reached|autotune: chose" $R/mg2.log $R/mg3.log | tail -30
[ -f $R/mg/MULTI_GPU.md ] && grep -E "^\|" $R/mg/MULTI_GPU.md | head -50
tar czf $OUT/r.tgz --exclude=models --exclude=check -C $R/.. s28
echo "total $((SECONDS-T0)) s"
