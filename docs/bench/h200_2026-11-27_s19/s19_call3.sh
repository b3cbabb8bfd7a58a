#!/usr/bin/env bash
# Session 19 call 3: the direct kernels' copies into shared memory with two divisions a thread
# instead of two an element, and the tiled backward filter's groups added by every thread of
# the block ("new", this tree) against 97d4b42's ops/cuda ("old") built alongside. The CUDA
# suite on the new build; Nsight Compute's instruction counts and durations of the 16-channel
# forward and backward filter on both (as in call 2); the searches' log of ResNet-32; then
# `cbtrain bench` at batch 32 with 16 learners, new against old, alternating, two rounds.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $? after $((SECONDS-T2)) s" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "DirectConv|DirectWgrad|DirectKernels|SavedConv|CudaConvAlgos" $R/tests.txt | grep -E "OK|FAILED" | head -20
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
model() { case $1 in resnet32) echo $R/models/resnet32.onnx ;; *) echo models/$1/$1.ts17.onnx ;; esac; }
wait $BUILD; cat $R/old_build_rc.txt
M=$R/models/resnet32.onnx
for arm in new old; do
  bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  CBT_LOG_CONV_ALGOS=1 timeout 60 $bin bench $M --device cuda --batch-size 32 --learners 16 --steps 20 --warmup 5 \
    --conv-choices $R/choices_$arm.txt > /dev/null 2> $R/logs/resnet32_${arm}_algos.err
  echo "resnet32 $arm direct: $(grep 'conv direct' $R/logs/resnet32_${arm}_algos.err | grep -o '[a-z-]* x[0-9]* in=([0-9,]*) M=[0-9]*\|best [^ ]* [0-9.]*ms\|engine [0-9.]*ms: [a-zA-Z]*' | paste -sd' ' | sed 's/ \(forward\|backward\)/\n  \1/g')"
  for k in "direct_conv_kernel 1" "wgrad_tile_kernel 0"; do
    set -- $k
    CBT_CONV_CONCURRENCY=8 timeout 100 ncu --profile-from-start off --clock-control none -k "regex:$1" --launch-skip $2 \
      --launch-count 1 --section SpeedOfLight --section LaunchStats --section InstructionStats --section Occupancy \
      $bin bench $M --device cuda --batch-size 32 --learners 1 --conv-choices $R/choices_$arm.txt \
      --cuda-graphs off --warmup 5 --steps 10 > $R/ncu_${arm}_$1.txt 2>&1
    echo "  ncu $arm $1: $(grep -E '^  void|Duration|Executed Instructions  |Registers Per' $R/ncu_${arm}_$1.txt | grep -o 'kernel<[0-9, ]*>\|[0-9.,]*$' | paste -sd' ')"
  done
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
