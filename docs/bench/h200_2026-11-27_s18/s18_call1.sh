#!/usr/bin/env bash
# Session 18 call 1: the whole CUDA suite at this build (1493408, the seventeenth session's review
# commit, never run on a GPU, plus the direct kernels' loads as asynchronous copies); the
# convolution searches' log of ResNet-32, ResNet-20 and LeNet-5 (fp32, 16 learners) for this
# build ("new") and 1493408's ops/cuda ("old"), whose direct lines give each kernel's time a
# copy; then `cbtrain bench` at batch 32 with 16 learners, new against old, alternating.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $? after $((SECONDS-T2)) s" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 240 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "DirectConv|DirectWgrad|DirectKernels|SavedConv|CudaConvAlgos" $R/tests.txt | grep -E "OK|FAILED" | head -20
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
model() { case $1 in resnet32) echo $R/models/resnet32.onnx ;; *) echo models/$1/$1.ts17.onnx ;; esac; }
wait $BUILD; cat $R/old_build_rc.txt
for arm in new old; do
  bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  for m in resnet32 resnet20 lenet5; do
    CBT_LOG_CONV_ALGOS=1 timeout 60 $bin bench $(model $m) --device cuda --batch-size 32 --learners 16 --steps 20 \
      --warmup 5 --json > /dev/null 2> $R/logs/${m}_${arm}_algos.err
    echo "$m $arm direct: $(grep 'conv direct' $R/logs/${m}_${arm}_algos.err | grep -o '[a-z-]* x[0-9]* in=([0-9,]*) M=[0-9]*\|best [^ ]* [0-9.]*ms\|engine [0-9.]*ms: [a-zA-Z]*' | paste -sd' ' | sed 's/ \(forward\|backward\)/\n  \1/g')"
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
rm -rf $R/models; xz -9 $R/logs/*.err; tar czf $OUT/r.tgz -C $OUT r
