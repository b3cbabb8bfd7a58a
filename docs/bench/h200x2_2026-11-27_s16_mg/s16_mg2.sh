#!/usr/bin/env bash
# Session 16, second two-GPU call on the same machine: the first call's output folder carried
# back (.device/session/mg_prev), and the same driver command again for what its budget
# skipped: `MG_SEEDS="1 2 3" bash bench/run_multi_gpu.sh OUT full 2 tta_resnet,report` (runs
# whose results are there are not run again).
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
cp -r .device/session/mg_prev/r/mg $R/mg
echo "commit $(cat .device/session/commit.txt)" > $R/commit2.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data
T3=$SECONDS
MG_SEEDS="1 2 3" MG_BUDGET_S=${MG_BUDGET_S:-480} CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 510 bash bench/run_multi_gpu.sh $R/mg full 2 tta_resnet,report > $R/mg2.log 2>&1
echo "multi-GPU bench rc $? after $((SECONDS-T3)) s"
grep -E "reached|skip|done in" $R/mg2.log | tail -24
[ -f $R/mg/MULTI_GPU.md ] && grep -E "^\|" $R/mg/MULTI_GPU.md | head -40
rm -rf $R/mg/models
tar czf $OUT/r.tgz -C $OUT r
