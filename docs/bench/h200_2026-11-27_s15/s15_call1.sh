#!/usr/bin/env bash
# Session 15 call 1: BatchNorm's one-launch kernels. The whole CUDA suite, then
# `cbtrain bench` at batch 32: this build with the one-launch kernels ("on"), the same build
# with CBT_BN_ONE_LAUNCH=off ("off"), and d43ef3e's ops/cuda and tests/cuda built alongside
# ("old"), alternating.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $? after $((SECONDS-T2)) s" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "OneLaunch|BatchNorm" $R/tests.txt | grep -E "OK|FAILED|SKIPPED" | head -20
mkdir -p $R/models
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1
cp models/resnet20/resnet20.ts17.onnx $R/models/resnet20.onnx
wait $BUILD; cat $R/old_build_rc.txt
one() {  # arm model k
  local bin=./build-gpu/tools/cbtrain env=; [ $1 = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  [ $1 = off ] && env="CBT_BN_ONE_LAUNCH=off"
  env $env timeout 60 $bin bench $R/models/$2.onnx --device cuda --batch-size 32 --learners $3 --steps 150 --warmup 20 --json > $R/bench_$1_$2_$3_$rep.txt 2>&1
  echo "$1 $2 K=$3 rep $rep: $(grep -o '"images_per_sec": [0-9.]*' $R/bench_$1_$2_$3_$rep.txt | tail -1)"
}
for rep in 1 2; do
  for a in on old off; do one $a resnet32 16; done
  for a in old on; do one $a resnet20 16; done
  [ $rep = 1 ] && for a in on old; do one $a resnet32 1; done
done
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
