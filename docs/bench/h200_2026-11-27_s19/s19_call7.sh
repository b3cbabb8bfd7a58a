#!/usr/bin/env bash
# Session 19 call 7: the review's tidy-up of the direct kernels' copy loops (the loop bound read
# from the digits, no second counter; one copy_or_zero<N> for 1 and 4 floats). The CUDA suite,
# then `cbtrain bench` at batch 32 with 16 learners against b36aaca's ops/cuda built alongside,
# alternating, two rounds: the same speed is expected.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
(cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
BUILD=$!
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -8
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
model() { case $1 in resnet32) echo $R/models/resnet32.onnx ;; *) echo models/$1/$1.ts17.onnx ;; esac; }
wait $BUILD; cat $R/old_build_rc.txt
for rep in 1 2; do
  for arm in new old; do
    bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
    for m in resnet32 lenet5; do
      steps=150; [ $m = lenet5 ] && steps=1500
      timeout 90 $bin bench $(model $m) --device cuda --batch-size 32 --learners 16 --steps $steps --warmup 20 --json \
        > $R/logs/${m}_${arm}_$rep.out 2> $R/logs/${m}_${arm}_$rep.err
      echo "$m $arm rep $rep rc $?: $(tail -1 $R/logs/${m}_${arm}_$rep.out | grep -o '"images_per_sec":[^,]*')"
    done
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models $R/check $R/check_old; xz -9 $R/logs/*.err $R/tests.txt; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
