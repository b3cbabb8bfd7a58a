#!/usr/bin/env bash
# Session 18 call 6: the 3x3 forward/backward-data tiles of 32 sums a thread (8x4, 16x2) held to
# 64 registers (__launch_bounds__(256, 4): 4 blocks a multiprocessor instead of 3; ptxas spills
# 20 bytes) against 68d5d69's ops/cuda ("old"): the CUDA suite, the searches' direct lines of
# ResNet-32, and `cbtrain bench` at batch 32 with 16 learners, alternating, two rounds.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
(cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 120 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -8
grep -E "DirectConv\.Every|DirectWgrad\.Every|DirectKernelsMatch" $R/tests.txt | grep -E "OK|FAILED"
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
model() { case $1 in resnet32) echo $R/models/resnet32.onnx ;; *) echo models/$1/$1.ts17.onnx ;; esac; }
binary() { [ $1 = old ] && echo /tmp/old/build-gpu/tools/cbtrain || echo ./build-gpu/tools/cbtrain; }
wait $BUILD; cat $R/old_build_rc.txt
for arm in new old; do
  CBT_LOG_CONV_ALGOS=1 timeout 40 $(binary $arm) bench $(model resnet32) --device cuda --batch-size 32 --learners 16 \
    --steps 20 --warmup 5 --json > /dev/null 2> $R/logs/resnet32_${arm}_algos.err
  echo "resnet32 $arm direct: $(grep 'conv direct' $R/logs/resnet32_${arm}_algos.err | grep -o '[a-z-]* x[0-9]* in=([0-9,]*) M=[0-9]*\|best [^ ]* [0-9.]*ms\|engine [0-9.]*ms: [a-zA-Z]*' | paste -sd' ' | sed 's/ \(forward\|backward\)/\n  \1/g')"
done
for rep in 1 2; do
  for arm in new old; do
    for m in resnet32 resnet20 lenet5; do
      steps=150; [ $m = lenet5 ] && steps=1500
      timeout 60 $(binary $arm) bench $(model $m) --device cuda --batch-size 32 --learners 16 --steps $steps --warmup 20 --json \
        > $R/logs/${m}_${arm}_$rep.out 2> $R/logs/${m}_${arm}_$rep.err
      echo "$m $arm rep $rep rc $?: $(tail -1 $R/logs/${m}_${arm}_$rep.out | grep -o '"images_per_sec":[^,]*')"
    done
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models; xz -9 $R/logs/*.err; tar czf $OUT/r.tgz -C $OUT r
