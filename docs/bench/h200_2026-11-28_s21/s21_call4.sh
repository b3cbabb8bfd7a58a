#!/usr/bin/env bash
# Session 21 call 4: the direct forward kernel (stride-1 forward and backward data, and the
# stride-2 phases) may take 2 or 4 images of at most 256 outputs a channel a block, copying its
# filters once for them ("new", this tree) against fd6ea27's ops/cuda ("old") built alongside.
# The CUDA suite on the new build; the searches' log of ResNet-32 with 16 learners on both; then
# `cbtrain bench` at batch 32 with 16 learners, new against old, alternating, two rounds.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
(cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
grep -E "DirectConv\.|DirectKernelsMatch|ConvChoices" $R/tests.txt | grep -E "OK|FAILED" | head -12
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
model() { case $1 in resnet32) echo $R/models/resnet32.onnx ;; *) echo models/$1/$1.ts17.onnx ;; esac; }
M=$R/models/resnet32.onnx
wait $BUILD; cat $R/old_build_rc.txt
for arm in new old; do
  bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  CBT_LOG_CONV_ALGOS=1 timeout 60 $bin bench $M --device cuda --batch-size 32 --learners 16 --steps 20 \
    --warmup 5 --conv-choices $R/choices_$arm.txt > /dev/null 2> $R/logs/resnet32_${arm}_algos.err
  echo "== $arm"
  grep -E 'conv direct: (forward|backward-data)' $R/logs/resnet32_${arm}_algos.err | grep -o '[a-z-]* x8 in=([0-9,]*) M=[0-9]*\|best [^ ]* [0-9.]*ms\|engine [0-9.]*ms: [a-zA-Z]*\|searched in [0-9.]* ms' | paste - - - -
done
for rep in 1 2; do
  for arm in new old; do
    bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
    for m in resnet32 resnet20 lenet5; do
      steps=150; [ $m = lenet5 ] && steps=1500
      timeout 90 $bin bench $(model $m) --device cuda --batch-size 32 --learners 16 --steps $steps --warmup 20 --json \
        > $R/logs/${m}_${arm}_$rep.out 2> $R/logs/${m}_${arm}_$rep.err
      echo "$m $arm rep $rep rc $?: $(tail -1 $R/logs/${m}_${arm}_$rep.out | grep -o '"images_per_sec":[^,]*')"
    done
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models $R/check $R/check_old; xz -9 $R/logs/*.err $R/tests.txt; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
