#!/usr/bin/env bash
# Session 16 call 3 (a5c3a1b): the whole CUDA suite; the convolution searches of this build
# ("new": results compared on the device, inputs made there) against 4a3b562's ops/cuda and
# tests/cuda built alongside ("old"), ResNet-20 and LeNet-5 for 3 epochs, alternating; then
# time to accuracy with --learners auto (3 seeds each, stop at the target) with the tuner's
# windows of 0.05 s (the default) and 0.025 s (--autotune-window).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $? after $((SECONDS-T2)) s" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "CopyTiming|EvaluationTimes" $R/tests.txt | grep -E "OK|FAILED" | head
wait $BUILD; cat $R/old_build_rc.txt
run() {  # arm model epochs
  local arm=$1 m=$2 e=$3 bin=./build-gpu/tools/cbtrain tag=$1_$2_$rep
  [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  local t0=$(date +%s.%N)
  CBT_LOG_CONV_ALGOS=1 timeout 60 $bin models/$m/$m.ts17.onnx --device cuda --batch-size 32 --learners auto \
    --epochs $e --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA --progress off > $R/logs/$tag.out 2> $R/logs/$tag.err
  local rc=$? wall=$(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.2f", b - a}')
  local ev=$(grep -E "image=\(500,|in=\(500," $R/logs/$tag.err | grep -o "searched in [0-9.]*" | awk '{s+=$3} END {printf "%.0f", s}')
  local tr=$(grep -vE "image=\(500,|in=\(500," $R/logs/$tag.err | grep -o "searched in [0-9.]*" | awk '{s+=$3} END {printf "%.0f", s}')
  echo "$tag rc $rc wall $wall s; eval searches $ev ms; training searches $tr ms; $(grep -E 'autotune: 1 learner' $R/logs/$tag.out | grep -o '[0-9.]* s)'); $(grep -E '^epoch 3:' $R/logs/$tag.out | grep -o 'test accuracy [0-9.]*%')"
}
for rep in 1 2; do
  for arm in new old; do run $arm resnet20 3; done
  for arm in old new; do run $arm lenet5 3; done
done
for s in 1 2 3; do
  tta resnet20 0.91 15 $s auto w05 --autotune-window 0.05
  tta resnet20 0.91 15 $s auto w025 --autotune-window 0.025
done
for s in 1 2 3; do
  tta lenet5 0.90 30 $s auto w05 --autotune-window 0.05
  tta lenet5 0.90 30 $s auto w025 --autotune-window 0.025
done
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
