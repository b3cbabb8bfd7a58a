#!/usr/bin/env bash
# Session 14: one part of the driver's full run at the final code:
#   STAGES=... bash .device/session/s14_drv.sh   (build, then bench/run_gpu.sh OUT full STAGES)
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS; [ -n "${FRESH:-}" ] && rm -rf build-gpu/bench_out  # FRESH=1: an empty output folder
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data
T1=$SECONDS
CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout ${DRV_LIMIT:-520} bash bench/run_gpu.sh build-gpu/bench_out full $STAGES > $R/run.log 2>&1
echo "stages $STAGES rc $? after $((SECONDS-T1)) s"
cat build-gpu/bench_out/logs/stages.txt 2>/dev/null
mkdir -p $R/out && cp -r build-gpu/bench_out/results build-gpu/bench_out/env $R/out/ 2>/dev/null
mkdir -p $R/out/logs && cp build-gpu/bench_out/logs/*.log build-gpu/bench_out/logs/stages.txt $R/out/logs/ 2>/dev/null
cp -r build-gpu/bench_out/logs/cbtrain $R/out/logs/ 2>/dev/null
[ -f build-gpu/bench_out/BENCHMARKS.md ] && cp -r build-gpu/bench_out/BENCHMARKS.md build-gpu/bench_out/plots $R/out/
ls build-gpu/bench_out build-gpu/bench_out/logs | head -40
grep -E "^\| (lenet5|resnet|LeNet|ResNet)" build-gpu/bench_out/BENCHMARKS.md 2>/dev/null | head -30
tar czf $OUT/r.tgz -C $OUT r
