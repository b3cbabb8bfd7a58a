#!/usr/bin/env bash
# Session 9: the multi-GPU driver at the final code on nvidia-h200-x2, 1 and 2 GPUs, every stage.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
nvidia-smi > $R/nvidia-smi.txt 2>&1
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data
T3=$SECONDS
MG_BUDGET_S=${MG_BUDGET_S:-470} CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 500 bash bench/run_multi_gpu.sh $R/mg full 1,2 export,tput,tta_lenet,tta_resnet,report > $R/mg.log 2>&1
echo "multi-GPU bench rc $? after $((SECONDS-T3)) s"
grep -E "img/s|reached|skip|chose" $R/mg.log | tail -20
[ -f $R/mg/MULTI_GPU.md ] && grep -E "^\|" $R/mg/MULTI_GPU.md | head -40
rm -rf $R/mg/models
tar czf $OUT/r.tgz -C $OUT r
