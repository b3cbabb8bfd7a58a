#!/usr/bin/env bash
# Session 9: one part of the driver's full run on nvidia-h100-x1 at the final code:
#   STAGES=... bash .device/session/s9_drv.sh   (build, then bench/run_gpu.sh OUT full STAGES)
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data
T1=$SECONDS
CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout ${DRV_LIMIT:-520} bash bench/run_gpu.sh bench/out full $STAGES > $R/run.log 2>&1
echo "stages $STAGES rc $? after $((SECONDS-T1)) s"
cat bench/out/logs/stages.txt 2>/dev/null
mkdir -p $R/out && cp -r bench/out/results bench/out/env $R/out/ 2>/dev/null
mkdir -p $R/out/logs && cp bench/out/logs/*.log bench/out/logs/stages.txt $R/out/logs/ 2>/dev/null
cp -r bench/out/logs/cbtrain $R/out/logs/ 2>/dev/null
[ -f bench/out/BENCHMARKS.md ] && cp -r bench/out/BENCHMARKS.md bench/out/plots $R/out/
ls bench/out bench/out/logs | head -40
grep -E "^\| (lenet5|resnet|LeNet|ResNet)" bench/out/BENCHMARKS.md 2>/dev/null | head -30
tar czf $OUT/r.tgz -C $OUT r
