#!/usr/bin/env bash
# Session 16 call 2 (4a3b562): the whole CUDA suite; then ResNet-20 and LeNet-5 for 3 epochs
# with --learners auto, this build ("new": evaluation's convolutions timed alone) against
# 6291317's ops/cuda, tests/cuda and runtime/trainer.cpp built alongside ("old"), alternating;
# wall time of the command and the searches of evaluation's batch-500 convolutions
# (CBT_LOG_CONV_ALGOS=1).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $? after $((SECONDS-T2)) s" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "EvaluationTimes|TwoAlike" $R/tests.txt | head
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
  local cp=$(grep -E "image=\(500," $R/logs/$tag.err | grep -o " x[0-9]* " | sort | uniq -c | tr '\n' ' ')
  echo "$tag rc $rc wall $wall s; eval searches $ev ms (copies:$cp); training searches $tr ms; $(grep -E '^epoch 3:' $R/logs/$tag.out | grep -o 'test accuracy [0-9.]*%')"
}
for rep in 1 2; do
  for arm in new old; do run $arm resnet20 3; done
  for arm in old new; do run $arm lenet5 3; done
done
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
