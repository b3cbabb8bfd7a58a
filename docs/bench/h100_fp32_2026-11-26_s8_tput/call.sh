#!/usr/bin/env bash
# Session 8 call 12: the final commit: the driver's throughput stages at every batch
# (8, 16, 32, 64) and its report, one call.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data
T1=$SECONDS
CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 470 bash bench/run_gpu.sh bench/out full export,torch_tput,cbt_tput,report > $R/run.log 2>&1
echo "stages rc $? after $((SECONDS-T1)) s"
cat bench/out/logs/stages.txt 2>/dev/null
mkdir -p $R/out && cp -r bench/out/results bench/out/env $R/out/ 2>/dev/null
mkdir -p $R/out/logs && cp bench/out/logs/*.log bench/out/logs/stages.txt $R/out/logs/ 2>/dev/null
[ -f bench/out/BENCHMARKS.md ] && cp -r bench/out/BENCHMARKS.md bench/out/plots $R/out/
ls bench/out
grep -E "^\| (lenet5|resnet32|LeNet|ResNet)" bench/out/BENCHMARKS.md 2>/dev/null | head -20
tar czf $OUT/r.tgz -C $OUT r
